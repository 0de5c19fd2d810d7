/**
 * The controller runtime end to end on the embedded control plane, with the sample controller of
 * test/support: informer → queue → reconcile → status write through the Manager, convergence,
 * coalesced events, requeueAfter, TerminalError, retries with backoff under injected 500s, the
 * cache-sync timeout naming its informer, bounded shutdown, leader gating and lost leadership.
 */

import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../src/api/meta.ts';
import type { Lease } from '../src/api/types/coordination.ts';
import { type ControllerContext, type ControllerDefinition, done } from '../src/controller/controller.ts';
import { Manager, type ManagerOptions, type RunOutcome } from '../src/controller/manager.ts';
import { READ, rule } from '../src/controller/permissions.ts';
import { createLogger } from '../src/log/logger.ts';
import { realClock } from '../src/util/clock.ts';
import { rfc3339Micro } from '../src/util/time.ts';
import { itemExponential } from '../src/workqueue/ratelimit.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { eventually } from './support/eventually.ts';
import {
  type DeploymentStatus,
  desiredStatus,
  REQUEUE_ANNOTATION,
  sampleController,
  TERMINAL_ANNOTATION,
} from './support/sample-controller.ts';

let cluster: TestCluster;
const running: { stop: AbortController; done: Promise<unknown> }[] = [];

beforeAll(async () => {
  cluster = await startTestCluster();
});

afterEach(async () => {
  cluster.cp.faults.clear();
  for (const r of running.splice(0)) {
    r.stop.abort();
    await Promise.race([r.done.catch(() => undefined), sleep(5_000)]);
  }
});

afterAll(async () => {
  await cluster?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface LogLine {
  level: string;
  msg: string;
  [k: string]: unknown;
}

function newManager(
  controllers: ControllerDefinition[],
  options: Partial<ManagerOptions> = {},
  client = cluster.client,
) {
  const logs: LogLine[] = [];
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n')) if (line.trim()) logs.push(JSON.parse(line));
      callback();
    },
  });
  const manager = new Manager(
    {
      client,
      registry: cluster.cp.registry,
      naming: cluster.cp.registry.naming,
      recorder: { event() {} },
      logger: createLogger({ verbosity: 2, format: 'json', destination: sink }),
      clock: realClock,
      metrics: new Registry(),
      features: () => false,
      config: {},
    },
    {
      controllers,
      workers: {},
      leaderElection: {
        enabled: false,
        namespace: '',
        name: '',
        identity: '',
        leaseDurationMs: 0,
        renewDeadlineMs: 0,
        retryPeriodMs: 0,
        releaseOnCancel: true,
      },
      syncTimeoutMs: 10_000,
      shutdownTimeoutMs: 2_000,
      ...options,
    },
  );
  return { manager, logs };
}

/** Starts `manager.run`; afterEach stops it. */
function start(manager: Manager): { stop: AbortController; done: Promise<RunOutcome> } {
  const stop = new AbortController();
  const done = manager.run(stop.signal);
  const entry = { stop, done };
  running.push(entry);
  return entry;
}

async function newNamespace(): Promise<string> {
  const name = `rt-${randomUUID().slice(0, 8)}`;
  await cluster.client.kind('Namespace').create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}

function deployment(
  namespace: string,
  name: string,
  replicas: number,
  opts: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { namespace, name, labels: opts.labels ?? { sample: 'true' }, annotations: opts.annotations },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
    },
  };
}

const deployments = () => cluster.client.kind('Deployment');

/** Resolves once the Deployment's status is what the sample controller computes from its current spec. */
async function converged(namespace: string, name: string, ms = 10_000): Promise<KubeObject> {
  return eventually(async () => {
    const d = await deployments().get(namespace, name);
    const status = (d.status ?? {}) as DeploymentStatus;
    const want = desiredStatus(d);
    return status.observedGeneration === want.observedGeneration && status.replicas === want.replicas && d;
  }, ms);
}

