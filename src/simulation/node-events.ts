/**
 * A simulated node's pod events, written as the node (core `v1` Events, source `kubelet` on that host), the
 * way the kubelet's recorder does: the first occurrence creates an Event, repeats raise its `count` and
 * `lastTimestamp`. What is remembered per pod is dropped with the pod, and the whole memory is capped.
 */

import type { Pod } from '../api/types/core.ts';
import type { CoreEvent } from '../api/types/events.ts';
import { isNotFound } from '../client/errors.ts';
import type { ResourceClient } from '../client/resource.ts';
import { rfc3339 } from '../util/time.ts';

/** Far above what the pods of a few simulated nodes produce: only a bound on memory. */
const MAX_REMEMBERED = 10_000;

export class NodeEvents {
  /** Per pod UID, per `type|reason|note`: the Event written and its count. */
  private readonly written = new Map<string, Map<string, { name: string; count: number }>>();
  private stamp = 0;

  constructor(
    private readonly events: ResourceClient<CoreEvent>,
    private readonly node: string,
  ) {}

  async record(pod: Pod, type: 'Normal' | 'Warning', reason: string, note: string, container?: string): Promise<void> {
    const uid = pod.metadata.uid ?? '';
    const ns = pod.metadata.namespace ?? 'default';
    const now = rfc3339(new Date());
    const mine = this.written.get(uid) ?? new Map<string, { name: string; count: number }>();
    const key = `${type}|${reason}|${note}`;
    const seen = mine.get(key);
    if (seen) {
      seen.count++;
      try {
        await this.events.patch(ns, seen.name, { count: seen.count, lastTimestamp: now }, 'merge');
        return;
      } catch (err) {
        // Deleted meanwhile (say by `kubectl delete events --all`): written anew below, not patched forever.
        if (!isNotFound(err)) throw err;
        mine.delete(key);
      }
    }
    if (this.size() >= MAX_REMEMBERED) this.written.clear();
    this.stamp = Math.max(this.stamp + 1, Date.now() * 1000);
    const name = `${pod.metadata.name}.${this.stamp.toString(16)}`;
    await this.events.create({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { namespace: ns, name },
      involvedObject: {
        apiVersion: 'v1',
        kind: 'Pod',
        namespace: ns,
        name: pod.metadata.name,
        uid,
        ...(container ? { fieldPath: `spec.containers{${container}}` } : {}),
      },
      reason,
      message: note,
      type,
      source: { component: 'kubelet', host: this.node },
      reportingComponent: 'kubelet',
      reportingInstance: this.node,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    });
    mine.set(key, { name, count: 1 });
    this.written.set(uid, mine);
  }

  /** Forgets a pod that is gone. */
  forget(uid: string): void {
    this.written.delete(uid);
  }

  private size(): number {
    let n = 0;
    for (const m of this.written.values()) n += m.size;
    return n;
  }
}
