/**
 * ControllerRef bookkeeping (the reference's `ClaimPods` / revision adoption): which pods and revisions a
 * set owns, which orphans it adopts, which of its own it releases, and which pods hold one of its pod
 * names without belonging to it.
 */

import type { Selector } from '../../src/api/labels.ts';
import type { KubeObject, OwnerReference } from '../../src/api/meta.ts';
import type { StatefulSet } from '../../src/api/types/apps.ts';
import { isMemberOf, isTerminating } from './pods.ts';

export const controllerRefOf = (obj: KubeObject): OwnerReference | undefined =>
  obj.metadata.ownerReferences?.find((r) => r.controller === true);

export interface Claimed<T extends KubeObject> {
  /** Owned now (adopted ones included). */
  owned: T[];
  adopt: T[];
  release: T[];
  /** Objects that match by name but that the set does not own (another owner, or labels that do not match). */
  foreign: T[];
}

/**
 * Sorts objects of the set's namespace. `member` says whether an object is the set's by name or kind
 * (pods: `<set>-<ordinal>`; revisions: any name).
 */
export function claim<T extends KubeObject>(
  set: StatefulSet,
  selector: Selector,
  objects: T[],
  member: (obj: T) => boolean,
): Claimed<T> {
  const out: Claimed<T> = { owned: [], adopt: [], release: [], foreign: [] };
  const deleting = Boolean(set.metadata.deletionTimestamp);
  for (const obj of objects) {
    const ref = controllerRefOf(obj);
    const isMember = member(obj);
    const matches = isMember && selector.matches(obj.metadata.labels);
    if (ref && ref.uid !== set.metadata.uid) {
      if (isMember) out.foreign.push(obj);
    } else if (ref) {
      if (matches) out.owned.push(obj);
      else if (!deleting) out.release.push(obj);
    } else if (matches && !deleting && !isTerminating(obj)) {
      out.adopt.push(obj);
      out.owned.push(obj);
    } else if (isMember) out.foreign.push(obj);
  }
  return out;
}

export const claimPods = <T extends KubeObject>(set: StatefulSet, selector: Selector, pods: T[]) =>
  claim(set, selector, pods, (p) => isMemberOf(set, p));

export const claimRevisions = <T extends KubeObject>(set: StatefulSet, selector: Selector, revisions: T[]) =>
  claim(set, selector, revisions, () => true);
