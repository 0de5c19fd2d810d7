/**
 * The eviction subresource's decisions (reference notes §2), run through the pure functions and the
 * procedure over an in-memory EvictionStore that can inject conflicts: every row of the §2.4 vectors
 * (E1–E14) plus the §2.2 table, dry runs, preconditions and the unrecognized-policy refusal.
 */
import { describe, expect, it } from 'vitest';
import {
  canIgnorePdb,
  checkAndDecrement,
  EVICTION_REFUSED_MESSAGE,
  MAX_DISRUPTED_POD_SIZE,
  MULTIPLE_PDBS_MESSAGE,
  matchingPdbs,
  type Refusal,
  unhealthyPodDecision,
} from '../src/api/eviction.ts';
import type { Pod } from '../src/api/types/core.ts';
import type { PodDisruptionBudget } from '../src/api/types/policy.ts';
import type { DeleteOptions, Reply } from '../src/controlplane/api.ts';
import { ApiError, conflict } from '../src/controlplane/errors.ts';
import { type EvictionStore, evictPod, withDisruptionTarget } from '../src/controlplane/eviction.ts';

const NOW = new Date('2024-01-01T00:10:00Z');
const STAMP = '2024-01-01T00:10:00Z';

function pod(o: { phase?: string; ready?: boolean; terminating?: boolean; labels?: Record<string, string> } = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web-0',
      namespace: 'ns',
      uid: 'pod-uid',
      resourceVersion: '5',
      labels: o.labels ?? { app: 'web' },
      ...(o.terminating ? { deletionTimestamp: STAMP } : {}),
    },
    spec: { containers: [{ name: 'c', image: 'i' }] },
    status: {
      phase: (o.phase ?? 'Running') as never,
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
    },
  };
}

function pdb(
  status: Record<string, unknown>,
  o: { name?: string; selector?: unknown; policy?: string; generation?: number } = {},
): PodDisruptionBudget {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: o.name ?? 'budget', namespace: 'ns', generation: o.generation ?? 1, resourceVersion: '20' },
    spec: {
      minAvailable: 1,
      selector: (o.selector === undefined ? { matchLabels: { app: 'web' } } : o.selector) as never,
      ...(o.policy ? { unhealthyPodEvictionPolicy: o.policy } : {}),
    },
    status: { observedGeneration: 1, ...status },
  };
}

const sufficient = (allowed: number) => ({
  disruptionsAllowed: allowed,
  currentHealthy: 3,
  desiredHealthy: 3 - allowed,
  expectedPods: 3,
  conditions: [
    {
      type: 'DisruptionAllowed',
      status: 'True',
      reason: 'SufficientPods',
      message: '',
      observedGeneration: 1,
      lastTransitionTime: '2024-01-01T00:00:00Z',
    },
  ],
});

/** An in-memory store; `faults` make writes conflict a number of times, `podSequence` replaces the pod between reads. */
class FakeStore implements EvictionStore {
  pod: Pod;
  pdbs: PodDisruptionBudget[];
  deletes: DeleteOptions[] = [];
  pdbWrites: PodDisruptionBudget[] = [];
  podWrites: Pod[] = [];
  sleeps = 0;
  faults = { podWrite: 0, delete: 0, pdbWrite: 0 };
  podSequence: Pod[] = [];
  private rv = 100;

