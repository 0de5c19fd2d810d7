import { describe, expect, it } from 'vitest';
import type { StatefulSet, StatefulSetCondition } from '../../src/api/types/apps.ts';
import type { Pod } from '../../src/api/types/core.ts';
import {
  type Action,
  CONDITION_TYPE,
  eventFor,
  maxUnavailableOf,
  planSync,
  resolveRevisions,
  revisionsToDelete,
  type WriteFailure,
  writeOutcome,
} from './core.ts';
import {
  ALL_GATES,
  at,
  claim,
  input,
  NOW,
  n,
  type PodState,
  pod,
  revision,
  type SetOptions,
  sts,
  summary,
} from './testing.ts';

const v1 = sts();
const rev1 = revision(v1, 1);
const R1 = rev1.metadata.name!;

/** A set whose template moved to `app:2`, with both revisions and the status of a set at revision 1. */
function updating(o: SetOptions = {}) {
  const set = sts({ image: 'app:2', status: { replicas: 3, currentRevision: R1, currentReplicas: 3 }, ...o });
  const rev2 = revision(set, 2);
  return { set, rev2, R2: rev2.metadata.name!, revisions: [rev1, rev2] };
}

const pods = (set: StatefulSet, states: PodState[], rev = rev1) => states.map((s, i) => pod(set, i, rev, s));
const condition = (plan: ReturnType<typeof planSync>) => plan.status.conditions?.find((c) => c.type === CONDITION_TYPE);

describe('phase A: creating and recreating replicas', () => {
  it.each<[string, SetOptions, PodState[], string[], string | undefined]>([
    ['first pod of an empty set', {}, [], [`create web-0@${R1}`], 'Progressing'],
    ['next ordinal once the lower ones are Running and Ready', {}, ['ready'], [`create web-1@${R1}`], 'Progressing'],
    ['waits while a lower ordinal is not Ready', {}, ['running'], [], 'PodNotReady'],
    ['waits while a lower ordinal is Pending', {}, ['pending'], [], 'PodNotRunning'],
    ['waits while a lower ordinal terminates', {}, ['ready', 'terminating'], [], 'PodTerminating'],
    ['a failed pod is deleted and nothing after it happens', {}, ['ready', 'failed'], ['delete web-1'], 'PodFailed'],
    ['a succeeded pod too', {}, ['succeeded'], ['delete web-0'], 'PodFailed'],
    ['all Ready: nothing to do', {}, ['ready', 'ready', 'ready'], [], 'RolloutComplete'],
    [
      'Parallel creates every missing pod at once',
      { podManagementPolicy: 'Parallel' },
      [],
      [`create web-0@${R1}`, `create web-1@${R1}`, `create web-2@${R1}`],
      'Progressing',
    ],
    [
      'Parallel deletes the failed pod and creates the missing ones in one sync',
      { podManagementPolicy: 'Parallel' },
      ['running', 'failed'],
      ['delete web-1', `create web-2@${R1}`],
      'PodFailed',
    ],
  ])('%s', (_what, o, states, want, reason) => {
    const set = sts(o);
    const plan = planSync(input(set, pods(set, states)));
    expect(summary(plan.actions)).toEqual(want);
    expect(condition(plan)?.reason).toBe(reason);
  });

  it('a failed pod already terminating is waited for', () => {
    const failed = pod(v1, 1, rev1, 'failed');
    failed.metadata.deletionTimestamp = at(0);
    expect(planSync(input(v1, [pod(v1, 0, rev1), failed])).actions).toEqual([]);
  });

  it('ordinals.start: pods run from start; ordinals below it are condemned', () => {
    const set = sts({ ordinals: { start: 5 }, replicas: 2 });
    const plan = planSync(input(set, [pod(set, 0, rev1), pod(set, 5, rev1)]));
    expect(summary(plan.actions)).toEqual([`create web-6@${R1}`]);
    const full = planSync(input(set, [pod(set, 0, rev1), pod(set, 5, rev1), pod(set, 6, rev1)]));
    expect(summary(full.actions)).toEqual(['delete web-0']);
  });

  it('the condition names the pod, its revision and since when it waits', () => {
    const plan = planSync(input(v1, pods(v1, ['ready', 'running'])));
    expect(condition(plan)).toMatchObject({
      status: 'True',
      reason: 'PodNotReady',
      message: `waiting for web-1 (revision ${R1}) to become Ready: Running, not Ready since ${at(-120_000)}`,
    });
  });

  it('minReadySeconds holds the next pod back and asks for a sync the moment the pod becomes available', () => {
    const set = sts({ minReadySeconds: 10 });
    const plan = planSync(input(set, [pod(set, 0, rev1, 'ready', 4_000)]));
    expect(plan.actions).toEqual([]);
    expect(condition(plan)?.reason).toBe('WaitingForMinReadySeconds');
    expect(plan.requeueAfterMs).toBe(6_001);
    expect(plan.status.availableReplicas).toBe(0);
    const later = planSync(input(set, [pod(set, 0, rev1, 'ready', 11_000)]));
    expect(summary(later.actions)).toEqual([`create web-1@${R1}`]);
    expect(later.status.availableReplicas).toBe(1);
  });

  it('a pod missing its identity label is updated in place', () => {
    const p = pod(v1, 0, rev1);
    delete p.metadata.labels![n.labels.statefulSetPodName];
    const plan = planSync(input(v1, [p, pod(v1, 1, rev1), pod(v1, 2, rev1)]));
    expect(summary(plan.actions)).toEqual(['update web-0']);
    const updated = plan.actions[0] as { pod: Pod };
    expect(updated.pod.metadata.labels).toMatchObject({
      'statefulset.kubernetes.io/pod-name': 'web-0',
      'apps.kubernetes.io/pod-index': '0',
    });
  });

  it('new pods carry identity, hostname, subdomain and the owner reference', () => {
    const [action] = planSync(input(v1, [])).actions.filter((a) => a.kind === 'createPod') as { pod: Pod }[];
    expect(action!.pod.metadata).toMatchObject({
      name: 'web-0',
      namespace: 'ns',
      labels: {
        app: 'web',
        'statefulset.kubernetes.io/pod-name': 'web-0',
        'apps.kubernetes.io/pod-index': '0',
        'controller-revision-hash': R1,
      },
      ownerReferences: [
        { kind: 'StatefulSet', name: 'web', uid: 'web-uid', controller: true, blockOwnerDeletion: true },
      ],
    });
    expect(action!.pod.spec).toMatchObject({ hostname: 'web-0', subdomain: 'web' });
  });

  it('a name held by a pod the set does not control: FailedCreate and a False condition, nothing else', () => {
    const foreign: Pod = { ...pod(v1, 0, rev1), metadata: { name: 'web-0', namespace: 'ns', uid: 'other' } };
    const plan = planSync(input(v1, [], { foreignPods: [foreign] }));
    expect(plan.actions).toEqual([]);
    expect(plan.events).toEqual([
      {
        type: 'Warning',
        reason: 'FailedCreate',
        note: 'create Pod web-0 in StatefulSet web failed error: pod web-0 already exists and is not controlled by this StatefulSet',
      },
    ]);
    expect(condition(plan)).toMatchObject({ status: 'False', reason: 'FailedCreate' });
  });
});

