import { describe, expect, it } from 'vitest';
import { planSync } from './core.ts';
import { at, NOW, pdb, pod, ref, workload, workloads } from './testing.ts';
import { explainBudget, explainPod, unhealthyReason } from './why.ts';

/** The answer for a budget whose stored status is what the controller would write now. */
function settled(spec: Record<string, unknown>, pods = threePods(), objects = workloads()) {
  const draft = pdb(spec);
  const plan = planSync({ pdb: draft, candidates: pods, workloads: objects, nowMs: NOW });
  const stored = pdb(spec, { ...plan.status });
  return explainBudget(
    stored,
    planSync({ pdb: stored, candidates: pods, workloads: objects, nowMs: NOW }),
    objects,
    NOW,
  );
}

const threePods = (thirdReady = false) => [
  pod('a', { ready: true }),
  pod('b', { ready: true }),
  pod('c', { ready: thirdReady }),
];

describe('why pdb', () => {
  it('an integer minAvailable counts matched pods and names the unready one', () => {
    const a = settled({ minAvailable: 2 });
    expect(a.summary).toBe('no disruption is allowed: 2 healthy and 2 must stay healthy');
    expect(a.details).toEqual([
      'minAvailable 2: that many must stay healthy',
      'expected 3: the pods the selector matches (an integer minAvailable counts pods, not scales)',
      'healthy 2 of the 3 matched pods',
      'pod c is not counted as healthy: not Ready (Running)',
      "an eviction of a Ready pod such as a would be refused now: Cannot evict pod as it would violate the pod's disruption budget. The disruption budget budget needs 2 healthy pods and has 2 currently",
    ]);
  });

  it('one disruption to spend', () => {
    const a = settled({ minAvailable: 2 }, threePods(true));
    expect(a.summary).toBe('1 disruption allowed: 3 healthy, 2 must stay healthy');
    expect(a.details.at(-1)).toBe(
      'an eviction of a Ready pod such as a would be allowed now: the budget budget has a disruption to spend',
    );
  });

  it('maxUnavailable names the workload scale it comes from and the unmanaged pods', () => {
    const owner = ref('StatefulSet', 'db');
    const pods = [
      pod('db-0', { ready: true, owner }),
      pod('db-1', { ready: true, owner }),
      pod('stray', { ready: true }),
    ];
    const a = settled({ maxUnavailable: 1 }, pods, workloads([workload('StatefulSet', 'db', 4)]));
    expect(a.summary).toBe('no disruption is allowed: 3 healthy and 3 must stay healthy');
    expect(a.details).toContain('maxUnavailable 1 of the 4 expected pods leaves 3 that must stay healthy');
    expect(a.details).toContain('StatefulSet/db asks for 4 replicas (pod db-0 belongs to it)');
    expect(a.details).toContain('not counted, no controller: stray');
  });

  it('a percentage minAvailable comes from the scale too', () => {
    const owner = ref('ReplicaSet', 'rs');
    const pods = [pod('a', { ready: true, owner }), pod('b', { ready: true, owner })];
    const a = settled({ minAvailable: '50%' }, pods, workloads([workload('ReplicaSet', 'rs', 4)]));
    expect(a.summary).toBe('no disruption is allowed: 2 healthy and 2 must stay healthy');
    expect(a.details).toContain('minAvailable 50% of the 4 expected pods is 2 that must stay healthy');
    expect(a.details).toContain('ReplicaSet/rs asks for 4 replicas (pod a belongs to it)');
  });

  it('a budget that cannot be computed says why', () => {
    const a = settled({ minAvailable: '50%' }, [pod('x', { ready: true, owner: ref('ReplicaSet', 'gone') })]);
    expect(a.summary).toMatch(
      /^no disruption is allowed: the budget cannot be computed: found no controllers for pod "x"/,
    );
    expect(a.details[0]).toMatch(/^CalculateExpectedPodCountFailed: /);
  });

  it('a stale stored status is pointed out', () => {
    const stale = pdb({ minAvailable: 1 }, { observedGeneration: 1, disruptionsAllowed: 0, currentHealthy: 0 });
    const pods = threePods(true);
    const a = explainBudget(
      stale,
      planSync({ pdb: stale, candidates: pods, workloads: workloads(), nowMs: NOW }),
      workloads(),
      NOW,
    );
    expect(a.details).toContain(
      'the stored status is behind (says 0 allowed, 0 healthy): the disruption controller has not written it yet',
    );
  });

  it.each([
    ['terminating', pod('p', { ready: true, terminating: true }), {}, 'terminating'],
    [
      'being evicted',
      pod('p', { ready: true }),
      { p: at(-30_000) },
      `being evicted (recorded ${at(-30_000)}; counted as disrupted until ${new Date(NOW + 90_000).toISOString()})`,
    ],
    ['eviction record expired', pod('p', { ready: true }), { p: at(-180_000) }, undefined],
    ['no Ready condition', pod('p', { phase: 'Pending' }), {}, 'not Ready (Pending, no Ready condition)'],
    [
      'Ready False with a reason',
      pod('p', {
        conditions: [
          {
            type: 'Ready',
            status: 'False',
            reason: 'ContainersNotReady',
            message: 'containers with unready status: [c]',
          },
        ],
      }),
      {},
      'not Ready (Running, ContainersNotReady: containers with unready status: [c])',
    ],
    ['Ready', pod('p', { ready: true }), {}, undefined],
  ])('unhealthy reason: %s', (_name, p, disrupted, expected) => {
    expect(unhealthyReason(p, disrupted, NOW)).toBe(expected);
  });
});

describe('why pod', () => {
  const budget = (allowed: number) =>
    pdb(
      { minAvailable: 2 },
      { observedGeneration: 1, disruptionsAllowed: allowed, currentHealthy: 2, desiredHealthy: 2 },
    );

  it.each([
    ['no budget', pod('p', { ready: true }), [], 'eviction allowed now: no budget covers it'],
    [
      'pending pod',
      pod('p', { phase: 'Pending' }),
      [budget(0)],
      'eviction allowed now: it is pending, finished or terminating, so no budget is consulted',
    ],
    [
      'budget spent',
      pod('p', { ready: true }),
      [budget(0)],
      /^eviction refused now: Cannot evict pod .* needs 2 healthy pods and has 2 currently$/,
    ],
    [
      'budget to spend',
      pod('p', { ready: true }),
      [budget(1)],
      'eviction allowed now: the budget budget has a disruption to spend',
    ],
    [
      'two budgets',
      pod('p', { ready: true }),
      [budget(1), { ...budget(1), metadata: { ...budget(1).metadata, name: 'other' } }],
      /^eviction refused now: This pod has more than one PodDisruptionBudget/,
    ],
  ])('%s', (_name, p, pdbs, summary) => {
    const a = explainPod(p, pdbs, NOW);
    if (typeof summary === 'string') expect(a.summary).toBe(summary);
    else expect(a.summary).toMatch(summary);
    expect(a.details.slice(1)).toHaveLength(pdbs.length);
  });
});