  constructor(p: Pod, pdbs: PodDisruptionBudget[]) {
    this.pod = p;
    this.pdbs = pdbs;
  }
  now = () => NOW;
  getPod = () => {
    if (this.podSequence.length) this.pod = this.podSequence.shift()!;
    return this.pod;
  };
  listPdbs = () => this.pdbs;
  getPdb = (_ns: string, name: string) => {
    const found = this.pdbs.find((p) => p.metadata.name === name);
    if (!found) throw new ApiError(404, 'NotFound', 'gone');
    return found;
  };
  writePdbStatus = async (p: PodDisruptionBudget) => {
    if (this.faults.pdbWrite > 0) {
      this.faults.pdbWrite--;
      // Someone else wrote the PDB meanwhile: its version moves on.
      this.pdbs = this.pdbs.map((x) =>
        x.metadata.name === p.metadata.name
          ? { ...x, metadata: { ...x.metadata, resourceVersion: String(++this.rv) } }
          : x,
      );
      throw conflict({ group: 'policy', plural: 'poddisruptionbudgets' }, p.metadata.name!, 'stale');
    }
    const stored = { ...p, metadata: { ...p.metadata, resourceVersion: String(++this.rv) } };
    this.pdbs = this.pdbs.map((x) => (x.metadata.name === p.metadata.name ? stored : x));
    this.pdbWrites.push(stored);
  };
  writePod = async (p: Pod) => {
    if (this.faults.podWrite > 0) {
      this.faults.podWrite--;
      throw conflict({ group: '', plural: 'pods' }, 'web-0', 'stale');
    }
    this.pod = { ...p, metadata: { ...p.metadata, resourceVersion: String(++this.rv) } };
    this.podWrites.push(this.pod);
    return this.pod;
  };
  deletePod = async (_ns: string, _name: string, options: DeleteOptions) => {
    this.deletes.push(options);
    if (this.faults.delete > 0) {
      this.faults.delete--;
      throw conflict({ group: '', plural: 'pods' }, 'web-0', 'Precondition failed');
    }
  };
  sleep = async () => {
    this.sleeps++;
  };
}

const OPTS: DeleteOptions = { dryRun: false };

async function outcome(
  run: Promise<Reply>,
): Promise<{ code: number; message?: string; cause?: string; retryAfter?: number }> {
  try {
    const r = await run;
    return { code: r.status, message: (r.body as { message?: string }).message };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return {
      code: err.code,
      message: err.message,
      cause: err.details?.causes?.[0]?.message,
      retryAfter: err.details?.retryAfterSeconds,
    };
  }
}

