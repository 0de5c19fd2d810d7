/**
 * The NoSchedule taints that stand for a Node's conditions, as the reference's TaintNodesByCondition admission
 * sets the first one at create and its node lifecycle controller (kube-controller-manager) keeps them in step
 * with the conditions afterwards: Ready `False` is `node.<domain>/not-ready`, Ready `Unknown` is
 * `node.<domain>/unreachable`, and each pressure condition that is `True` has a taint of its own. A cordoned node
 * (`spec.unschedulable`) has `node.<domain>/unschedulable`, as the same controller keeps it.
 */
import type { Naming } from '../api/naming.ts';
import type { Node, Taint } from '../api/types/core.ts';

/** Per condition type, the taint (by name) each status stands for. */
const CONDITION_TAINTS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  Ready: { False: 'not-ready', Unknown: 'unreachable' },
  MemoryPressure: { True: 'memory-pressure' },
  DiskPressure: { True: 'disk-pressure' },
  PIDPressure: { True: 'pid-pressure' },
  NetworkUnavailable: { True: 'network-unavailable' },
};

const taintKey = (n: Naming, name: string) => `node.${n.domain}/${name}`;

/** The taint a Node is created with, so nothing is scheduled onto it before it reports Ready. */
export const notReadyTaint = (n: Naming): Taint => ({ key: taintKey(n, 'not-ready'), effect: 'NoSchedule' });

/**
 * The Node's taints in step with the conditions it reports and its cordon, or undefined when they already are. Only the taints
 * of reported condition types are decided: a Node that has not reported Ready yet keeps the not-ready taint it was
 * created with (the reference removes it at once and taints the node unreachable after a startup grace period;
 * a node that never reported is taken as not ready here). Added taints carry `timeAdded`, as the reference's.
 */
export function conditionTaints(node: Node, n: Naming, now: string): Taint[] | undefined {
  // The taints of the reported condition types: which of them the statuses call for, which not.
  const decided = new Set<string>();
  const present = new Set<string>();
  for (const c of node.status?.conditions ?? []) {
    const byStatus = CONDITION_TAINTS[c.type];
    if (!byStatus) continue;
    for (const name of Object.values(byStatus)) decided.add(taintKey(n, name));
    const name = byStatus[c.status];
    if (name) present.add(taintKey(n, name));
  }
  const unschedulable = taintKey(n, 'unschedulable');
  decided.add(unschedulable);
  if (node.spec?.unschedulable) present.add(unschedulable);
  const taints = node.spec?.taints ?? [];
  const kept = taints.filter((t) => t.effect !== 'NoSchedule' || !decided.has(t.key) || present.has(t.key));
  const added = [...present]
    .filter((key) => !kept.some((t) => t.key === key && t.effect === 'NoSchedule'))
    .map((key): Taint => ({ key, effect: 'NoSchedule', timeAdded: now }));
  if (added.length === 0 && kept.length === taints.length) return undefined;
  return [...kept, ...added];
}
