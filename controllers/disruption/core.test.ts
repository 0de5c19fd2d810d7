/** Table tests of the disruption controller's pure core, one row per decision of the reference notes §1 and §4. */
import { describe, expect, it } from 'vitest';
import type { LabelSelector } from '../../src/api/meta.ts';
import { ResourceRegistry } from '../../src/api/registry.ts';
import type { Pod } from '../../src/api/types/core.ts';
import {
  buildDisruptedPods,
  countHealthy,
  expectedCounts,
  failSafeStatus,
  nextStatus,
  parsedSelector,
  planSync,
  scaledValue,
  selectPods,
  setCondition,
} from './core.ts';
import { expectedScale, scaleResourceFor } from './finders.ts';
import { at, NOW, NS, pdb, pod, ref, workload, workloads } from './testing.ts';

const MIN = 60_000;

describe('scaledValue (GetScaledValueFromIntOrPercent, always rounding up in the controller)', () => {
  it.each([
    ['34%', 3, 2],
    ['28%', 11, 4],
    ['28%', 22, 7],
    ['30%', 7, 3],
    ['30%', 3, 1],
    ['20%', 10, 2],
    ['1%', 1, 1],
    ['50%', 0, 0],
    ['100%', 7, 7],
    ['0%', 7, 0],
    ['+5%', 100, 5],
    [5, 3, 5], // integers are not clamped to the total
    [0, 3, 0],
  ] as const)('%j of %i → %i', (value, total, want) => {
    expect(scaledValue(value, total, true)).toBe(want);
  });

  it('rounds down when asked (not used by the controller)', () => {
    expect(scaledValue('34%', 3, false)).toBe(1);
    expect(scaledValue('30%', 7, false)).toBe(2);
  });

  it.each([
    ['abc%', 'invalid value for IntOrString: invalid value "abc%": strconv.Atoi: parsing "abc": invalid syntax'],
    ['%', 'invalid value for IntOrString: invalid value "%": strconv.Atoi: parsing "": invalid syntax'],
    ['-5', 'invalid value for IntOrString: invalid type: string is not a percentage'],
    ['5', 'invalid value for IntOrString: invalid type: string is not a percentage'],
    ['150%', 'invalid value for IntOrString: "150%": must not be greater than 100%'],
    ['-5%', 'invalid value for IntOrString: "-5%": must be greater than or equal to 0'],
    [-5, 'invalid value for IntOrString: -5: must be greater than or equal to 0'],
    [1.5, 'invalid value for IntOrString: invalid type: neither int nor percentage'],
    [true, 'invalid value for IntOrString: invalid type: neither int nor percentage'],
    [null, 'nil value for IntOrString'],
  ] as const)('%j is refused: %s', (value, message) => {
    expect(() => scaledValue(value as never, 10, true)).toThrow(message);
  });
});

describe('expectedPods and desiredHealthy per mode (§1.3)', () => {
  const rs = ref('ReplicaSet', 'rs');
  const three = [pod('a', { owner: rs }), pod('b', { owner: rs }), pod('c', { owner: rs })];
  const w = workloads([workload('ReplicaSet', 'rs', 5)]);

  it.each([
    ['maxUnavailable int', { maxUnavailable: 1 }, 5, 4],
    ['maxUnavailable %, rounded up', { maxUnavailable: '30%' }, 5, 3],
    ['maxUnavailable above expected clamps desired at 0', { maxUnavailable: 9 }, 5, 0],
    ['minAvailable int counts matched pods, value as is', { minAvailable: 2 }, 3, 2],
    ['minAvailable int above the pod count', { minAvailable: 9 }, 3, 9],
    ['minAvailable % of the controllers’ scale', { minAvailable: '50%' }, 5, 3],
    ['neither set', { selector: { matchLabels: { app: 'web' } } }, 0, 0],
    ['maxUnavailable wins when both are present', { minAvailable: 1, maxUnavailable: 2 }, 5, 3],
  ])('%s', (_name, spec, expected, desired) => {
    const c = expectedCounts(pdb(spec), three, w);
    expect({ expected: c.expected, desired: c.desired }).toEqual({ expected, desired });
  });

  it('minAvailable int counts every matched pod: all phases, terminating, unmanaged', () => {
    const pods = [
      pod('p', { phase: 'Pending' }),
      pod('s', { phase: 'Succeeded' }),
      pod('t', { terminating: true }),
      pod('naked'),
    ];
    expect(expectedCounts(pdb({ minAvailable: 1 }), pods, workloads()).expected).toBe(4);
  });
});