describe('§2.4 eviction vectors', () => {
  it('E1: Ready pod, allowed 0, 2/2 → 429 needs 2 has 2, no Retry-After, no delete', async () => {
    const s = new FakeStore(pod(), [pdb({ disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2 })]);
    expect(await outcome(evictPod(s, 'ns', 'web-0', OPTS))).toEqual({
      code: 429,
      message: EVICTION_REFUSED_MESSAGE,
      cause: 'The disruption budget budget needs 2 healthy pods and has 2 currently',
      retryAfter: undefined,
    });
    expect(s.deletes).toEqual([]);
  });

  it.each([undefined, 'IfHealthyBudget'])(
    'E2: unready pod, 2/2, policy %s → deleted pinned to its resourceVersion',
    async (policy) => {
      const s = new FakeStore(pod({ ready: false }), [
        pdb({ disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2 }, { policy }),
      ]);
      expect((await outcome(evictPod(s, 'ns', 'web-0', OPTS))).code).toBe(201);
      // The condition write bumps the version; the delete is pinned to that bumped version.
      expect(s.deletes).toEqual([
        { dryRun: false, preconditions: { resourceVersion: s.podWrites[0].metadata.resourceVersion } },
      ]);
      expect(s.pdbWrites).toEqual([]);
    },
  );

  it('E3: unready pod, 0/0 → 429 needs 0 has 0', async () => {
    const s = new FakeStore(pod({ ready: false }), [
      pdb({ disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0 }),
    ]);
    expect(await outcome(evictPod(s, 'ns', 'web-0', OPTS))).toMatchObject({
      code: 429,
      cause: 'The disruption budget budget needs 0 healthy pods and has 0 currently',
    });
  });

  it('E4: unready pod, AlwaysAllow, allowed 0 → deleted pinned', async () => {
    const s = new FakeStore(pod({ ready: false }), [
      pdb({ disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 3 }, { policy: 'AlwaysAllow' }),
    ]);
    expect((await outcome(evictPod(s, 'ns', 'web-0', OPTS))).code).toBe(201);
    expect(s.deletes[0].preconditions?.resourceVersion).toBeDefined();
    expect(s.pdbWrites).toEqual([]);
  });

  it.each([
    ['Pending', pod({ phase: 'Pending' }), true],
    ['Succeeded', pod({ phase: 'Succeeded' }), false],
    ['Failed', pod({ phase: 'Failed' }), false],
    ['terminating', pod({ terminating: true }), false],
  ])('E5: %s pod is deleted without consulting the budget (pinned: %s)', async (_name, p, pinned) => {
    const s = new FakeStore(p, [pdb({ disruptionsAllowed: 0 }), pdb({ disruptionsAllowed: 0 }, { name: 'second' })]);
    expect((await outcome(evictPod(s, 'ns', 'web-0', OPTS))).code).toBe(201);
    expect(Boolean(s.deletes[0].preconditions?.resourceVersion)).toBe(pinned);
    expect(s.pdbWrites).toEqual([]);
  });

  it('E6: Ready pod, allowed 1 → deleted; allowed 0, InsufficientPods, disruptedPods[pod] = now', async () => {
    const s = new FakeStore(pod(), [pdb(sufficient(1))]);
    expect((await outcome(evictPod(s, 'ns', 'web-0', OPTS))).code).toBe(201);
    expect(s.pdbWrites[0].status).toMatchObject({ disruptionsAllowed: 0, disruptedPods: { 'web-0': STAMP } });
    expect(s.pdbWrites[0].status?.conditions?.[0]).toMatchObject({
      status: 'False',
      reason: 'InsufficientPods',
      lastTransitionTime: STAMP,
    });
    expect(s.deletes).toEqual([{ dryRun: false }]);
    expect(s.podWrites[0].status?.conditions).toContainEqual({
      type: 'DisruptionTarget',
      status: 'True',
      reason: 'EvictionByEvictionAPI',
      message: 'Eviction API: evicting',
      lastTransitionTime: STAMP,
    });
  });

  it('E7: Ready pod, allowed 3 → allowed 2, condition unchanged', async () => {
    const s = new FakeStore(pod(), [pdb(sufficient(3))]);
    expect((await outcome(evictPod(s, 'ns', 'web-0', OPTS))).code).toBe(201);
    expect(s.pdbWrites[0].status).toMatchObject({ disruptionsAllowed: 2 });
    expect(s.pdbWrites[0].status?.conditions).toEqual(sufficient(3).conditions);
  });

  it.each([
    ['Ready', pod()],
    ['not Ready, budget needed', pod({ ready: false })],
  ])('E8: %s pod, observedGeneration behind → 429 still being processed, Retry-After 10', async (_n, p) => {
    const s = new FakeStore(p, [pdb({ ...sufficient(2), currentHealthy: 0 }, { generation: 2 })]);
    expect(await outcome(evictPod(s, 'ns', 'web-0', OPTS))).toEqual({
      code: 429,
      message: EVICTION_REFUSED_MESSAGE,
      cause: 'The disruption budget budget is still being processed by the server.',
      retryAfter: 10,
    });
  });

  it('E9: two matching budgets → Status Failure, code 500, nothing deleted', async () => {
    const s = new FakeStore(pod(), [pdb(sufficient(1)), pdb(sufficient(1), { name: 'second', selector: {} })]);
    const reply = await evictPod(s, 'ns', 'web-0', OPTS);
    expect(reply.status).toBe(500);
    expect(reply.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: MULTIPLE_PDBS_MESSAGE,
      code: 500,
    });
    expect(s.deletes).toEqual([]);
  });

  it('E10: an empty selector matches; allowed 0 with 3/3 → 429', async () => {
    const s = new FakeStore(pod(), [
      pdb({ disruptionsAllowed: 0, currentHealthy: 3, desiredHealthy: 3 }, { selector: {} }),
    ]);
    expect((await outcome(evictPod(s, 'ns', 'web-0', OPTS))).code).toBe(429);
  });

  it('E11: guarded delete of an unready pod hits a resourceVersion conflict → 429 still being processed', async () => {
    const s = new FakeStore(pod({ ready: false }), [
      pdb({ disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2 }),
    ]);
    s.faults.delete = 1;
    expect(await outcome(evictPod(s, 'ns', 'web-0', OPTS))).toMatchObject({
      code: 429,
      cause: 'The disruption budget budget is still being processed by the server.',
      retryAfter: 10,
    });
  });

  it('E12: pending pod whose delete always conflicts → 20 attempts, then the 409', async () => {
    const s = new FakeStore(pod({ phase: 'Pending' }), [pdb({ disruptionsAllowed: 0 })]);
    s.faults.delete = 1000;
    expect((await outcome(evictPod(s, 'ns', 'web-0', OPTS))).code).toBe(409);
    expect(s.deletes).toHaveLength(20);
    expect(s.sleeps).toBe(19);
  });

  it('E13: pending pod, delete conflicts, caller pinned a resourceVersion → 1 attempt, 409', async () => {
    const s = new FakeStore(pod({ phase: 'Pending' }), [pdb({ disruptionsAllowed: 0 })]);
    s.faults.delete = 1000;
    expect(
      (await outcome(evictPod(s, 'ns', 'web-0', { dryRun: false, preconditions: { resourceVersion: '5' } }))).code,
    ).toBe(409);
    expect(s.deletes).toHaveLength(1);
  });

  it('E14: pending pod turns Running between retries → falls through to the budget → 429', async () => {
    const s = new FakeStore(pod({ phase: 'Pending' }), [
      pdb({ disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 }),
    ]);
    s.podSequence = [pod({ phase: 'Pending' }), pod({ phase: 'Running' })];
    s.faults.delete = 1;
    expect((await outcome(evictPod(s, 'ns', 'web-0', OPTS))).code).toBe(429);
    expect(s.deletes).toHaveLength(1);
  });
});

