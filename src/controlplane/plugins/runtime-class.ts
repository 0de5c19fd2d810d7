/**
 * RuntimeClass admission of pod creations: the class must exist; its overhead becomes the pod's;
 * its node selector merges into the pod's (a conflict rejects the pod); its tolerations are
 * appended without duplicates (the reference's superset merge).
 */
import type { KubeObject } from '../../api/meta.ts';
import type { Naming } from '../../api/naming.ts';
import { group } from '../../api/naming.ts';
import { tryQuantity } from '../../api/quantity.ts';
import { isPodResource, type ResourceRegistry } from '../../api/registry.ts';
import type { AdmissionPlugin } from '../admission.ts';
import { forbidden } from '../errors.ts';
import type { Storage } from '../storage.ts';

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number | null;
}

/** Field-wise identity, as the reference's semantic equality: an absent string field equals `""`. */
function sameToleration(a: Toleration, b: Toleration): boolean {
  return (
    (a.key ?? '') === (b.key ?? '') &&
    (a.operator ?? '') === (b.operator ?? '') &&
    (a.value ?? '') === (b.value ?? '') &&
    (a.effect ?? '') === (b.effect ?? '') &&
    (a.tolerationSeconds ?? undefined) === (b.tolerationSeconds ?? undefined)
  );
}

/** Whether `ss` tolerates everything `t` does. */
function isSuperset(ss: Toleration, t: Toleration): boolean {
  if (sameToleration(ss, t)) return true;
  const wildcard = !ss.key && ss.operator === 'Exists';
  if ((ss.key ?? '') !== (t.key ?? '') && !wildcard) return false;
  if (ss.effect && ss.effect !== t.effect) return false;
  if (ss.effect === 'NoExecute' && ss.tolerationSeconds != null) {
    if (t.tolerationSeconds == null || t.tolerationSeconds > ss.tolerationSeconds) return false;
  }
  switch (ss.operator ?? '') {
    case 'Equal':
    case '':
      return t.operator === 'Equal' && (ss.value ?? '') === (t.value ?? '');
    case 'Exists':
      return true;
    default:
      return false;
  }
}

/** Keeps a toleration unless an earlier kept one, or a later different one, covers it. */
export function mergeTolerations(pod: Toleration[], extra: Toleration[]): Toleration[] {
  const all = [...pod, ...extra];
  const kept: Toleration[] = [];
  all.forEach((t, i) => {
    if (kept.some((k) => isSuperset(k, t))) return;
    if (all.slice(i + 1).some((later) => !sameToleration(later, t) && isSuperset(later, t))) return;
    kept.push(t);
  });
  return kept;
}

/** Semantic equality of resource lists: the same names with equal quantities (`0.5` equals `500m`). */
function sameResources(a: Record<string, string>, b: Record<string, string>): boolean {
  const names = Object.keys(a);
  if (names.length !== Object.keys(b).length) return false;
  return names.every((name) => {
    if (!(name in b)) return false;
    const x = tryQuantity(a[name]);
    const y = tryQuantity(b[name]);
    return x && y ? x.cmp(y) === 0 : a[name] === b[name];
  });
}

interface PodSpec {
  runtimeClassName?: string;
  overhead?: Record<string, string>;
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
}

export function runtimeClassAdmission(registry: ResourceRegistry, storage: Storage, n: Naming): AdmissionPlugin {
  const classes = registry.resource(group(n, 'node'), 'v1', 'runtimeclasses')!;
  const isPodCreate = (a: Parameters<NonNullable<AdmissionPlugin['admit']>>[0]) =>
    isPodResource(a.rt) && a.operation === 'CREATE' && !a.subresource && a.object !== undefined;
  const lookup = (pod: KubeObject) => {
    const name = (pod.spec as PodSpec | undefined)?.runtimeClassName;
    return name ? { name, rc: storage.get(classes, name) } : undefined;
  };
  return {
    name: 'RuntimeClass',
    admit(a) {
      if (!isPodCreate(a)) return;
      const found = lookup(a.object!);
      if (!found) return;
      const deny = (why: string) => forbidden(a.rt, a.name, why);
      if (!found.rc) throw deny(`pod rejected: RuntimeClass "${found.name}" not found`);
      a.object!.spec ??= {};
      const spec = a.object!.spec as PodSpec;
      const rc = found.rc as {
        overhead?: { podFixed?: Record<string, string> };
        scheduling?: { nodeSelector?: Record<string, string>; tolerations?: Toleration[] };
      };
      const podFixed = rc.overhead?.podFixed;
      if (podFixed) {
        if (spec.overhead && Object.keys(spec.overhead).length && !sameResources(spec.overhead, podFixed)) {
          throw deny("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
        }
        spec.overhead = { ...podFixed };
      }
      if (rc.scheduling) {
        const selector = { ...(spec.nodeSelector ?? {}) };
        for (const [k, v] of Object.entries(rc.scheduling.nodeSelector ?? {})) {
          if (k in selector && selector[k] !== v) {
            throw deny(
              `conflict: runtimeClass.scheduling.nodeSelector[${k}] = ${v}; pod.spec.nodeSelector[${k}] = ${selector[k]}`,
            );
          }
          selector[k] = v;
        }
        if (Object.keys(selector).length) spec.nodeSelector = selector;
        // As the reference: whenever the class has scheduling, the pod's own tolerations go through the merge too.
        const tolerations = mergeTolerations(spec.tolerations ?? [], rc.scheduling.tolerations ?? []);
        if (tolerations.length || spec.tolerations) spec.tolerations = tolerations;
      }
    },
    validate(a) {
      if (!isPodCreate(a)) return;
      const spec = (a.object!.spec ?? {}) as PodSpec;
      const rc = lookup(a.object!)?.rc as { overhead?: { podFixed?: Record<string, string> } } | undefined;
      const podFixed = rc?.overhead?.podFixed;
      if (podFixed && !sameResources(spec.overhead ?? {}, podFixed)) {
        throw forbidden(a.rt, a.name, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
      }
      if (!podFixed && spec.overhead) {
        throw forbidden(
          a.rt,
          a.name,
          'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead',
        );
      }
    },
  };
}