describe('controller finders (expected count per owner kind)', () => {
  const dep = ref('Deployment', 'web');
  const rsA = ref('ReplicaSet', 'web-a');
  const rsB = ref('ReplicaSet', 'web-b');
  it.each([
    [
      'ReplicationController (core group)',
      [pod('a', { owner: ref('ReplicationController', 'rc') })],
      [workload('ReplicationController', 'rc', 4)],
      {},
      4,
    ],
    [
      'Deployment through two ReplicaSets counted once',
      [pod('a', { owner: rsA }), pod('b', { owner: rsA }), pod('c', { owner: rsB })],
      [
        workload('ReplicaSet', 'web-a', 2, dep),
        workload('ReplicaSet', 'web-b', 1, dep),
        workload('Deployment', 'web', 8),
      ],
      {},
      8,
    ],
    [
      'ReplicaSet without Deployment',
      [pod('a', { owner: ref('ReplicaSet', 'solo') })],
      [workload('ReplicaSet', 'solo', 3)],
      {},
      3,
    ],
    [
      'ReplicaSet in the extensions group',
      [pod('a', { owner: ref('ReplicaSet', 'solo', 'solo-uid', 'extensions/v1beta1') })],
      [workload('ReplicaSet', 'solo', 3)],
      {},
      3,
    ],
    [
      'StatefulSet',
      [pod('a', { owner: ref('StatefulSet', 'db') }), pod('b', { owner: ref('StatefulSet', 'db') })],
      [workload('StatefulSet', 'db', 3)],
      {},
      3,
    ],
    [
      'unset replicas mean 1',
      [pod('a', { owner: ref('StatefulSet', 'db') })],
      [workload('StatefulSet', 'db', undefined)],
      {},
      1,
    ],
    [
      'any kind with /scale (generic finder)',
      [pod('a', { owner: ref('Workload', 'custom', 'custom-uid', 'example.com/v1') })],
      [],
      { 'custom-uid': { scale: { uid: 'custom-uid', replicas: 6 } } },
      6,
    ],
    [
      'ReplicaSet whose Deployment vanished: the generic finder reads the ReplicaSet scale',
      [pod('a', { owner: rsA })],
      [workload('ReplicaSet', 'web-a', 2, dep)],
      { 'web-a-uid': { scale: { uid: 'web-a-uid', replicas: 2 } } },
      2,
    ],
    [
      'two controllers add up',
      [pod('a', { owner: ref('StatefulSet', 'db') }), pod('b', { owner: ref('ReplicaSet', 'solo') })],
      [workload('StatefulSet', 'db', 3), workload('ReplicaSet', 'solo', 2)],
      {},
      5,
    ],
    ['naked pods are not counted', [pod('naked')], [], {}, 0],
  ] as const)('%s', (_name, pods, objects, scales, expected) => {
    expect(expectedScale([...pods] as Pod[], workloads([...objects], { ...scales })).expected).toBe(expected);
  });

  it.each([
    [
      'controller not found anywhere',
      [pod('a', { owner: ref('StatefulSet', 'ghost') })],
      [],
      {},
      'found no controllers for pod "a"',
    ],
    [
      'same name, other UID: not ours',
      [pod('a', { owner: ref('StatefulSet', 'db', 'old-uid') })],
      [workload('StatefulSet', 'db', 3)],
      {},
      'found no controllers for pod "a"',
    ],
    [
      'generic scale with another UID: not ours',
      [pod('a', { owner: ref('Workload', 'custom', 'custom-uid', 'example.com/v1') })],
      [],
      { 'custom-uid': { scale: { uid: 'other', replicas: 6 } } },
      'found no controllers for pod "a"',
    ],
    [
      'generic finder error (no /scale) fails the count',
      [pod('a', { owner: ref('ConfigMap', 'cm', 'cm-uid', 'v1') })],
      [],
      { 'cm-uid': { error: 'configmaps does not implement the scale subresource' } },
      'configmaps does not implement the scale subresource',
    ],
    [
      'malformed apiVersion',
      [pod('a', { owner: ref('StatefulSet', 'db', 'db-uid', 'a/b/c') })],
      [],
      {},
      'unexpected GroupVersion string: a/b/c',
    ],
  ] as const)('%s → error', (_name, pods, objects, scales, message) => {
    expect(() => expectedScale([...pods] as Pod[], workloads([...objects], { ...scales }))).toThrow(message);
  });

  it('collects unmanaged pods and the controllers it depended on', () => {
    const r = expectedScale(
      [pod('a', { owner: rsA }), pod('naked')],
      workloads([workload('ReplicaSet', 'web-a', 2, dep), workload('Deployment', 'web', 4)]),
    );
    expect(r).toEqual({ expected: 4, unmanaged: ['naked'], controllers: ['web-a-uid', 'web-uid'] });
  });
});