describe('sample controller through the Manager (leader election off)', () => {
  it('converges after creates, updates and deletes, and ignores unlabelled objects', async () => {
    const ns = await newNamespace();
    const sample = sampleController();
    const { manager } = newManager([sample.definition]);
    start(manager);
    await eventually(() => manager.hasSynced());

    for (let i = 0; i < 5; i++) await deployments().create(deployment(ns, `web-${i}`, i + 1));
    await deployments().create(deployment(ns, 'ignored', 3, { labels: { sample: 'false' } }));
    for (let i = 0; i < 5; i++) {
      const d = await converged(ns, `web-${i}`);
      expect(d.status).toEqual({ observedGeneration: 1, replicas: i + 1 });
    }

    for (let i = 0; i < 3; i++) await deployments().patch(ns, `web-${i}`, { spec: { replicas: 7 } }, 'merge');
    for (let i = 0; i < 3; i++) {
      const d = await converged(ns, `web-${i}`);
      expect(d.status).toEqual({ observedGeneration: 2, replicas: 7 });
    }

    await deployments().delete(ns, 'web-4');
    await eventually(() => sample.reconciles(`${ns}/web-4`).at(-1)?.outcome === 'gone');

    // Never selected, so never reconciled and never written.
    expect(sample.reconciles(`${ns}/ignored`)).toEqual([]);
    expect((await deployments().get(ns, 'ignored')).status).toEqual({}); // the empty status every Deployment has
    expect(sample.history.filter((r) => r.key.startsWith(`${ns}/`) && r.outcome === 'error')).toEqual([]);
  });

  it('coalesces a burst of events for one key into a few level-triggered reconciles', async () => {
    const ns = await newNamespace();
    const key = `${ns}/burst`;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered = false;
    const sample = sampleController({
      workers: 4,
      beforeReconcile: async (k) => {
        if (k !== key) return;
        entered = true;
        await gate;
      },
    });
    const { manager } = newManager([sample.definition]);
    start(manager);
    await eventually(() => manager.hasSynced());

    await deployments().create(deployment(ns, 'burst', 1));
    await eventually(() => entered);
    // While the first reconcile is held, 20 updates arrive: each is a notification, none a new worker.
    for (let replicas = 2; replicas <= 21; replicas++) {
      await deployments().patch(ns, 'burst', { spec: { replicas } }, 'merge');
    }
    await eventually(() => sample.notifications.filter((n) => n.endsWith(` ${key}`)).length >= 21);
    expect(sample.reconciles(key)).toEqual([]);
    release();

    const d = await converged(ns, 'burst');
    expect(d.status).toEqual({ observedGeneration: 21, replicas: 21 });
    await sleep(500);
    const notifications = sample.notifications.filter((n) => n.endsWith(` ${key}`)).length;
    const runs = sample.reconciles(key);
    // The held run, one more for everything that arrived meanwhile, one for the controller's own status write.
    expect(notifications).toBeGreaterThanOrEqual(21);
    expect(runs.length).toBeGreaterThanOrEqual(1);
    expect(runs.length).toBeLessThanOrEqual(4);
    // Each run read the latest state from the cache, so none wrote an intermediate replica count.
    expect(runs.every((r) => r.outcome === 'written' || r.outcome === 'unchanged')).toBe(true);
    const written = runs.filter((r) => r.outcome === 'written').map((r) => r.status);
    expect(written.length).toBeGreaterThanOrEqual(1);
    for (const status of written) expect(status).toEqual({ observedGeneration: 21, replicas: 21 });
  });

  it('requeueAfter brings a key back after the delay without any event, until it is no longer asked for', async () => {
    const ns = await newNamespace();
    const key = `${ns}/periodic`;
    const sample = sampleController();
    const { manager } = newManager([sample.definition]);
    start(manager);
    await eventually(() => manager.hasSynced());

    await deployments().create(deployment(ns, 'periodic', 2, { annotations: { [REQUEUE_ANNOTATION]: '300' } }));
    await converged(ns, 'periodic');
    // Let the notification of the controller's own status write, and the run it causes, go by.
    await eventually(() => sample.notifications.filter((n) => n.endsWith(` ${key}`)).length >= 2);
    await sleep(400);
    const before = sample.reconciles(key).length;
    const notificationsBefore = sample.notifications.filter((n) => n.endsWith(` ${key}`)).length;
    await eventually(() => sample.reconciles(key).length >= before + 4, 5_000);
    const runs = sample.reconciles(key).slice(before, before + 4);
    for (let i = 1; i < runs.length; i++) expect(runs[i].at - runs[i - 1].at).toBeGreaterThanOrEqual(295);
    expect(runs.every((r) => r.requeueAfterMs === 300 && r.outcome === 'unchanged')).toBe(true);
    // Those runs came from the requeue, not from watch events.
    expect(sample.notifications.filter((n) => n.endsWith(` ${key}`)).length).toBe(notificationsBefore);

    await deployments().patch(ns, 'periodic', { metadata: { annotations: { [REQUEUE_ANNOTATION]: null } } }, 'merge');
    await eventually(() => sample.reconciles(key).at(-1)?.requeueAfterMs === undefined);
    const settled = sample.reconciles(key).length;
    await sleep(900);
    // At most one run that was already waiting on its 300 ms timer.
    expect(sample.reconciles(key).length - settled).toBeLessThanOrEqual(1);
  });

  it('forgets a key on TerminalError and retries thrown errors with backoff until the status write succeeds', async () => {
    const ns = await newNamespace();
    // A visible backoff: 50, 100, 200, 400 ms.
    const sample = sampleController({ rateLimiter: () => itemExponential<string>(50, 5_000) });
    const { manager, logs } = newManager([sample.definition]);
    start(manager);
    await eventually(() => manager.hasSynced());

    await deployments().create(deployment(ns, 'doomed', 1, { annotations: { [TERMINAL_ANNOTATION]: 'true' } }));
    await eventually(() => sample.reconciles(`${ns}/doomed`).length === 1);
    await sleep(800); // retries would have come at +50, +150, +350, +750 ms
    expect(sample.reconciles(`${ns}/doomed`).map((r) => r.outcome)).toEqual(['terminal']);
    expect(logs.some((l) => l.msg === 'reconcile failed permanently' && l.key === `${ns}/doomed`)).toBe(true);

    const statusPath = `/apis/apps/v1/namespaces/${ns}/deployments/flaky/status`;
    cluster.cp.faults.failRequests({ code: 500, count: 4, match: (m, p) => m === 'PATCH' && p === statusPath });
    await deployments().create(deployment(ns, 'flaky', 3));
    const d = await converged(ns, 'flaky');
    expect(d.status).toEqual({ observedGeneration: 1, replicas: 3 });

    const runs = sample.reconciles(`${ns}/flaky`);
    expect(runs.slice(0, 5).map((r) => r.outcome)).toEqual(['error', 'error', 'error', 'error', 'written']);
    expect(runs[0].error).toContain('injected failure');
    for (let i = 1; i < 5; i++) {
      // Each retry waits at least the rate limiter's delay after the failure before it.
      expect(runs[i].at - runs[i - 1].at).toBeGreaterThanOrEqual(50 * 2 ** (i - 1) - 2);
    }
    const retries = logs.filter((l) => l.msg === 'reconcile failed, will retry' && l.key === `${ns}/flaky`);
    expect(retries.map((l) => l.requeues)).toEqual([0, 1, 2, 3]);
  });
});

