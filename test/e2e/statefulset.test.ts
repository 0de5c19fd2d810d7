/**
 * The StatefulSet controller end to end on both substrates (our daemon as its own ServiceAccount; simulated nodes
 * on the embedded plane, kwok nodes behind kube-scheduler on the real one; either makes a pod Ready a second after it
 * runs, never for an image ending `:broken`): a set of 5 created in ordinal order, a rolling update from the top, a
 * partition, maxUnavailable (gate MaxUnavailableStatefulSet, on by default) with Parallel pods, `kubectl rollout
 * status/history`, scale-down from the top; a `:broken` image that stalls the rollout with a condition naming the
 * pod, and its recovery after `kubectl rollout undo`.
 */
import { beforeAll, expect, it } from 'vitest';
import type { WatchEvent } from '../../src/api/meta.ts';
import type { StatefulSet } from '../../src/api/types/apps.ts';
import type { Pod } from '../../src/api/types/core.ts';
import type { Event } from '../../src/api/types/events.ts';
import { eventually } from '../support/eventually.ts';
import { isReady, rolledOut, rolloutCondition, statefulSet, waitForSet } from '../support/statefulsets.ts';
import { describeOnSubstrate } from '../support/substrate.ts';

describeOnSubstrate('statefulset', (s) => {
  let ns = '';
  const pods = () => s().admin.kind<Pod>('Pod');
  const sets = () => s().admin.kind<StatefulSet>('StatefulSet');

  beforeAll(async () => {
    await s().startDaemon({ controllers: 'statefulset' });
    ns = await s().namespace('sts');
  });

  /**
   * The namespace's pods of set `name` now (as ADDED events), then every watch event, in arrival order: watched
   * from the list's resourceVersion, so a change made before the watch request reaches the server is not missed.
   */
  async function recordPods(name: string): Promise<{ events: WatchEvent<Pod>[]; stop(): void }> {
    const abort = new AbortController();
    const labelSelector = `app=${name}`;
    const list = await pods().list(ns, { labelSelector });
    const events: WatchEvent<Pod>[] = list.items.map((object) => ({ type: 'ADDED', object }));
    const { resourceVersion } = list.metadata;
    pods()
      .watch(ns, { labelSelector, resourceVersion }, (e) => events.push(e), abort.signal)
      .catch(() => undefined);
    return { events, stop: () => abort.abort() };
  }

  const revisionOf = (p: Pod) => p.metadata.labels?.['controller-revision-hash'];
  const condition = rolloutCondition;
  const waitFor = (name: string, test: (x: StatefulSet) => boolean, what: string) =>
    waitForSet(sets(), ns, name, test, what, 60_000);

  const setImage = (name: string, image: string) =>
    sets().patch(ns, name, { spec: { template: { spec: { containers: [{ name: 'app', image }] } } } }, 'strategic');
  const setPartition = (name: string, partition: number) =>
    sets().patch(ns, name, { spec: { updateStrategy: { rollingUpdate: { partition } } } }, 'merge');

  /** The daemon's events about set `name` (events.k8s.io), oldest first. */
  async function eventsOf(name: string): Promise<Event[]> {
    const rt = s().registry.resource('events.k8s.io', 'v1', 'events')!;
    const { items } = await s().admin.resource<Event>(rt).list(ns);
    return items
      .filter((e) => e.regarding?.kind === 'StatefulSet' && e.regarding.name === name)
      .sort((a, b) => Date.parse(a.eventTime ?? '') - Date.parse(b.eventTime ?? ''));
  }

  it('creates 5 pods in ordinal order, each only after the previous one is Ready, on the nodes', async () => {
    const watch = await recordPods('web');
    await sets().create(statefulSet(ns, 'web', 5));
    const set = await waitFor('web', rolledOut(5), 'all 5 Ready');
    watch.stop();
    const added = watch.events.filter((e) => e.type === 'ADDED').map((e) => e.object.metadata.name);
    expect(added).toEqual(['web-0', 'web-1', 'web-2', 'web-3', 'web-4']);
    for (let i = 1; i < 5; i++) {
      const addedAt = watch.events.findIndex((e) => e.type === 'ADDED' && e.object.metadata.name === `web-${i}`);
      const previousReadyAt = watch.events.findIndex(
        (e) => e.object.metadata.name === `web-${i - 1}` && isReady(e.object),
      );
      expect(previousReadyAt, `web-${i - 1} Ready before web-${i} exists`).toBeGreaterThan(-1);
      expect(previousReadyAt).toBeLessThan(addedAt);
    }
    const nodes = await s().nodes();
    const placed = (await pods().list(ns, { labelSelector: 'app=web' })).items.map((p) => p.spec?.nodeName ?? '');
    for (const node of placed) expect(nodes).toContain(node);
    expect(new Set(placed).size).toBeGreaterThan(1);
    expect(condition(set)).toMatchObject({ status: 'True', reason: 'RolloutComplete' });
    // The reference's labels, and a revision named after its hash.
    const pod = await pods().get(ns, 'web-1');
    expect(pod.metadata.labels).toMatchObject({
      'statefulset.kubernetes.io/pod-name': 'web-1',
      'apps.kubernetes.io/pod-index': '1',
      'controller-revision-hash': set.status!.updateRevision,
    });
    const revision = await s().admin.kind('ControllerRevision').get(ns, set.status!.updateRevision!);
    expect(set.status!.updateRevision).toBe(`web-${revision.metadata.labels?.['controller.kubernetes.io/hash']}`);
  }, 90_000);

  it('a template change rolls from the highest ordinal down; kubectl rollout status follows it', async () => {
    const before = (await sets().get(ns, 'web')).status!.currentRevision;
    const watch = await recordPods('web');
    await setImage('web', 'app:2');
    const status = await s().kubectl.run(['rollout', 'status', 'sts/web', '-n', ns, '--timeout=60s'], {
      timeoutMs: 70_000,
    });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('roll out complete');
    const set = await waitFor('web', rolledOut(5), 'rolled out');
    watch.stop();
    const deleted = watch.events.filter((e) => e.type === 'DELETED').map((e) => e.object.metadata.name);
    expect(deleted).toEqual(['web-4', 'web-3', 'web-2', 'web-1', 'web-0']);
    expect(set.status!.currentRevision).not.toBe(before);
  }, 90_000);

  it('partition 3 updates only ordinals 3 and 4; partition 0 the rest', async () => {
    const before = (await sets().get(ns, 'web')).status!.currentRevision;
    await setPartition('web', 3);
    await setImage('web', 'app:3');
    const set = await waitFor(
      'web',
      (x) =>
        x.status?.updatedReplicas === 2 && x.status.readyReplicas === 5 && condition(x)?.reason === 'PartitionReached',
      'partition reached',
    );
    const update = set.status!.updateRevision;
    expect(update).not.toBe(before);
    expect(set.status).toMatchObject({ currentRevision: before, currentReplicas: 3, updatedReplicas: 2 });
    const byName = new Map(
      (await pods().list(ns, { labelSelector: 'app=web' })).items.map((p) => [p.metadata.name, p]),
    );
    expect([0, 1, 2].map((i) => revisionOf(byName.get(`web-${i}`)!))).toEqual([before, before, before]);
    expect([3, 4].map((i) => revisionOf(byName.get(`web-${i}`)!))).toEqual([update, update]);
    expect(byName.get('web-2')?.spec?.containers[0]?.image).toBe('app:2');
    expect(byName.get('web-3')?.spec?.containers[0]?.image).toBe('app:3');

    await setPartition('web', 0);
    const lifted = await waitFor('web', rolledOut(5), 'partition lifted');
    expect(lifted.status).toMatchObject({ currentRevision: update, updateRevision: update, currentReplicas: 5 });
  }, 90_000);

  it('kubectl rollout history lists the revisions', async () => {
    const history = await s().kubectl.ok(['rollout', 'history', 'sts/web', '-n', ns]);
    const numbers = history
      .split('\n')
      .map((l) => /^(\d+)\s/.exec(l)?.[1])
      .filter(Boolean);
    expect(numbers).toHaveLength(3);
    const shown = await s().kubectl.ok(['rollout', 'history', 'sts/web', '-n', ns, `--revision=${numbers.at(-1)}`]);
    expect(shown).toContain('app:3');
  });

  it('scaling down deletes from the top', async () => {
    const watch = await recordPods('web');
    await sets().patchScale(ns, 'web', 2);
    await waitFor('web', (x) => x.status?.replicas === 2 && x.status.readyReplicas === 2, 'scaled to 2');
    watch.stop();
    const deleted = watch.events.filter((e) => e.type === 'DELETED').map((e) => e.object.metadata.name);
    expect(deleted).toEqual(['web-4', 'web-3', 'web-2']);
  }, 60_000);

  it('maxUnavailable 2 with Parallel pods: two at a time down, never more', async () => {
    const set = statefulSet(ns, 'wide', 5, {
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } },
    });
    await sets().create(set);
    await waitFor('wide', rolledOut(5), 'all 5 Ready');
    const watch = await recordPods('wide');
    await setImage('wide', 'app:2');
    const done = await waitFor('wide', rolledOut(5), 'rolled out');
    watch.stop();
    // Replay the watch: after each event, how many of the 5 ordinals lack a Ready pod that is not being deleted.
    const latest = new Map<string, Pod | undefined>();
    let most = 0;
    for (const e of watch.events) {
      latest.set(e.object.metadata.name!, e.type === 'DELETED' ? undefined : e.object);
      const available = [...latest.values()].filter((p) => p && isReady(p) && !p.metadata.deletionTimestamp).length;
      if (latest.size === 5) most = Math.max(most, 5 - available);
    }
    expect(most).toBe(2);
    expect(done.status!.currentRevision).toBe(done.status!.updateRevision);
  }, 90_000);

  it('a :broken image stalls the rollout; the condition and an event name the pod', async () => {
    await sets().create(statefulSet(ns, 'brk', 3));
    const good = await waitFor('brk', rolledOut(3), 'all 3 Ready');
    await setImage('brk', 'app:broken');
    const stalled = await waitFor(
      'brk',
      (x) => condition(x)?.reason === 'PodNotReady' && (condition(x)?.message ?? '').includes('brk-2 '),
      'stalled on brk-2',
    );
    expect(condition(stalled)!.message).toMatch(
      /^waiting for brk-2 \(revision brk-\w+\) to become Ready: Running, not Ready since /,
    );
    expect(stalled.status).toMatchObject({ currentRevision: good.status!.currentRevision, readyReplicas: 2 });
    // kubectl describe shows events, not StatefulSet conditions: the wait is an event too.
    const waits = await eventually(
      async () => (await eventsOf('brk')).filter((e) => e.reason === 'PodNotReady' && e.note?.includes('brk-2 (')),
      20_000,
      'a PodNotReady event about brk-2',
    );
    expect(waits.some((e) => e.type === 'Normal' && e.note?.includes(stalled.status!.updateRevision!))).toBe(true);
  }, 90_000);

  it('kubectl rollout undo reverts the template; the stuck pod stays until the recovery annotation is set', async () => {
    const current = (await sets().get(ns, 'brk')).status!.currentRevision!;
    const undo = await s().kubectl.run(['rollout', 'undo', 'sts/brk', '-n', ns]);
    expect(undo.code, undo.stderr).toBe(0);
    await waitFor('brk', (x) => x.status?.updateRevision === current, 'reverted');
    // The reference's trap: the broken pod blocks the sync before the update phase.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await pods().get(ns, 'brk-2')).spec?.containers[0]?.image).toBe('app:broken');
    const stuck = await sets().get(ns, 'brk');
    expect(condition(stuck)?.message).toContain('brk-2 ');
    expect(stuck.status!.readyReplicas).toBe(2);

    const broken = await pods().get(ns, 'brk-2');
    await s().kubectl.ok(['annotate', 'sts/brk', '-n', ns, `${s().naming.annotations.statefulSetRecovery}=true`]);
    await waitFor('brk', rolledOut(3), 'recovered');
    const replaced = await pods().get(ns, 'brk-2');
    expect(replaced.metadata.uid).not.toBe(broken.metadata.uid);
    expect(replaced.spec?.containers[0]?.image).toBe('app:1');
  }, 90_000);
});
