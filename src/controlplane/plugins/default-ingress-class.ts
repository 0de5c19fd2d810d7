/**
 * DefaultIngressClass: an Ingress created without a class (and without the legacy annotation)
 * gets the default IngressClass; with several defaults the newest wins, ties broken by name.
 */
import { group, type Naming } from '../../api/naming.ts';
import type { ResourceRegistry } from '../../api/registry.ts';
import type { AdmissionPlugin } from '../admission.ts';
import type { Storage } from '../storage.ts';

/** Names compare as Go strings do (code units), whatever the host's locale. */
const byteOrder = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);

export function defaultIngressClass(registry: ResourceRegistry, storage: Storage, n: Naming): AdmissionPlugin {
  const networking = group(n, 'networking');
  const classes = registry.resource(networking, 'v1', 'ingressclasses')!;
  return {
    name: 'DefaultIngressClass',
    admit(a) {
      if (
        a.rt.group !== networking ||
        a.rt.kind !== 'Ingress' ||
        a.operation !== 'CREATE' ||
        a.subresource ||
        !a.object
      )
        return;
      a.object.spec ??= {};
      const spec = a.object.spec as { ingressClassName?: string | null };
      if (
        spec.ingressClassName != null ||
        a.object.metadata.annotations?.[n.annotations.legacyIngressClass] !== undefined
      )
        return;
      const defaults = storage
        .list(classes)
        .filter((c) => c.metadata.annotations?.[n.annotations.defaultIngressClass] === 'true')
        .sort(
          (x, y) =>
            Date.parse(y.metadata.creationTimestamp ?? '') - Date.parse(x.metadata.creationTimestamp ?? '') ||
            byteOrder(x.metadata.name ?? '', y.metadata.name ?? ''),
        );
      if (defaults.length) spec.ingressClassName = defaults[0].metadata.name;
    },
  };
}