describe('write conflicts in a reconcile', () => {
  it('are routine: logged at V(2), never as an error, and retried', async () => {
    const ns = await newNamespace();
    const configMaps = () => cluster.client.kind('ConfigMap');
    const first = await configMaps().create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', namespace: ns },
    });
    // Another writer moves the object on: the reconciler's first write carries a stale resourceVersion.
    await configMaps().replace({ ...first, data: { by: 'someone else' } });
    let stale: KubeObject | undefined = first;
    const outcomes: string[] = [];
    const definition: ControllerDefinition = {
      name: 'conflicting',
      aliases: [],
      enabledByDefault: true,
      workers: 1,
      rateLimiter: () => itemExponential<string>(10, 1_000),
      permissions: () => [],
      setup: (_ctx, enqueue) => {
        enqueue.add(`${ns}/c`);
        return {
          async reconcile() {
            const base = stale ?? (await configMaps().get(ns, 'c'));
            stale = undefined;
            try {
              await configMaps().replace({ ...base, data: { by: 'reconciler' } });
              outcomes.push('written');
            } catch (err) {
              outcomes.push(String((err as { code?: number }).code));
              throw err;
            }
            return done;
          },
        };
      },
    };
    const { manager, logs } = newManager([definition]);
    start(manager);
    await eventually(() => outcomes.includes('written'));
    expect(outcomes).toEqual(['409', 'written']);
    const mine = logs.filter((l) => l.key === `${ns}/c`);
    expect(mine.filter((l) => l.level === 'error')).toEqual([]);
    expect(mine.find((l) => l.msg === 'reconcile lost a write conflict, will retry')).toMatchObject({ v: 2 });
  });
});