describe('generic finder mapping (scaleResourceFor)', () => {
  const registry = new ResourceRegistry('orch');
  it.each([
    [ref('Deployment', 'd'), 'deployments'],
    [ref('ReplicaSet', 'r'), 'replicasets'],
    [ref('ReplicationController', 'rc'), 'replicationcontrollers'],
  ])('%j has /scale', (r, plural) => {
    const found = scaleResourceFor(r, registry);
    expect('rt' in found && found.rt.plural).toBe(plural);
  });
  it.each([
    [ref('ConfigMap', 'cm', 'u', 'v1'), 'configmaps does not implement the scale subresource'],
    [
      ref('PodDisruptionBudget', 'p', 'u', 'policy/v1'),
      'poddisruptionbudgets.policy does not implement the scale subresource',
    ],
    [
      ref('TestWorkload', 't', 'u', 'apps.test.io/v1'),
      'no matches for kind "TestWorkload" in version "apps.test.io/v1"',
    ],
    [ref('StatefulSet', 's', 'u', 'a/b/c'), 'unexpected GroupVersion string: a/b/c'],
  ])('%j → %s', (r, error) => {
    expect(scaleResourceFor(r, registry)).toEqual({ error });
  });
});

describe('selectors (§1.4)', () => {
  const pods = [
    pod('web-1', { labels: { app: 'web', tier: 'front' } }),
    pod('db-1', { labels: { app: 'db' } }),
    pod('other-ns', { labels: { app: 'web' }, namespace: 'elsewhere' }),
  ];
  it.each([
    ['null matches nothing', null, []],
    ['absent matches nothing', undefined, []],
    ['{} matches every pod of the namespace', {}, ['web-1', 'db-1']],
    ['matchLabels', { matchLabels: { app: 'web' } }, ['web-1']],
    [
      'matchExpressions In',
      { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'db'] }] },
      ['web-1', 'db-1'],
    ],
    ['matchExpressions DoesNotExist', { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, ['db-1']],
  ])('%s', (_name, selector, names) => {
    const budget = pdb({ minAvailable: 1 });
    budget.spec = { ...budget.spec, selector: selector as never };
    expect(selectPods(budget, pods).map((p) => p.metadata.name)).toEqual(names);
  });

  it.each([
    [
      'bad operator',
      { matchExpressions: [{ key: 'app', operator: 'Near', values: ['x'] }] },
      '"Near" is not a valid label selector operator',
    ],
    ['bad key', { matchLabels: { 'bad key!': 'x' } }, 'key: Invalid value: "bad key!"'],
    [
      'In without values',
      { matchExpressions: [{ key: 'app', operator: 'In', values: [] }] },
      "values set can't be empty",
    ],
  ])('invalid selector (%s) → SyncFailed, NoPods warning, counters kept', (_name, selector, message) => {
    const budget = pdb(
      { minAvailable: 1, selector },
      { currentHealthy: 3, desiredHealthy: 1, expectedPods: 3, disruptionsAllowed: 2, observedGeneration: 1 },
    );
    const plan = planSync({ pdb: budget, candidates: pods, workloads: workloads(), nowMs: NOW });
    expect(plan.error).toContain(message);
    expect(plan.status).toMatchObject({
      currentHealthy: 3,
      desiredHealthy: 1,
      expectedPods: 3,
      disruptionsAllowed: 0,
      observedGeneration: 1,
    });
    expect(plan.status?.conditions?.[0]).toMatchObject({
      type: 'DisruptionAllowed',
      status: 'False',
      reason: 'SyncFailed',
    });
    expect(plan.events).toEqual([
      expect.objectContaining({
        subject: 'pdb',
        type: 'Warning',
        reason: 'NoPods',
        note: expect.stringMatching(/^Failed to get pods: /),
      }),
    ]);
  });
});