describe('phases B and C: scaling down', () => {
  const four = (set: StatefulSet, states: PodState[]) => states.map((s, i) => pod(set, i, rev1, s));
  it.each<[string, SetOptions, PodState[], string[]]>([
    [
      'deletes the highest ordinal first, one per sync',
      { replicas: 2 },
      ['ready', 'ready', 'ready', 'ready'],
      ['delete web-3'],
    ],
    [
      'Parallel deletes every condemned pod',
      { replicas: 2, podManagementPolicy: 'Parallel' },
      ['ready', 'ready', 'ready', 'ready'],
      ['delete web-3', 'delete web-2'],
    ],
    [
      'an unready replica stops scale-down in OrderedReady',
      { replicas: 2 },
      ['ready', 'running', 'ready', 'ready'],
      [],
    ],
    [
      'the lowest unhealthy condemned pod may go',
      { replicas: 2 },
      ['ready', 'ready', 'ready', 'running'],
      ['delete web-3'],
    ],
    [
      'a higher unhealthy condemned pod waits for a lower one',
      { replicas: 2 },
      ['ready', 'ready', 'running', 'running'],
      [],
    ],
    ['waits for a terminating condemned pod', { replicas: 2 }, ['ready', 'ready', 'ready', 'terminating'], []],
    [
      'Parallel skips a terminating one',
      { replicas: 2, podManagementPolicy: 'Parallel' },
      ['ready', 'ready', 'ready', 'terminating'],
      ['delete web-2'],
    ],
    ['scale to zero', { replicas: 0 }, ['ready', 'ready'], ['delete web-1']],
  ])('%s', (_what, o, states, want) => {
    const set = sts(o);
    expect(summary(planSync(input(set, four(set, states))).actions)).toEqual(want);
  });

  it('scaling goes before the update', () => {
    const { set, revisions } = updating({ replicas: 2 });
    const plan = planSync(input(set, pods(set, ['ready', 'ready', 'ready']), { revisions }));
    expect(summary(plan.actions)).toEqual(['delete web-2']);
    expect(condition(plan)?.reason).toBe('ScalingDown');
  });
});