describe('§2.2 checkAndDecrement', () => {
  it.each([
    ['observedGeneration behind', pdb(sufficient(1), { generation: 2 }), 429, 'still being processed'],
    [
      'negative allowance',
      pdb({ disruptionsAllowed: -1 }),
      403,
      'poddisruptionbudget.policy "budget" is forbidden: pdb disruptions allowed is negative',
    ],
    [
      'disruptedPods over 2000',
      pdb({
        ...sufficient(1),
        disruptedPods: Object.fromEntries(
          Array.from({ length: MAX_DISRUPTED_POD_SIZE + 1 }, (_, i) => [`p${i}`, STAMP]),
        ),
      }),
      403,
      'DisruptedPods map too big - too many evictions not confirmed by PDB controller',
    ],
    [
      'no allowance',
      pdb({ disruptionsAllowed: 0, currentHealthy: 4, desiredHealthy: 4 }),
      429,
      'needs 4 healthy pods and has 4 currently',
    ],
  ])('%s → %i', (_name, budget, code, text) => {
    const r = checkAndDecrement(budget, 'web-0', NOW, false);
    expect('refusal' in r && r.refusal.code).toBe(code);
    const e = (r as { refusal: Refusal }).refusal;
    expect(`${e.message} ${e.details?.causes?.[0]?.message ?? ''}`).toContain(text);
  });

  const refusedWith = (conditions: unknown[], counts = { currentHealthy: 5, desiredHealthy: 4 }) =>
    pdb({ disruptionsAllowed: 0, ...counts, conditions });
  const condition = (reason: string, message: string) => ({
    type: 'DisruptionAllowed',
    status: 'False',
    reason,
    message,
  });
  it.each([
    // Right after an eviction spent the last disruption: the controller has not recounted the healthy pods yet.
    ['allowance spent, healthy above desired', refusedWith([]), 'does not allow evicting pods currently'],
    [
      'healthy not above desired',
      refusedWith([], { currentHealthy: 4, desiredHealthy: 4 }),
      'needs 4 healthy pods and has 4 currently',
    ],
    [
      'a failed sync comes first, its counts untrusted',
      refusedWith([condition('SyncFailed', 'found no controllers')], { currentHealthy: 0, desiredHealthy: 4 }),
      'does not allow evicting pods currently because it failed sync: found no controllers',
    ],
    [
      "the condition's reason, healthy above desired",
      refusedWith([condition('InsufficientPods', 'two pods missing')]),
      'does not allow evicting pods currently (InsufficientPods): two pods missing',
    ],
    [
      'negative allowance',
      pdb({ disruptionsAllowed: -1 }),
      'does not allow evicting pods currently: pdb disruptions allowed is negative',
    ],
  ])('the cause, as the reference words it: %s', (_name, budget, cause) => {
    const r = checkAndDecrement(budget, 'web-0', NOW, false);
    expect((r as { refusal: Refusal }).refusal.details.causes).toEqual([
      { reason: 'DisruptionBudget', message: `The disruption budget budget ${cause}` },
    ]);
  });

  it('exactly 2000 entries are still accepted', () => {
    const entries = Object.fromEntries(Array.from({ length: MAX_DISRUPTED_POD_SIZE }, (_, i) => [`p${i}`, STAMP]));
    const r = checkAndDecrement(pdb({ ...sufficient(1), disruptedPods: entries }), 'web-0', NOW, false);
    expect('pdb' in r && Object.keys(r.pdb.status!.disruptedPods!).length).toBe(MAX_DISRUPTED_POD_SIZE + 1);
  });

  it('dry run decrements in memory but records nothing', () => {
    const r = checkAndDecrement(pdb(sufficient(1)), 'web-0', NOW, true);
    expect('pdb' in r && r.pdb.status).toMatchObject({ disruptionsAllowed: 0 });
    expect('pdb' in r && r.pdb.status?.disruptedPods).toBeUndefined();
  });
});