/** A controller of one worker over the ConfigMaps of `ns`: each one added is a key (`ns/name`) for `reconcile`. */
function configMapController(
  ns: string,
  name: string,
  reconcile: (ctx: ControllerContext, key: string) => Promise<void>,
): ControllerDefinition {
  return {
    name,
    aliases: [],
    enabledByDefault: true,
    permissions: () => [rule([''], ['configmaps'], READ)],
    workers: 1,
    setup(ctx, enqueue) {
      const informer = ctx.informers.informerFor(ctx.registry.byKind('ConfigMap')!, { namespace: ns });
      informer.addEventHandler({ add: (o) => enqueue.add(`${ns}/${o.metadata.name}`) });
      return {
        reconcile: async (key) => {
          await reconcile(ctx, key);
          return undefined;
        },
      };
    },
  };
}

describe('Manager', () => {
  it('fails start-up with an error naming the informer that did not sync; controllers whose caches synced ran', async () => {
    const ns = await newNamespace();
    await cluster.client
      .kind('ConfigMap')
      .create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: ns, name: 'present' } });
    const configMapKeys: string[] = [];
    const configMaps = configMapController(ns, 'configmaps', async (_ctx, key) => {
      configMapKeys.push(key);
    });
    const sample = sampleController();
    cluster.cp.faults.failRequests({
      code: 500,
      count: Number.POSITIVE_INFINITY,
      match: (m, p) => m === 'GET' && p === '/apis/apps/v1/deployments',
    });
    const { manager } = newManager([sample.definition, configMaps], { syncTimeoutMs: 1_500 });
    const started = performance.now();
    const outcome = await start(manager).done.then(
      () => undefined,
      (err: Error) => err,
    );
    const elapsed = performance.now() - started;
    expect(outcome).toBeInstanceOf(Error);
    expect(outcome?.message).toBe('informer deployments.apps[labelSelector=sample=true] did not sync within 1500 ms');
    expect(elapsed).toBeGreaterThanOrEqual(1_400);
    expect(elapsed).toBeLessThan(4_000);
    // Each controller starts once its own caches are in, as the reference's do: the ConfigMap controller ran
    // while the Deployment informer kept failing.
    expect(configMapKeys).toEqual([`${ns}/present`]);
    expect(manager.hasSynced()).toBe(false);
    expect(sample.ctx!.informers.all().some((i) => i.isRunning())).toBe(false);
  });

  it('gives each controller a rate limiter of its own: a busy one does not hold back the others', async () => {
    const ns = await newNamespace();
    const configMaps = () => cluster.client.kind('ConfigMap');
    await configMaps().create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: ns, name: 'one' } });
    const reconciledAt: Record<string, number> = {};
    const controller = (name: string, gets: number, delayMs: number) =>
      configMapController(ns, name, async (ctx) => {
        await sleep(delayMs);
        await Promise.all(Array.from({ length: gets }, () => ctx.client.kind('ConfigMap').get(ns, 'one')));
        reconciledAt[name] = performance.now();
      });
    // At 2 requests a second, the busy controller's 10 GETs hold a shared limiter for 5 s.
    const limited = cluster.client.derive({ qps: 2, burst: 1 });
    const { manager } = newManager([controller('busy', 10, 0), controller('quick', 1, 100)], {}, limited);
    const started = performance.now();
    start(manager);
    await eventually(() => reconciledAt.quick !== undefined, 10_000);
    expect(reconciledAt.quick - started).toBeLessThan(2_500);
    await eventually(() => reconciledAt.busy !== undefined, 10_000);
  });

  it("lets another controller's request through between reconciles that never wait (a start's queue of them)", async () => {
    const ns = await newNamespace();
    const configMaps = () => cluster.client.kind('ConfigMap');
    const names = Array.from({ length: 200 }, (_, i) => `cm-${i}`);
    for (const name of names)
      await configMaps().create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: ns, name } });
    let busyReconciles = 0;
    let quickSawBusy: number | undefined;
    // Each of the busy controller's reconciles takes 2 ms of the thread and waits for nothing; the quick one's
    // single GET completes only once the thread gets to its response.
    const busy = configMapController(ns, 'busy', async () => {
      const until = performance.now() + 2;
      while (performance.now() < until);
      busyReconciles++;
    });
    let quickDone = false;
    const quick = configMapController(ns, 'quick', async (ctx) => {
      if (quickDone) return;
      quickDone = true;
      await ctx.client.kind('ConfigMap').get(ns, 'cm-0');
      quickSawBusy = busyReconciles;
    });
    const { manager } = newManager([busy, quick]);
    start(manager);
    await eventually(() => busyReconciles === names.length && quickSawBusy !== undefined, 10_000);
    // Held behind the whole queue, the GET would complete after all 200 (400 ms of work).
    expect(quickSawBusy).toBeLessThan(names.length / 2);
  });

  it('with leader election, a sync failure also ends the election (lease released) and rejects run', async () => {
    const lease = `sync-fail-${randomUUID().slice(0, 8)}`;
    const namespace = cluster.cp.registry.naming.systemNamespace;
    const sample = sampleController();
    cluster.cp.faults.failRequests({
      code: 500,
      count: Number.POSITIVE_INFINITY,
      match: (m, p) => m === 'GET' && p === '/apis/apps/v1/deployments',
    });
    const { manager } = newManager([sample.definition], {
      syncTimeoutMs: 1_000,
      leaderElection: electionOptions(lease),
    });
    const err = await start(manager).done.then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toBe('informer deployments.apps[labelSelector=sample=true] did not sync within 1000 ms');
    const held = await cluster.client.kind<Lease>('Lease').get(namespace, lease);
    expect(held.spec?.holderIdentity).toBe('');
    expect(manager.isLeader()).toBe(false);
  });

  it('treats an abort during the initial cache sync as a stop, not a failure', async () => {
    const sample = sampleController();
    cluster.cp.faults.failRequests({
      code: 500,
      count: Number.POSITIVE_INFINITY,
      match: (m, p) => m === 'GET' && p === '/apis/apps/v1/deployments',
    });
    const { manager } = newManager([sample.definition], { syncTimeoutMs: 30_000 });
    const run = start(manager);
    await eventually(() => sample.ctx !== undefined);
    await sleep(200);
    const stopping = performance.now();
    run.stop.abort();
    const outcome = await run.done.catch((err: Error) => err);
    expect(outcome).toBe('stopped');
    expect(performance.now() - stopping).toBeLessThan(1_000);
    expect(sample.ctx!.informers.all().some((i) => i.isRunning())).toBe(false);
  });

  it('stops workers and informers within the shutdown timeout when aborted mid-reconcile', async () => {
    const ns = await newNamespace();
    let reconcileSignal: AbortSignal | undefined;
    const sample = sampleController({
      beforeReconcile: (key, signal) => {
        if (key !== `${ns}/slow`) return Promise.resolve();
        reconcileSignal = signal;
        // A long operation that honours its signal, as reconciles must.
        return new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, 30_000);
          signal.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(new Error('aborted'));
          });
        });
      },
    });
    const { manager } = newManager([sample.definition], { shutdownTimeoutMs: 500 });
    const run = start(manager);
    await eventually(() => manager.hasSynced());
    await deployments().create(deployment(ns, 'slow', 1));
    await eventually(() => reconcileSignal !== undefined);

    const stopping = performance.now();
    run.stop.abort();
    const outcome = await run.done;
    const took = performance.now() - stopping;
    expect(outcome).toBe('stopped');
    expect(took).toBeGreaterThanOrEqual(450); // the drain waited for the running reconcile...
    expect(took).toBeLessThan(1_500); // ...then aborted it instead of waiting 30 s
    expect(reconcileSignal?.aborted).toBe(true);
    expect(sample.ctx!.informers.all().length).toBe(1);
    expect(sample.ctx!.informers.all().some((i) => i.isRunning())).toBe(false);
    expect(manager.hasSynced()).toBe(false);

    // Nothing runs any more: a new object is neither reconciled nor written.
    await deployments().create(deployment(ns, 'after-stop', 2));
    await sleep(500);
    expect(sample.reconciles(`${ns}/after-stop`)).toEqual([]);
    expect((await deployments().get(ns, 'after-stop')).status).toEqual({}); // never written: still the empty one
  });

  it('runs controllers only while it leads, and ends with lostLeadership when it cannot renew', async () => {
    const ns = await newNamespace();
    const lease = `gate-${randomUUID().slice(0, 8)}`;
    const namespace = cluster.cp.registry.naming.systemNamespace;
    // Someone else holds the lease and keeps renewing it.
    const renew = await heldBySomeoneElse(lease, 1);
    let renewing = true;
    const renewer = (async () => {
      while (renewing) {
        await sleep(200);
        if (!renewing) break;
        await renew();
      }
    })();

    const sample = sampleController();
    const { manager, logs } = newManager([sample.definition], { leaderElection: electionOptions(lease) });
    const run = start(manager);
    await deployments().create(deployment(ns, 'gated', 4));
    await sleep(1_500);
    expect(manager.isLeader()).toBe(false);
    expect(sample.reconciles(`${ns}/gated`)).toEqual([]);
    expect(sample.ctx).toBeUndefined(); // no informer was even set up

    renewing = false;
    await renewer;
    const d = await converged(ns, 'gated', 5_000);
    expect(d.status).toEqual({ observedGeneration: 1, replicas: 4 });
    expect(manager.isLeader()).toBe(true);
    expect(logs.some((l) => l.msg === 'became leader; starting controllers')).toBe(true);

    const leasePath = `/apis/coordination.${cluster.cp.registry.naming.groupSuffix}/v1/namespaces/${namespace}/leases/${lease}`;
    cluster.cp.faults.failRequests({
      code: 500,
      count: Number.POSITIVE_INFINITY,
      match: (m, p) => m === 'PUT' && p === leasePath,
    });
    const blocked = performance.now();
    const outcome = await Promise.race([run.done, sleep(5_000).then(() => 'timeout' as const)]);
    const took = performance.now() - blocked;
    expect(outcome).toBe('lostLeadership');
    // renewDeadline (700 ms) after the last renew, plus the failed release.
    expect(took).toBeLessThan(2_000);
    expect(manager.isLeader()).toBe(false);
    expect(sample.ctx!.informers.all().some((i) => i.isRunning())).toBe(false);
  });
});