describe('rolling updates', () => {
  it('deletes the highest old pod first and counts it out of currentReplicas', () => {
    const { set, revisions, R2 } = updating();
    const plan = planSync(input(set, pods(set, ['ready', 'ready', 'ready']), { revisions }));
    expect(summary(plan.actions)).toEqual(['delete web-2']);
    expect(plan.status).toMatchObject({
      currentRevision: R1,
      updateRevision: R2,
      currentReplicas: 2,
      updatedReplicas: 0,
    });
  });

  it('recreates at the update revision, then moves down once it is Ready', () => {
    const { set, revisions, rev2, R2 } = updating();
    const recreate = planSync(input(set, pods(set, ['ready', 'ready']), { revisions }));
    expect(summary(recreate.actions)).toEqual([`create web-2@${R2}`]);
    const next = planSync(input(set, [...pods(set, ['ready', 'ready']), pod(set, 2, rev2)], { revisions }));
    expect(summary(next.actions)).toEqual(['delete web-1']);
    const waiting = planSync(
      input(set, [...pods(set, ['ready', 'ready']), pod(set, 2, rev2, 'running')], { revisions }),
    );
    expect(summary(waiting.actions)).toEqual([]);
  });

  it('completes: the update revision becomes current', () => {
    const { set, revisions, rev2, R2 } = updating();
    const plan = planSync(
      input(
        set,
        [0, 1, 2].map((i) => pod(set, i, rev2)),
        { revisions },
      ),
    );
    expect(plan.status).toMatchObject({
      currentRevision: R2,
      updateRevision: R2,
      currentReplicas: 3,
      updatedReplicas: 3,
    });
    expect(condition(plan)).toMatchObject({ status: 'True', reason: 'RolloutComplete' });
  });

  it('partition: only ordinals at or above it are updated; lower ones are recreated at the current revision', () => {
    const { set, revisions, rev2, R2 } = updating({
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2, maxUnavailable: 1 } },
    });
    const reached = planSync(input(set, [...pods(set, ['ready', 'ready']), pod(set, 2, rev2)], { revisions }));
    expect(reached.actions).toEqual([]);
    expect(condition(reached)).toMatchObject({ reason: 'PartitionReached' });
    expect(condition(reached)?.message).toContain(`ordinals from 2 up run revision ${R2}`);
    expect(reached.status.currentRevision).toBe(R1);
    const lost = planSync(input(set, [pod(set, 1, rev1), pod(set, 2, rev2)], { revisions }));
    expect(summary(lost.actions)).toEqual([`create web-0@${R1}`]);
  });

  it.each<[string, SetOptions, string[]]>([
    [
      'maxUnavailable 2 deletes two at once',
      { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } } },
      ['delete web-2', 'delete web-1'],
    ],
    [
      '50% of 3 rounds up to 2',
      { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '50%' } } },
      ['delete web-2', 'delete web-1'],
    ],
    [
      '10% of 3 is still 1',
      { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%' } } },
      ['delete web-2'],
    ],
    ['no rollingUpdate block: 1', { updateStrategy: { type: 'RollingUpdate' } }, ['delete web-2']],
    ['OnDelete never deletes', { updateStrategy: { type: 'OnDelete' } }, []],
  ])('%s', (_what, o, want) => {
    const { set, revisions } = updating(o);
    expect(summary(planSync(input(set, pods(set, ['ready', 'ready', 'ready']), { revisions })).actions)).toEqual(want);
  });

  it('OnDelete: recreated and scale-up pods get the update revision; the condition says why nothing moves', () => {
    const { set, revisions, R2 } = updating({ replicas: 4, updateStrategy: { type: 'OnDelete' } });
    const missing = planSync(input(set, [pod(set, 1, rev1), pod(set, 2, rev1), pod(set, 3, rev1)], { revisions }));
    expect(summary(missing.actions)).toEqual([`create web-0@${R2}`]);
    const idle = planSync(input(set, pods(set, ['ready', 'ready', 'ready', 'ready']), { revisions }));
    expect(idle.actions).toEqual([]);
    expect(condition(idle)).toMatchObject({ reason: 'OnDelete' });
  });

  it('maxUnavailable counts unavailable pods of every ordinal (Parallel)', () => {
    const { set, revisions } = updating({
      podManagementPolicy: 'Parallel',
      replicas: 4,
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2, maxUnavailable: 1 } },
    });
    const plan = planSync(input(set, pods(set, ['running', 'ready', 'ready', 'ready']), { revisions }));
    expect(plan.actions).toEqual([]);
    expect(condition(plan)).toMatchObject({ reason: 'BudgetSpent' });
    expect(condition(plan)?.message).toContain('web-0');
  });

  it('Parallel: an old pod that is unavailable anyway is replaced without spending the budget (the fixed case)', () => {
    const { set, revisions } = updating({ podManagementPolicy: 'Parallel', replicas: 1 });
    const plan = planSync(input(set, [pod(set, 0, rev1, 'running')], { revisions }));
    expect(summary(plan.actions)).toEqual(['delete web-0']);
    const two = updating({ podManagementPolicy: 'Parallel', replicas: 3 });
    const both = planSync(input(two.set, pods(two.set, ['ready', 'ready', 'running']), { revisions: two.revisions }));
    expect(summary(both.actions)).toEqual(['delete web-2']);
    const budget = planSync(input(two.set, pods(two.set, ['ready', 'ready', 'ready']), { revisions: two.revisions }));
    expect(summary(budget.actions)).toEqual(['delete web-2']);
  });

  it('OrderedReady with a broken update pod stays stuck without the recovery annotation', () => {
    const { set, revisions } = updating({ replicas: 1 });
    expect(planSync(input(set, [pod(set, 0, rev1, 'running')], { revisions })).actions).toEqual([]);
  });

  describe('with the MaxUnavailableStatefulSet gate off (legacy)', () => {
    const gates = { ...ALL_GATES, maxUnavailable: false };
    it.each<[string, PodState[], string[]]>([
      ['one old pod per sync, maxUnavailable ignored', ['ready', 'ready', 'ready'], ['delete web-2']],
      [
        'in Parallel the old candidate goes even when it is itself unavailable',
        ['ready', 'ready', 'running'],
        ['delete web-2'],
      ],
    ])('%s', (_what, states, want) => {
      const { set, revisions } = updating({
        podManagementPolicy: 'Parallel',
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 3 } },
      });
      expect(summary(planSync(input(set, pods(set, states), { revisions, gates })).actions)).toEqual(want);
    });

    it('waits on an unavailable pod at the update revision', () => {
      const { set, revisions, rev2 } = updating({ podManagementPolicy: 'Parallel' });
      const plan = planSync(
        input(set, [...pods(set, ['ready', 'ready']), pod(set, 2, rev2, 'running')], { revisions, gates }),
      );
      expect(plan.actions).toEqual([]);
      expect(condition(plan)?.reason).toBe('PodNotReady');
    });
  });

  it('Recreate deletes every old pod (condemned too) and creates nothing until they are gone', () => {
    const { set, revisions, R2 } = updating({ replicas: 2, updateStrategy: { type: 'Recreate' } });
    const plan = planSync(input(set, pods(set, ['ready', 'terminating', 'ready']), { revisions }));
    expect(summary(plan.actions)).toEqual(['delete web-0', 'delete web-2']);
    expect(condition(plan)?.reason).toBe('Recreating');
    const gone = planSync(input(set, [], { revisions }));
    expect(summary(gone.actions)).toEqual([`create web-0@${R2}`]);
    const done = planSync(input(set, [pod(set, 0, revisions[1]!), pod(set, 1, revisions[1]!)], { revisions }));
    expect(done.status).toMatchObject({ currentRevision: R2, currentReplicas: 2 });
  });

  it('OnDelete never makes the update revision current by itself', () => {
    const { set, revisions, rev2, R2 } = updating({ updateStrategy: { type: 'OnDelete' } });
    const plan = planSync(
      input(
        set,
        [0, 1, 2].map((i) => pod(set, i, rev2)),
        { revisions },
      ),
    );
    expect(plan.status).toMatchObject({ currentRevision: R1, updateRevision: R2, updatedReplicas: 3 });
    expect(condition(plan)?.reason).toBe('RolloutComplete');
  });

  it('Recreate without its gate is not acted on', () => {
    const { set, revisions } = updating({ updateStrategy: { type: 'Recreate' } });
    const plan = planSync(
      input(set, pods(set, ['ready', 'ready', 'ready']), { revisions, gates: { ...ALL_GATES, recreate: false } }),
    );
    expect(plan.actions).toEqual([]);
  });
});

