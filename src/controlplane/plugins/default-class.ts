/**
 * The reference's default-class admission plugins: an object created without a class (and without the legacy
 * annotation naming one) gets the default class; with several defaults the newest wins, ties broken by name.
 * DefaultIngressClass sets an Ingress's `spec.ingressClassName`, DefaultStorageClass a claim's
 * `spec.storageClassName` (an explicit empty class is a class, so it stays).
 */
import type { KubeObject } from '../../api/meta.ts';
import { group, type Naming } from '../../api/naming.ts';
import type { ResourceRegistry, ResourceType } from '../../api/registry.ts';
import type { AdmissionPlugin } from '../admission.ts';
import type { Storage } from '../storage.ts';

/** Names compare as Go strings do (code units), whatever the host's locale. */
const byteOrder = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);

interface DefaultClassRule {
  name: string;
  /** The group and kind of the objects that get a class. */
  group: string;
  kind: string;
  classes: ResourceType;
  /** The `spec` field naming the class. */
  field: string;
  /** The annotation that names a class the legacy way (the plugin leaves such objects alone). */
  legacyAnnotation: string;
  /** Annotations that mark a class as the default when `true`. */
  defaultAnnotations: readonly string[];
}

/** The default class among `classes`, or undefined when none is marked. */
export function pickDefault(classes: readonly KubeObject[], defaultAnnotations: readonly string[]): string | undefined {
  return classes
    .filter((c) => defaultAnnotations.some((a) => c.metadata.annotations?.[a] === 'true'))
    .sort(
      (x, y) =>
        Date.parse(y.metadata.creationTimestamp ?? '') - Date.parse(x.metadata.creationTimestamp ?? '') ||
        byteOrder(x.metadata.name ?? '', y.metadata.name ?? ''),
    )[0]?.metadata.name;
}

function defaultClassAdmission(storage: Storage, rule: DefaultClassRule): AdmissionPlugin {
  return {
    name: rule.name,
    admit(a) {
      if (a.rt.group !== rule.group || a.rt.kind !== rule.kind || a.operation !== 'CREATE' || a.subresource) return;
      if (!a.object) return;
      a.object.spec ??= {};
      const spec = a.object.spec as Record<string, unknown>;
      if (spec[rule.field] != null || a.object.metadata.annotations?.[rule.legacyAnnotation] !== undefined) return;
      const chosen = pickDefault(storage.list(rule.classes), rule.defaultAnnotations);
      if (chosen) spec[rule.field] = chosen;
    },
  };
}

export function defaultIngressClass(registry: ResourceRegistry, storage: Storage, n: Naming): AdmissionPlugin {
  const networking = group(n, 'networking');
  return defaultClassAdmission(storage, {
    name: 'DefaultIngressClass',
    group: networking,
    kind: 'Ingress',
    classes: registry.resource(networking, 'v1', 'ingressclasses')!,
    field: 'ingressClassName',
    legacyAnnotation: n.annotations.legacyIngressClass,
    defaultAnnotations: [n.annotations.defaultIngressClass],
  });
}

export function defaultStorageClass(registry: ResourceRegistry, storage: Storage, n: Naming): AdmissionPlugin {
  return defaultClassAdmission(storage, {
    name: 'DefaultStorageClass',
    group: '',
    kind: 'PersistentVolumeClaim',
    classes: registry.resource(group(n, 'storage'), 'v1', 'storageclasses')!,
    field: 'storageClassName',
    legacyAnnotation: n.annotations.betaStorageClass,
    defaultAnnotations: [n.annotations.defaultStorageClass, n.annotations.betaDefaultStorageClass],
  });
}