describe('Manager as a standby', () => {
  it('watches the Lease: takes it one lease duration after the last renewal, not after a read that saw it', async () => {
    const lease = `watched-${randomUUID().slice(0, 8)}`;
    const renew = await heldBySomeoneElse(lease, 2);
    // Its reads are 1.2–2.64 s apart: counted from the read that saw the last renewal, the 2 s would end up to
    // 2.64 s late.
    const options = { ...electionOptions(lease), leaseDurationMs: 2_000, renewDeadlineMs: 1_500, retryPeriodMs: 1_200 };
    const { manager } = newManager([sampleController().definition], { leaderElection: options });
    start(manager);
    for (let i = 0; i < 8; i++) {
      await sleep(250);
      await renew();
    }
    const lastRenewal = performance.now();
    expect(manager.isLeader()).toBe(false);
    await eventually(() => manager.isLeader(), 6_000);
    const took = performance.now() - lastRenewal;
    expect(took).toBeGreaterThanOrEqual(1_950);
    expect(took).toBeLessThan(2_400);
  });
});

/** Creates the Lease `name` held by someone else for `seconds`; the function returned renews it. */
async function heldBySomeoneElse(name: string, seconds: number): Promise<() => Promise<void>> {
  const leases = cluster.client.kind<Lease>('Lease');
  const now = () => rfc3339Micro(new Date());
  let held = await leases.create({
    apiVersion: leases.apiVersion,
    kind: 'Lease',
    metadata: { namespace: cluster.cp.registry.naming.systemNamespace, name },
    spec: { holderIdentity: 'someone-else', leaseDurationSeconds: seconds, acquireTime: now(), renewTime: now() },
  });
  return async () => {
    held = await leases.replace({ ...held, spec: { ...held.spec, renewTime: now() } });
  };
}

function electionOptions(lease: string): ManagerOptions['leaderElection'] {
  return {
    enabled: true,
    namespace: cluster.cp.registry.naming.systemNamespace,
    name: lease,
    identity: `runtime-test_${randomUUID()}`,
    leaseDurationMs: 1_000,
    renewDeadlineMs: 700,
    retryPeriodMs: 150,
    releaseOnCancel: true,
  };
}