describe('recovery from a broken OrderedReady rollout (opt-in annotation)', () => {
  // Revision 2 was broken; the template went back to revision 1's: the reverted set's update revision is revision 1 again.
  const broken = revision(sts({ image: 'app:broken' }), 2);
  const annotations = { [n.annotations.statefulSetRecovery]: 'true' };
  const reverted = (o: SetOptions = {}) => sts({ status: { replicas: 3, currentRevision: R1 }, ...o });
  const stuck = (set: StatefulSet, state: PodState = 'running') => [
    pod(set, 0, rev1),
    pod(set, 1, rev1),
    pod(set, 2, broken, state),
  ];

  it('off: the revert bumps revision 1 and the never-Ready pod blocks everything', () => {
    const plan = planSync(input(reverted(), stuck(reverted()), { revisions: [rev1, broken] }));
    expect(summary(plan.actions)).toEqual([`bumpRevision ${R1} 3`]);
    expect(condition(plan)?.message).toContain(`web-2 (revision ${broken.metadata.name})`);
  });

  it('on: the never-Ready pod of the abandoned revision is deleted, to come back at the current one', () => {
    const set = reverted({ annotations });
    const plan = planSync(input(set, stuck(set), { revisions: [rev1, broken] }));
    expect(summary(plan.actions)).toEqual([`bumpRevision ${R1} 3`, 'delete web-2']);
    expect(condition(plan)?.reason).toBe('RecoveringBrokenPod');
  });

  it('on, but a pod that was Ready once is left alone', () => {
    const set = reverted({ annotations });
    const wasReady = stuck(set);
    wasReady[2]!.status!.conditions = [{ type: 'Ready', status: 'False', lastTransitionTime: at(-1000) }];
    expect(summary(planSync(input(set, wasReady, { revisions: [rev1, broken] })).actions)).toEqual([
      `bumpRevision ${R1} 3`,
    ]);
  });

  it('on, but the template not reverted: nothing (the update itself must not be undone)', () => {
    const set = sts({ image: 'app:broken', annotations, status: { replicas: 3, currentRevision: R1 } });
    const plan = planSync(input(set, stuck(set), { revisions: [rev1, broken] }));
    expect(plan.actions).toEqual([]);
  });
});

