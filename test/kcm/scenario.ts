/**
 * A scenario's frame: the namespace and name prefix it owns, the identities it writes as, its waits (each one's
 * outcome is part of what is compared, so a wait one side never meets is a difference, not a crash), and its
 * checkpoints: the cluster settles, then every object the scenario owns is read and normalized.
 */
import { sleep } from '../support/daemons.ts';
import type { Call, Identities } from './client.ts';
import { type NormalizeContext, normalize } from './compare.ts';

const SETTLE_QUIET_MS = 2_000;
const SETTLE_MAX_MS = 30_000;

export interface ScenarioContext {
  /** The scenario's own namespace, created before it runs. */
  ns: string;
  /** The prefix of the names of the cluster-scoped objects it makes (CSRs, ClusterRoles): its name. */
  prefix: string;
  admin: Call;
  id: Identities;
  /** Stops and starts the controller manager under test (KCM, or our daemon), as an operator would. */
  restartControllerManager(): Promise<void>;
  /** Keeps an answer the scenario got (an eviction's status, say) for the comparison. */
  record(what: string, value: unknown): void;
  /** Polls `probe` until it returns a value; the outcome (met or timed out) is recorded. */
  waitFor<T>(what: string, probe: () => Promise<T | undefined>, ms?: number): Promise<T | undefined>;
  /** Waits until the scenario's objects stop changing, then snapshots them under `name`. */
  checkpoint(name: string): Promise<void>;
}

export interface Scenario {
  name: string;
  /** In the reduced set `--quick` runs (CI). */
  quick?: boolean;
  run(ctx: ScenarioContext): Promise<void>;
}

/** Checkpoint name → object key (`Kind/name`, or `recorded`, `events`) → normalized object. */
export type Snapshot = Record<string, Record<string, unknown>>;

export type Outcome = { snapshot: Snapshot } | { error: string };

const NAMESPACED: [string, string][] = [
  ['StatefulSet', '/apis/apps/v1/namespaces/NS/statefulsets'],
  ['ControllerRevision', '/apis/apps/v1/namespaces/NS/controllerrevisions'],
  ['Pod', '/api/v1/namespaces/NS/pods'],
  ['PersistentVolumeClaim', '/api/v1/namespaces/NS/persistentvolumeclaims'],
  ['PodDisruptionBudget', '/apis/policy/v1/namespaces/NS/poddisruptionbudgets'],
];
const CLUSTER: [string, string][] = [
  ['CertificateSigningRequest', '/apis/certificates.k8s.io/v1/certificatesigningrequests'],
  ['ClusterRole', '/apis/rbac.authorization.k8s.io/v1/clusterroles'],
];

async function list(admin: Call, path: string): Promise<any[]> {
  const reply = await admin('GET', path);
  if (reply.status !== 200) throw new Error(`GET ${path}: ${reply.status} ${reply.json?.message ?? ''}`);
  return reply.json.items ?? [];
}

const REPORTED_KINDS = ['StatefulSet', 'PodDisruptionBudget', 'CertificateSigningRequest', 'ClusterRole'];

/** The five characters the API server appends to a `generateName` (a StatefulSet pod's ordinal is not one). */
const RANDOM_SUFFIX = /^[bcdfghjklmnpqrstvwxz2456789]{5}$/;

const eventKey = (event: any) =>
  `${event.involvedObject.kind}/${event.involvedObject.name} ${event.type} ${event.reason}`;

/** The compared controllers' events in the namespace and about its cluster-scoped objects. */
async function controllerEvents(admin: Call, ns: string, prefix: string): Promise<any[]> {
  const events = [
    ...(await list(admin, `/api/v1/namespaces/${ns}/events`)),
    ...(await list(admin, '/api/v1/namespaces/default/events')).filter((event) =>
      event.involvedObject?.name?.startsWith(`${prefix}-`),
    ),
  ];
  // Only those about the kinds the compared controllers report on: pods, nodes, ReplicaSets and claims have
  // events of the scheduler, kwok and KCM's other controllers, with generated names in them.
  return events.filter((event) => REPORTED_KINDS.includes(event.involvedObject?.kind));
}