describe('procedure details', () => {
  it('no matching budget → deleted without a resourceVersion pin', async () => {
    const s = new FakeStore(pod(), [pdb(sufficient(0), { selector: { matchLabels: { app: 'other' } } })]);
    expect((await outcome(evictPod(s, 'ns', 'web-0', OPTS))).code).toBe(201);
    expect(s.deletes).toEqual([{ dryRun: false }]);
  });

  it('budgets with a null or invalid selector are not matched', () => {
    const p = pod();
    const budgets = [
      pdb({}, { name: 'null', selector: null }),
      pdb({}, { name: 'bad', selector: { matchExpressions: [{ key: 'app', operator: 'Near', values: ['x'] }] } }),
      pdb({}, { name: 'ok' }),
    ];
    expect(matchingPdbs(p, budgets).map((b) => b.metadata.name)).toEqual(['ok']);
  });

  it('a PDB write conflict re-reads the PDB and retries; after 20 conflicts → 504', async () => {
    const once = new FakeStore(pod(), [pdb(sufficient(2))]);
    once.faults.pdbWrite = 1;
    expect((await outcome(evictPod(once, 'ns', 'web-0', OPTS))).code).toBe(201);
    expect(once.pdbWrites[0].status?.disruptionsAllowed).toBe(1);
    expect(once.sleeps).toBe(1);

    const always = new FakeStore(pod(), [pdb(sufficient(2))]);
    always.faults.pdbWrite = 1000;
    expect(await outcome(evictPod(always, 'ns', 'web-0', OPTS))).toMatchObject({
      code: 504,
      message: 'Timeout: couldn\'t update PodDisruptionBudget "budget" due to conflicts',
      retryAfter: 10,
    });
    expect(always.deletes).toEqual([]);
  });

  it('dry run: nothing written, the delete is a dry run', async () => {
    const s = new FakeStore(pod(), [pdb(sufficient(1))]);
    expect((await outcome(evictPod(s, 'ns', 'web-0', { dryRun: true }))).code).toBe(201);
    expect(s.pdbWrites).toEqual([]);
    expect(s.podWrites).toEqual([]);
    expect(s.deletes).toEqual([{ dryRun: true }]);
  });

  it('dry run still refuses what the budget refuses', async () => {
    const s = new FakeStore(pod(), [pdb({ disruptionsAllowed: 0 })]);
    expect((await outcome(evictPod(s, 'ns', 'web-0', { dryRun: true }))).code).toBe(429);
  });

  it('caller preconditions are checked against the latest pod: UID and resourceVersion', async () => {
    const uid = new FakeStore(pod(), []);
    expect(
      await outcome(evictPod(uid, 'ns', 'web-0', { dryRun: false, preconditions: { uid: 'other' } })),
    ).toMatchObject({
      code: 409,
      message:
        'Operation cannot be fulfilled on Pod "web-0": the UID in the precondition (other) does not match the UID in record (pod-uid). The object might have been deleted and then recreated',
    });
    const rv = new FakeStore(pod(), []);
    expect(
      (await outcome(evictPod(rv, 'ns', 'web-0', { dryRun: false, preconditions: { resourceVersion: '4' } }))).message,
    ).toContain('the ResourceVersion in the precondition (4) does not match the ResourceVersion in record (5)');
  });

  it("the caller's resourceVersion pin moves to the version the condition write produced", async () => {
    const s = new FakeStore(pod(), []);
    expect(
      (await outcome(evictPod(s, 'ns', 'web-0', { dryRun: false, preconditions: { resourceVersion: '5' } }))).code,
    ).toBe(201);
    expect(s.deletes[0].preconditions?.resourceVersion).toBe(s.podWrites[0].metadata.resourceVersion);
  });

  it('an unready pod under an unrecognized policy is refused (spec §2.8)', async () => {
    const s = new FakeStore(pod({ ready: false }), [pdb(sufficient(2), { policy: 'Sometimes' })]);
    expect(await outcome(evictPod(s, 'ns', 'web-0', OPTS))).toMatchObject({
      code: 429,
      cause: expect.stringContaining('unrecognized unhealthyPodEvictionPolicy "Sometimes"'),
    });
    expect(s.deletes).toEqual([]);
    // A Ready pod under the same budget spends the budget as usual.
    const ready = new FakeStore(pod(), [pdb(sufficient(2), { policy: 'Sometimes' })]);
    expect((await outcome(evictPod(ready, 'ns', 'web-0', OPTS))).code).toBe(201);
  });

  it.each([
    [undefined, { currentHealthy: 2, desiredHealthy: 2 }, 'guarded'],
    ['IfHealthyBudget', { currentHealthy: 3, desiredHealthy: 2 }, 'guarded'],
    ['IfHealthyBudget', { currentHealthy: 1, desiredHealthy: 2 }, 'budget'],
    ['IfHealthyBudget', { currentHealthy: 0, desiredHealthy: 0 }, 'budget'],
    ['AlwaysAllow', { currentHealthy: 0, desiredHealthy: 5 }, 'guarded'],
    ['Sometimes', { currentHealthy: 3, desiredHealthy: 2 }, 'refuse'],
  ])('unready pod, policy %s, %j → %s', (policy, status, want) => {
    expect(unhealthyPodDecision(pdb(status, { policy }))).toBe(want);
  });

  it.each([
    ['Pending', true],
    ['Succeeded', true],
    ['Failed', true],
    ['Running', false],
    ['Unknown', false],
  ])('canIgnorePdb(%s) = %s', (phase, want) => {
    expect(canIgnorePdb(pod({ phase }))).toBe(want);
  });

  it('the DisruptionTarget condition is not rewritten when already there', () => {
    const marked = withDisruptionTarget(pod(), NOW)!;
    expect(withDisruptionTarget(marked, new Date(NOW.getTime() + 60_000))).toBeUndefined();
  });
});