describe('revisions', () => {
  it('first sync creates revision 1, current = update', () => {
    const plan = planSync(input(v1, [], { revisions: [] }));
    expect(summary(plan.actions)[0]).toBe(`createRevision ${R1}`);
    expect(plan.status).toMatchObject({ currentRevision: R1, updateRevision: R1, collisionCount: 0 });
  });

  it('a changed template makes revision 2; current stays', () => {
    const set = sts({ image: 'app:2', status: { replicas: 3, currentRevision: R1 } });
    const r = resolveRevisions(n, set, [rev1]);
    expect(r.actions).toEqual([{ kind: 'createRevision', revision: expect.objectContaining({ revision: 2 }) }]);
    expect(r.current.metadata.name).toBe(R1);
  });

  it('only spec.template makes revisions', () => {
    const set = sts({ replicas: 9, minReadySeconds: 3, podManagementPolicy: 'Parallel' });
    expect(resolveRevisions(n, set, [rev1]).actions).toEqual([]);
  });

  it('a name collision with other data raises the collision count', () => {
    const set = sts({ image: 'app:2' });
    const squatter = { ...revision(set, 1), data: { other: true } };
    const r = resolveRevisions(n, set, [squatter]);
    expect(r.collisionCount).toBe(1);
    expect(r.update.metadata.name).toBe(revision(set, 2, 1).metadata.name);
    const taken = resolveRevisions(n, set, [], new Set([revision(set).metadata.name!]));
    expect(taken.collisionCount).toBe(1);
  });

  it('a current revision that vanished falls back to the update revision', () => {
    const set = sts({ status: { replicas: 3, currentRevision: 'web-gone' } });
    expect(resolveRevisions(n, set, [rev1]).current.metadata.name).toBe(R1);
  });

  it('history is truncated to revisionHistoryLimit, oldest first, never a revision a pod uses', () => {
    const revs = [1, 2, 3, 4, 5].map((i) => revision(sts({ image: `app:${i}` }), i));
    const names = revs.map((r) => r.metadata.name!);
    const set = sts({ image: 'app:5', revisionHistoryLimit: 1 });
    const inUse = [pod(set, 0, revs[0]!)];
    expect(revisionsToDelete(set, inUse, revs, [names[4]!, names[4]!])).toEqual([names[1], names[2]]);
    expect(revisionsToDelete(sts({ revisionHistoryLimit: -1 }), [], revs, [])).toEqual([]);
    const plan = planSync(input(set, [], { revisions: revs }));
    expect(summary(plan.actions).filter((a) => a.startsWith('deleteRevision'))).toEqual(
      names.slice(0, 3).map((x) => `deleteRevision ${x}`),
    );
  });
});