describe('currentHealthy (§1.5)', () => {
  const recent = { 'in-map': at(-30_000) };
  it.each([
    ['Ready True counts', pod('in', { ready: true }), {}, 1],
    ['Ready False does not', pod('in', { ready: false }), {}, 0],
    ['no Ready condition does not', pod('in'), {}, 0],
    ['terminating Ready does not', pod('in', { ready: true, terminating: true }), {}, 0],
    ['Ready but recorded in disruptedPods 30 s ago does not', pod('in-map', { ready: true }), recent, 0],
    [
      'Ready and recorded exactly 2 min ago counts (strictly after)',
      pod('in-map', { ready: true }),
      { 'in-map': at(-2 * MIN) },
      1,
    ],
    ['phase is not looked at (Pending but Ready counts)', pod('in', { ready: true, phase: 'Pending' }), {}, 1],
  ])('%s', (_name, p, disrupted, want) => {
    expect(countHealthy([p], disrupted, NOW)).toBe(want);
  });
});

describe('disruptedPods maintenance and recheck (§1.6)', () => {
  it.each([
    [
      'young entry kept, recheck a millisecond past its deadline',
      [pod('a', { ready: true })],
      { a: at(-30_000) },
      { a: at(-30_000) },
      NOW + 90_001,
      [],
    ],
    ['expired entry dropped with NotDeleted', [pod('a', { ready: true })], { a: at(-3 * MIN) }, {}, undefined, ['a']],
    ['entry at exactly its deadline kept', [pod('a')], { a: at(-2 * MIN) }, { a: at(-2 * MIN) }, NOW + 1, []],
    [
      'terminating pod: entry dropped silently',
      [pod('a', { terminating: true })],
      { a: at(-3 * MIN) },
      {},
      undefined,
      [],
    ],
    ['pod gone: entry dropped silently', [pod('b')], { a: at(-10_000) }, {}, undefined, []],
    [
      'earliest deadline wins',
      [pod('a'), pod('b')],
      { a: at(-10_000), b: at(-60_000) },
      { a: at(-10_000), b: at(-60_000) },
      NOW + 60_001,
      [],
    ],
    ['unreadable time dropped', [pod('a')], { a: 'yesterday' }, {}, undefined, []],
  ])('%s', (_name, pods, recorded, kept, recheckAtMs, expired) => {
    const r = buildDisruptedPods(pdb({ minAvailable: 1 }, { disruptedPods: recorded }), pods, NOW);
    expect(r.kept).toEqual(kept);
    expect(r.recheckAtMs).toBe(recheckAtMs);
    expect(r.expired.map((p) => p.metadata.name)).toEqual(expired);
  });

  it('an expired entry produces a NotDeleted warning on the pod and its pod counts again', () => {
    const plan = planSync({
      pdb: pdb({ minAvailable: 1 }, { disruptedPods: { a: at(-3 * MIN) } }),
      candidates: [pod('a', { ready: true })],
      workloads: workloads(),
      nowMs: NOW,
    });
    expect(plan.events).toContainEqual(
      expect.objectContaining({
        subject: 'pod',
        type: 'Warning',
        reason: 'NotDeleted',
        note: "Pod was expected by PDB ns/budget to be deleted but it wasn't",
      }),
    );
    expect(plan.status).toMatchObject({ currentHealthy: 1, disruptionsAllowed: 0 });
    expect(plan.status?.disruptedPods).toBeUndefined();
    expect(plan.recheckAtMs).toBeUndefined();
  });
});