/**
 * The scenario's objects, normalized: everything of the namespaced kinds in its namespace, the cluster-scoped ones
 * named with its prefix, and the controllers' events about them (object, type, reason, and their messages).
 */
async function collect(admin: Call, ns: string, prefix: string, nctx: NormalizeContext) {
  const objects: Record<string, unknown> = {};
  for (const [kind, path] of NAMESPACED) {
    const items = (await list(admin, path.replace('NS', ns))).map((item) => normalize(item, nctx) as any);
    // A generated name's random suffix differs between runs: such objects are named by their prefix and numbered
    // in the order of their content.
    const generated = items.filter(
      ({ metadata: m }) => m.generateName && RANDOM_SUFFIX.test(m.name.slice(m.generateName.length)),
    );
    for (const item of items) if (!generated.includes(item)) objects[`${kind}/${item.metadata.name}`] = item;
    generated
      .map((item) => ({ ...item, metadata: { ...item.metadata, name: `${item.metadata.generateName}*` } }))
      .map((item) => [JSON.stringify(item), item])
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .forEach(([, item], i) => {
        objects[`${kind}/${item.metadata.name}#${i}`] = item;
      });
  }
  for (const [kind, path] of CLUSTER) {
    for (const item of await list(admin, path)) {
      if (item.metadata.name.startsWith(`${prefix}-`)) objects[`${kind}/${item.metadata.name}`] = normalize(item, nctx);
    }
  }
  // Keyed by object, type and reason, with their distinct messages; how often each was seen depends on timing.
  const events = new Map<string, Set<string>>();
  for (const event of await controllerEvents(admin, ns, prefix)) {
    const key = eventKey(event);
    events.set(key, (events.get(key) ?? new Set()).add(event.message));
  }
  objects.events = Object.fromEntries(
    [...events.keys()].sort().map((key) => [key, [...(events.get(key) as Set<string>)].sort()]),
  );
  return objects;
}

export interface RunOptions {
  admin: Call;
  id: Identities;
  nctx: NormalizeContext;
  restartControllerManager(): Promise<void>;
}

/** Runs one scenario in a namespace of its own; a failure is its outcome rather than the end of the run. */
export async function runScenario(scenario: Scenario, options: RunOptions): Promise<Outcome> {
  const { admin, nctx } = options;
  const ns = `diff-${scenario.name}`;
  const snapshot: Snapshot = {};
  const recorded: Record<string, unknown> = {};
  const ctx: ScenarioContext = {
    ns,
    prefix: scenario.name,
    admin,
    id: options.id,
    restartControllerManager: options.restartControllerManager,
    record: (what, value) => {
      recorded[what] = value;
    },
    async waitFor(what, probe, ms = 60_000) {
      const deadline = Date.now() + ms;
      while (Date.now() < deadline) {
        const value = await probe();
        if (value !== undefined) {
          recorded[`wait: ${what}`] = 'met';
          return value;
        }
        await sleep(250);
      }
      recorded[`wait: ${what}`] = `not met within ${ms / 1000} s`;
      return undefined;
    },
    async checkpoint(name) {
      let last = JSON.stringify(await collect(admin, ns, scenario.name, nctx));
      const deadline = Date.now() + SETTLE_MAX_MS;
      while (Date.now() < deadline) {
        await sleep(SETTLE_QUIET_MS);
        const next = JSON.stringify(await collect(admin, ns, scenario.name, nctx));
        if (next === last) break;
        last = next;
      }
      snapshot[name] = { ...JSON.parse(last), recorded: { ...recorded } };
    },
  };
  try {
    const created = await admin('POST', '/api/v1/namespaces', { metadata: { name: ns } });
    if (created.status !== 201) throw new Error(`creating namespace ${ns}: ${created.status}`);
    // Pods are admitted only once the namespace's default ServiceAccount exists.
    await ctx.waitFor('default ServiceAccount', async () => {
      const reply = await admin('GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`);
      return reply.status === 200 ? true : undefined;
    });
    await scenario.run(ctx);
    await ctx.checkpoint('end');
    return { snapshot };
  } catch (error) {
    return { error: (error as Error).stack ?? String(error) };
  }
}