describe('claims and retention', () => {
  const vct = { volumeClaimTemplates: [{ metadata: { name: 'data', labels: { tier: 'db' } }, spec: {} }] };
  const ref = (kind: string, name: string, uid = `${name}-uid`) => ({
    apiVersion: kind === 'Pod' ? 'v1' : 'apps/v1',
    kind,
    name,
    uid,
    controller: true,
    blockOwnerDeletion: true,
  });

  it('the claim is created before the pod, labelled with the selector, and mounted', () => {
    const set = sts(vct);
    const plan = planSync(input(set, []));
    expect(summary(plan.actions)).toEqual([`claim data-web-0`, `create web-0@${revision(set).metadata.name}`]);
    expect(plan.actions[0]).toMatchObject({ podWrite: 'create' });
    const created = plan.actions[0] as { claim: { metadata: { labels: unknown; ownerReferences?: unknown } } };
    expect(created.claim.metadata.labels).toEqual({ tier: 'db', app: 'web' });
    expect(created.claim.metadata.ownerReferences).toBeUndefined();
    const podSpec = (plan.actions[1] as { pod: Pod }).pod.spec;
    expect(podSpec?.volumes).toEqual([{ name: 'data', persistentVolumeClaim: { claimName: 'data-web-0' } }]);
  });

  it('whenDeleted Delete: claims are owned by the set', () => {
    const set = sts({ ...vct, persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' } });
    const created = planSync(input(set, [], { revisions: [revision(set)] })).actions[0] as {
      claim: { metadata: { ownerReferences?: unknown } };
    };
    expect(created.claim.metadata.ownerReferences).toEqual([ref('StatefulSet', 'web', 'web-uid')]);
  });

  it.each<[string, 'Retain' | 'Delete', 'Retain' | 'Delete', string]>([
    ['Retain/Retain: no owner', 'Retain', 'Retain', ''],
    ['whenScaled Delete: the condemned pod owns it', 'Retain', 'Delete', 'owners data-web-1 Pod/web-1'],
    ['Delete/Delete: the pod, not the set', 'Delete', 'Delete', 'owners data-web-1 Pod/web-1'],
    ['whenDeleted Delete only: the set', 'Delete', 'Retain', 'owners data-web-1 StatefulSet/web'],
  ])('scale down, %s, owner references written before the delete', (_what, whenDeleted, whenScaled, owners) => {
    const set = sts({ ...vct, replicas: 1, persistentVolumeClaimRetentionPolicy: { whenDeleted, whenScaled } });
    const r = revision(set);
    const claims = new Map([
      ['data-web-0', claim('data-web-0', whenDeleted === 'Delete' ? [ref('StatefulSet', 'web', 'web-uid')] : [])],
      ['data-web-1', claim('data-web-1')],
    ]);
    const plan = planSync(input(set, [pod(set, 0, r), pod(set, 1, r)], { claims, revisions: [r] }));
    expect(summary(plan.actions)).toEqual([...(owners ? [owners] : []), 'delete web-1']);
  });

  it('a claim still owned by an earlier pod of the name blocks the new pod (whenScaled Delete)', () => {
    const set = sts({
      ...vct,
      replicas: 1,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Delete' },
    });
    const claims = new Map([['data-web-0', claim('data-web-0', [ref('Pod', 'web-0', 'old-uid')])]]);
    const plan = planSync(input(set, [], { claims, revisions: [revision(set)] }));
    expect(plan.actions).toEqual([]);
    expect(condition(plan)?.reason).toBe('StaleClaimOwner');
  });

  it('a claim being deleted blocks its pod', () => {
    const set = sts(vct);
    const plan = planSync(
      input(set, [], { claims: new Map([['data-web-0', claim('data-web-0', [], true)]]), revisions: [revision(set)] }),
    );
    expect(plan.actions).toEqual([]);
    expect(condition(plan)?.reason).toBe('ClaimTerminating');
  });

  it('another managing controller: the policy is ignored for the claim, with a ConflictingController event', () => {
    const set = sts({
      ...vct,
      replicas: 1,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' },
    });
    const r = revision(set);
    const claims = new Map([['data-web-0', claim('data-web-0', [ref('Other', 'x')])]]);
    const plan = planSync(input(set, [pod(set, 0, r)], { claims, revisions: [r] }));
    expect(plan.actions).toEqual([]);
    expect(plan.events.map((e) => e.reason)).toEqual(['ConflictingController', 'RolloutComplete']);
  });

  it('a stale reference to our set leaves the claim alone', () => {
    const set = sts({
      ...vct,
      replicas: 1,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' },
    });
    const r = revision(set);
    const claims = new Map([['data-web-0', claim('data-web-0', [ref('StatefulSet', 'web', 'old-set-uid')])]]);
    expect(planSync(input(set, [pod(set, 0, r)], { claims, revisions: [r] })).actions).toEqual([]);
  });

  it('a Pending pod whose claim vanished gets it back', () => {
    const set = sts(vct);
    const r = revision(set);
    const plan = planSync(input(set, [pod(set, 0, r, 'pending')], { revisions: [r] }));
    expect(summary(plan.actions)).toEqual(['claim data-web-0']);
    // No pod write goes with it, so its failure is the claim's alone (the reference's createMissingPersistentVolumeClaims).
    expect(plan.actions[0]).not.toHaveProperty('podWrite');
  });
});

describe('status', () => {
  it('counts created, ready, available, current and updated pods', () => {
    const { set, revisions, rev2 } = updating({ minReadySeconds: 30 });
    const ps = [
      pod(set, 0, rev1, 'ready', 60_000),
      pod(set, 1, rev1, 'terminating'),
      pod(set, 2, rev2, 'ready', 5_000),
      pod(set, 3, rev2, 'unscheduled'),
    ];
    const plan = planSync(input(set, ps, { revisions }));
    expect(plan.status).toMatchObject({
      observedGeneration: 1,
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 2,
      currentReplicas: 1,
      updatedReplicas: 1,
      collisionCount: 0,
    });
  });

  it('no write when nothing changed; other conditions are kept', () => {
    const plan = planSync(input(v1, pods(v1, ['ready', 'ready', 'ready'])));
    expect(plan.statusChanged).toBe(true);
    const foreign = { type: 'Other', status: 'True' as const };
    const again = planSync(
      input(
        { ...v1, status: { ...plan.status, conditions: [foreign, ...plan.status.conditions!] } },
        pods(v1, ['ready', 'ready', 'ready']),
      ),
    );
    expect(again.statusChanged).toBe(false);
    expect(again.status.conditions?.[0]).toEqual(foreign);
  });

  it('a set being deleted gets only its status', () => {
    const set = sts({ deleting: true });
    const plan = planSync(input(set, pods(set, ['ready'])));
    expect(plan.actions).toEqual([]);
    expect(plan.status.replicas).toBe(1);
  });

  it('a new wait makes one event (kubectl describe shows events); the same wait again makes none', () => {
    const first = planSync(input(v1, pods(v1, ['ready', 'running'])));
    expect(first.events).toEqual([
      { type: 'Normal', reason: 'PodNotReady', note: condition(first)!.message, wait: true },
    ]);
    expect(planSync(input({ ...v1, status: first.status }, pods(v1, ['ready', 'running']))).events).toEqual([]);
    expect(planSync(input(v1, pods(v1, ['ready']))).events).toEqual([]);
  });

  it.each<[string, Partial<StatefulSetCondition>, boolean, string[]]>([
    ['the same wait', {}, false, []],
    // Pods coming up one after another: the message catches up with the next counted write.
    ['the next pod waited on for the same reason', { message: 'waiting for web-0 (revision x) ...' }, false, []],
    ['another reason', { reason: 'PodNotRunning' }, true, ['PodNotReady']],
    ['the other status', { status: 'False' }, true, ['PodNotReady']],
  ])('stored condition vs now: %s', (_, change, write, events) => {
    const now = planSync(input(v1, pods(v1, ['ready', 'running'])));
    const stored = condition(now)!;
    const set = { ...v1, status: { ...now.status, conditions: [{ ...stored, ...change }] } };
    const plan = planSync(input(set, pods(v1, ['ready', 'running'])));
    expect(condition(plan)!.message).toBe(stored.message);
    expect(plan.statusChanged).toBe(write);
    expect(plan.events.map((e) => e.reason)).toEqual(events);
  });

  it('a counted field that moves writes the message that waited with it, without an event', () => {
    const waiting = planSync(input(v1, pods(v1, ['ready', 'running'])));
    const stale = { ...condition(waiting)!, message: 'waiting for web-0 (revision x) ...' };
    const set = { ...v1, status: { ...waiting.status, readyReplicas: 0, conditions: [stale] } };
    const plan = planSync(input(set, pods(v1, ['ready', 'running'])));
    expect(plan.statusChanged).toBe(true);
    expect(condition(plan)!.message).toMatch(/^waiting for web-1 /);
    expect(plan.events).toEqual([]);
  });

  it('lastTransitionTime moves only when the status does', () => {
    const first = planSync(input(v1, [], { nowMs: NOW }));
    const c = condition(first)!;
    const set = { ...v1, status: first.status };
    expect(condition(planSync(input(set, pods(set, ['ready']), { nowMs: NOW + 5000 })))!.lastTransitionTime).toBe(
      c.lastTransitionTime,
    );
  });
});

describe('maxUnavailable rounding (the spec: up, at least 1)', () => {
  it.each<[number | string | undefined, number, number]>([
    [undefined, 10, 1],
    [3, 10, 3],
    ['10%', 25, 3],
    ['50%', 5, 3],
    ['100%', 5, 5],
    ['10%', 5, 1],
    ['1%', 0, 1],
  ])('%s of %i → %i', (maxUnavailable, replicas, want) => {
    const rollingUpdate = maxUnavailable === undefined ? {} : { maxUnavailable };
    expect(maxUnavailableOf(sts({ replicas, updateStrategy: { type: 'RollingUpdate', rollingUpdate } }))).toBe(want);
  });
});

describe('events for action outcomes', () => {
  // The messages title-case the verb, as kube-controller-manager v1.37 does (cases.Title in stateful_pod_control.go).
  const p = pod(v1, 0, rev1);
  it.each([
    [
      { kind: 'createPod' as const, pod: p },
      undefined,
      'Normal',
      'SuccessfulCreate',
      'Create Pod web-0 in StatefulSet web successful',
    ],
    [
      { kind: 'createPod' as const, pod: p },
      'boom',
      'Warning',
      'FailedCreate',
      'Create Pod web-0 in StatefulSet web failed error: boom',
    ],
    [
      { kind: 'deletePod' as const, name: 'web-0', uid: 'u' },
      undefined,
      'Normal',
      'SuccessfulDelete',
      'Delete Pod web-0 in StatefulSet web successful',
    ],
    [
      { kind: 'deletePod' as const, name: 'web-0', uid: 'u' },
      'no',
      'Warning',
      'FailedDelete',
      'Delete Pod web-0 in StatefulSet web failed error: no',
    ],
    [
      { kind: 'updatePod' as const, pod: p },
      undefined,
      'Normal',
      'SuccessfulUpdate',
      'Update Pod web-0 in StatefulSet web successful',
    ],
    [
      { kind: 'updatePod' as const, pod: p },
      'conflict',
      'Warning',
      'FailedUpdate',
      'Update Pod web-0 in StatefulSet web failed error: conflict',
    ],
    [
      { kind: 'createClaim' as const, claim: claim('data-web-0'), pod: 'web-0' },
      undefined,
      'Normal',
      'SuccessfulCreate',
      'Create Claim data-web-0 Pod web-0 in StatefulSet web success',
    ],
    [
      { kind: 'createClaim' as const, claim: claim('data-web-0'), pod: 'web-0' },
      'x',
      'Warning',
      'FailedCreate',
      'Create Claim data-web-0 for Pod web-0 in StatefulSet web failed error: x',
    ],
  ])('%j (%s)', (action, error, type, reason, note) => {
    expect(eventFor(v1, action, error)).toEqual({ type, reason, note });
  });

  it('revisions and claim owners make no events', () => {
    expect(eventFor(v1, { kind: 'deleteRevision', name: 'x' })).toBeUndefined();
  });

  it.each([
    ['a pod update that conflicts: retried, no event', { kind: 'updatePod' as const, pod: p }, undefined],
    ['a pod create that conflicts: an event', { kind: 'createPod' as const, pod: p }, 'FailedCreate'],
    ['a pod delete that conflicts: an event', { kind: 'deletePod' as const, name: 'web-0', uid: 'u' }, 'FailedDelete'],
  ])('%s', (_what, action, reason) => {
    const outcome = writeOutcome(v1, action, { reason: 'Conflict', message: 'the object has been modified' });
    expect(outcome.fails).toBe(true);
    expect(outcome.events.map((e) => e.reason)).toEqual(reason ? [reason] : []);
  });
});

describe('what a write answer means for the sync (the reference: AlreadyExists fails silently)', () => {
  const createPod = { kind: 'createPod' as const, pod: pod(v1, 0, rev1) };
  const pendingClaim = { kind: 'createClaim' as const, claim: claim('data-web-0'), pod: 'web-0' };
  const createClaim = { ...pendingClaim, podWrite: 'create' as const };
  const updateClaim = { ...pendingClaim, podWrite: 'update' as const };
  const deletePod = { kind: 'deletePod' as const, name: 'web-0', uid: 'u' };
  const deleteRevision = { kind: 'deleteRevision' as const, name: 'web-1' };
  const exists = { reason: 'AlreadyExists', message: 'pods "web-0" already exists' };
  const gone = { reason: 'NotFound', message: 'pods "web-0" not found' };
  const refused = { reason: 'Forbidden', message: 'no' };
  it.each<[string, Action, WriteFailure | undefined, boolean, string[]]>([
    ['a created pod', createPod, undefined, false, ['SuccessfulCreate']],
    ['a pod create answered AlreadyExists', createPod, exists, true, []],
    ['a pod create refused otherwise', createPod, refused, true, ['FailedCreate']],
    ["a Pending pod's claim create answered AlreadyExists", pendingClaim, exists, true, []],
    ["a Pending pod's claim create refused otherwise", pendingClaim, refused, true, ['FailedCreate']],
    ["a new pod's claim create answered AlreadyExists: the pod's event", createClaim, exists, true, ['FailedCreate']],
    [
      "a new pod's claim create refused otherwise: the claim's and the pod's",
      createClaim,
      refused,
      true,
      ['FailedCreate', 'FailedCreate'],
    ],
    [
      "an updated pod's claim create refused: the claim's and the pod's",
      updateClaim,
      refused,
      true,
      ['FailedCreate', 'FailedUpdate'],
    ],
    ['a pod delete answered NotFound', deletePod, gone, false, []],
    ['a pod delete refused otherwise', deletePod, refused, true, ['FailedDelete']],
    ['a pod delete answered AlreadyExists (no such answer, not excused)', deletePod, exists, true, ['FailedDelete']],
    ['a revision delete answered NotFound', deleteRevision, gone, false, []],
    ['a failure without a status reason', createPod, { reason: '', message: 'socket hang up' }, true, ['FailedCreate']],
  ])('%s', (_what, action, failure, fails, reasons) => {
    const outcome = writeOutcome(v1, action, failure);
    expect(outcome.fails).toBe(fails);
    expect(outcome.events.map((e) => e.reason)).toEqual(reasons);
  });

  it("names the claim in the pod's event, as the reference's pod control does", () => {
    const claimExists = { reason: 'AlreadyExists', message: 'persistentvolumeclaims "data-web-0" already exists' };
    expect(writeOutcome(v1, createClaim, claimExists).events).toEqual([
      {
        type: 'Warning',
        reason: 'FailedCreate',
        note: 'create Pod web-0 in StatefulSet web failed error: failed to create PVC data-web-0: persistentvolumeclaims "data-web-0" already exists',
      },
    ]);
  });
});