describe('status, conditions and writes (§1.7, §1.8)', () => {
  const counts = { currentHealthy: 3, desiredHealthy: 2, expectedPods: 3 };
  it.each([
    [
      'allowed = healthy - desired',
      { currentHealthy: 3, desiredHealthy: 2, expectedPods: 3 },
      1,
      'True',
      'SufficientPods',
    ],
    ['never negative', { currentHealthy: 1, desiredHealthy: 2, expectedPods: 3 }, 0, 'False', 'InsufficientPods'],
    [
      'expected 0 → 0 even with healthy pods',
      { currentHealthy: 3, desiredHealthy: 0, expectedPods: 0 },
      0,
      'False',
      'InsufficientPods',
    ],
    ['equal → 0', { currentHealthy: 2, desiredHealthy: 2, expectedPods: 2 }, 0, 'False', 'InsufficientPods'],
  ])('%s', (_name, c, allowed, status, reason) => {
    const s = nextStatus(pdb({ minAvailable: 1 }), c, {}, at(0));
    expect(s).toMatchObject({ ...c, disruptionsAllowed: allowed, observedGeneration: 1 });
    expect(s?.conditions).toEqual([
      { type: 'DisruptionAllowed', status, reason, message: '', observedGeneration: 1, lastTransitionTime: at(0) },
    ]);
  });

  const current = {
    currentHealthy: 3,
    desiredHealthy: 2,
    expectedPods: 3,
    disruptionsAllowed: 1,
    observedGeneration: 1,
    conditions: [
      {
        type: 'DisruptionAllowed',
        status: 'True',
        reason: 'SufficientPods',
        message: '',
        observedGeneration: 1,
        lastTransitionTime: at(-MIN),
      },
    ],
  };
  it('no write when nothing changed', () => {
    expect(nextStatus(pdb({ minAvailable: 2 }, current), counts, {}, at(0))).toBeUndefined();
  });
  it('nil and empty disruptedPods compare equal', () => {
    expect(nextStatus(pdb({ minAvailable: 2 }, { ...current, disruptedPods: {} }), counts, {}, at(0))).toBeUndefined();
  });
  it.each([
    ['generation moved', pdb({ minAvailable: 2 }, current, 2)],
    ['condition missing', pdb({ minAvailable: 2 }, { ...current, conditions: [] })],
    [
      'condition says SyncFailed',
      pdb(
        { minAvailable: 2 },
        { ...current, conditions: [{ ...current.conditions[0], status: 'False', reason: 'SyncFailed' }] },
      ),
    ],
    ['a counter differs', pdb({ minAvailable: 2 }, { ...current, expectedPods: 4 })],
    ['disruptedPods differ', pdb({ minAvailable: 2 }, { ...current, disruptedPods: { x: at(-1000) } })],
  ])('writes when %s', (_name, budget) => {
    expect(nextStatus(budget, counts, {}, at(0))).toBeDefined();
  });

  it('keeps foreign conditions and the transition time when the status does not flip', () => {
    const foreign = {
      type: 'example.com/Audited',
      status: 'True' as const,
      reason: 'Done',
      message: 'x',
      lastTransitionTime: at(-5 * MIN),
    };
    const budget = pdb(
      { minAvailable: 2 },
      { ...current, expectedPods: 9, conditions: [foreign, current.conditions[0]] },
    );
    const s = nextStatus(budget, counts, {}, at(0));
    expect(s?.conditions).toEqual([foreign, { ...current.conditions[0] }]);
  });

  it('moves the transition time when the status flips', () => {
    const s = nextStatus(pdb({ minAvailable: 2 }, current), { ...counts, currentHealthy: 2 }, {}, at(0));
    expect(s?.conditions?.[0]).toMatchObject({
      status: 'False',
      reason: 'InsufficientPods',
      lastTransitionTime: at(0),
    });
  });

  it('setCondition: absent → appended with now; present → status/reason/message/generation overwritten', () => {
    const added = setCondition([], { type: 'X', status: 'True', reason: 'R' }, at(0));
    expect(added).toEqual([{ type: 'X', status: 'True', reason: 'R', lastTransitionTime: at(0) }]);
    const same = setCondition(
      added,
      { type: 'X', status: 'True', reason: 'S', message: 'm', observedGeneration: 3 },
      at(60_000),
    );
    expect(same).toEqual([
      { type: 'X', status: 'True', reason: 'S', message: 'm', observedGeneration: 3, lastTransitionTime: at(0) },
    ]);
  });

  it('failSafe: allowed 0, SyncFailed with the message and the old observedGeneration, everything else untouched', () => {
    const budget = pdb({ minAvailable: 2 }, { ...current, disruptedPods: { a: at(-1000) } }, 3);
    const s = failSafeStatus(budget, 'boom', at(0));
    expect(s).toEqual({
      ...current,
      disruptedPods: { a: at(-1000) },
      disruptionsAllowed: 0,
      conditions: [
        {
          type: 'DisruptionAllowed',
          status: 'False',
          reason: 'SyncFailed',
          message: 'boom',
          observedGeneration: 1,
          lastTransitionTime: at(0),
        },
      ],
    });
    expect(failSafeStatus({ ...budget, status: s }, 'boom', at(60_000))).toBeUndefined();
    expect(failSafeStatus({ ...budget, status: s }, 'other', at(60_000))?.conditions?.[0]).toMatchObject({
      message: 'other',
      lastTransitionTime: at(0),
    });
  });
});

describe('events and failures of a whole sync', () => {
  it('no pods: Normal NoPods, 0/0/0 written', () => {
    const plan = planSync({ pdb: pdb({ maxUnavailable: 1 }), candidates: [], workloads: workloads(), nowMs: NOW });
    expect(plan.events).toEqual([
      expect.objectContaining({ type: 'Normal', reason: 'NoPods', note: 'No matching pods found' }),
    ]);
    expect(plan.status).toMatchObject({ expectedPods: 0, desiredHealthy: 0, currentHealthy: 0, disruptionsAllowed: 0 });
  });

  it('finder failure: CalculateExpectedPodCountFailed and SyncFailed', () => {
    const plan = planSync({
      pdb: pdb({ maxUnavailable: '10%' }),
      candidates: [pod('a', { owner: ref('StatefulSet', 'ghost'), ready: true })],
      workloads: workloads(),
      nowMs: NOW,
    });
    expect(plan.error).toBe('found no controllers for pod "a"');
    expect(plan.events).toEqual([
      expect.objectContaining({
        type: 'Warning',
        reason: 'CalculateExpectedPodCountFailed',
        note: 'Failed to calculate the number of expected pods: found no controllers for pod "a"',
      }),
    ]);
    expect(plan.status?.conditions?.[0]).toMatchObject({
      reason: 'SyncFailed',
      message: 'found no controllers for pod "a"',
    });
    expect(plan.controllers).toEqual(['ghost-uid']);
  });

  it.each([
    [
      { minAvailable: 'abc%' },
      'spec.minAvailable: invalid value for IntOrString: invalid value "abc%": strconv.Atoi: parsing "abc": invalid syntax',
    ],
    [
      { maxUnavailable: '-5' },
      'spec.maxUnavailable: invalid value for IntOrString: invalid type: string is not a percentage',
    ],
    [
      { maxUnavailable: '150%' },
      'spec.maxUnavailable: invalid value for IntOrString: "150%": must not be greater than 100%',
    ],
    [{ minAvailable: -5 }, 'spec.minAvailable: invalid value for IntOrString: -5: must be greater than or equal to 0'],
  ])('malformed %j → SyncFailed: %s', (spec, message) => {
    const rs = ref('ReplicaSet', 'rs');
    const plan = planSync({
      pdb: pdb(spec),
      candidates: [pod('a', { owner: rs, ready: true })],
      workloads: workloads([workload('ReplicaSet', 'rs', 1)]),
      nowMs: NOW,
    });
    expect(plan.error).toBe(message);
    expect(plan.status?.disruptionsAllowed).toBe(0);
    expect(plan.status?.conditions?.[0]).toMatchObject({ status: 'False', reason: 'SyncFailed', message });
    expect(plan.events[0]).toMatchObject({ reason: 'CalculateExpectedPodCountFailed' });
  });

  it('unmanaged pods in a percentage mode: UnmanagedPods warning, still counted healthy (rogue pod)', () => {
    const rs = ref('ReplicaSet', 'rs');
    const plan = planSync({
      pdb: pdb({ minAvailable: '100%' }),
      candidates: [
        pod('a', { owner: rs, ready: true }),
        pod('b', { owner: rs, ready: true }),
        pod('rogue', { ready: true }),
      ],
      workloads: workloads([workload('ReplicaSet', 'rs', 2)]),
      nowMs: NOW,
    });
    expect(plan.events).toEqual([
      expect.objectContaining({ type: 'Warning', reason: 'UnmanagedPods', note: expect.stringContaining('rogue') }),
    ]);
    expect(plan.status).toMatchObject({ expectedPods: 2, desiredHealthy: 2, currentHealthy: 3, disruptionsAllowed: 1 });
  });

  it('the worked example of §4', () => {
    const dep = ref('Deployment', 'web');
    const rsA = ref('ReplicaSet', 'web-a');
    const rsB = ref('ReplicaSet', 'web-b');
    const pods = [
      pod('web-a1', { owner: rsA, ready: true }),
      pod('web-a2', { owner: rsA, ready: true, terminating: true }),
      pod('web-a3', { owner: rsA, ready: true }),
      pod('web-a4', { owner: rsA, ready: true }),
      pod('web-a5', { owner: rsA, ready: true }),
      pod('web-a6', { owner: rsA, ready: false }),
      pod('web-b1', { owner: rsB, ready: true }),
      pod('web-b2', { owner: rsB, ready: true }),
      pod('naked', { ready: true }),
    ];
    const plan = planSync({
      pdb: pdb({ maxUnavailable: '25%' }, { disruptedPods: { 'web-a1': at(-30_000) } }),
      candidates: pods,
      workloads: workloads([
        workload('Deployment', 'web', 8),
        workload('ReplicaSet', 'web-a', 6, dep),
        workload('ReplicaSet', 'web-b', 2, dep),
      ]),
      nowMs: NOW,
    });
    expect(plan.status).toMatchObject({
      expectedPods: 8,
      desiredHealthy: 6,
      currentHealthy: 6,
      disruptionsAllowed: 0,
      disruptedPods: { 'web-a1': at(-30_000) },
    });
    expect(plan.status?.conditions?.[0]).toMatchObject({ status: 'False', reason: 'InsufficientPods' });
    expect(plan.events.map((e) => e.reason)).toEqual(['UnmanagedPods']);
    expect(plan.recheckAtMs! - NOW).toBe(90_001);
  });

  it('pods of other namespaces among the candidates are never counted', () => {
    const plan = planSync({
      pdb: pdb({ minAvailable: 1, selector: {} }),
      candidates: [pod('a', { ready: true }), pod('b', { ready: true, namespace: 'other' })],
      workloads: workloads(),
      nowMs: NOW,
    });
    expect(plan.status).toMatchObject({ expectedPods: 1, currentHealthy: 1 });
    expect(NS).toBe('ns');
  });
});

describe('parsedSelector', () => {
  it('parses a selector object once, and an equal but new object again', () => {
    const selector = { matchLabels: { app: 'web' } };
    const parsed = parsedSelector(selector);
    expect(parsedSelector(selector)).toBe(parsed);
    expect(parsed.matches({ app: 'web' })).toBe(true);
    expect(parsedSelector({ matchLabels: { app: 'web' } })).not.toBe(parsed);
  });

  it('throws for an invalid selector on every call', () => {
    // A bad operator, as malformed input from the API would carry it.
    const selector = {
      matchExpressions: [{ key: 'app', operator: 'Bogus', values: ['x'] }],
    } as unknown as LabelSelector;
    expect(() => parsedSelector(selector)).toThrow();
    expect(() => parsedSelector(selector)).toThrow();
  });
});
