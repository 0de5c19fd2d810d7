/**
 * The writer process of `bench/disruption.bench.ts` (started by it, with an IPC channel; not a benchmark on
 * its own): WRITERS clients, each with a connection of its own, flip the readiness of pods (status writes),
 * and one more client WATCHes the budgets. A flip's latency is from the acknowledgement of its write to the
 * watch event that shows its budget's `currentHealthy` reflecting it (0 when the event came first).
 *
 * Writer w owns the budgets `pdb-g` with g % WRITERS = w, so it alone moves their pods and knows what the
 * status must become; each writer has one flip in flight. Messages: in `{ flips }` (per writer, one round),
 * out `{ type: 'ready' }`, `{ type: 'latencies', ms }`, `{ type: 'error', message }`.
 */
import { runningStatus } from '../controllers/disruption/harness.ts';
import { ResourceRegistry } from '../src/api/registry.ts';
import type { Pod } from '../src/api/types/core.ts';
import type { PodDisruptionBudget } from '../src/api/types/policy.ts';
import { KubeClient } from '../src/client/client.ts';
import { KubeConfig } from '../src/client/kubeconfig.ts';

const [kubeconfig, namespace, groupsArg, perGroupArg, writersArg] = process.argv.slice(2);
const GROUPS = Number(groupsArg);
const PER_GROUP = Number(perGroupArg);
const WRITERS = Number(writersArg);
const FLIP_TIMEOUT_MS = 60_000;

type Message = { type: 'ready' } | { type: 'latencies'; ms: number[] } | { type: 'error'; message: string };

function send(m: Message): Promise<void> {
  return new Promise((resolve, reject) => process.send!(m, undefined, {}, (err) => (err ? reject(err) : resolve())));
}

/** Budget name → the waiter for the `currentHealthy` its owner's flip in flight must produce. */
const waiters = new Map<string, { healthy: number; resolve: (at: number) => void }>();

function client(kc: KubeConfig, registry: ResourceRegistry): KubeClient {
  return new KubeClient(kc, registry, { qps: 0 });
}

async function main(): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const registry = new ResourceRegistry('orch');
  const watcher = client(kc, registry);
  const pdbs = watcher.kind<PodDisruptionBudget>('PodDisruptionBudget');
  const { resourceVersion } = (await pdbs.list(namespace, { limit: 1 })).metadata;
  const stopWatch = new AbortController();
  const watching = pdbs.watch(
    namespace,
    { resourceVersion },
    (e) => {
      if (e.type !== 'MODIFIED') return;
      const name = e.object.metadata.name ?? '';
      const waiter = waiters.get(name);
      if (waiter && e.object.status?.currentHealthy === waiter.healthy) {
        waiters.delete(name);
        waiter.resolve(performance.now());
      }
    },
    stopWatch.signal,
  );

  const pods = new Map<string, Pod>();
  for (const pod of (await watcher.kind<Pod>('Pod').listAll(namespace)).items) pods.set(pod.metadata.name!, pod);
  const writers = Array.from({ length: WRITERS }, (_, w) => {
    const podClient = client(kc, registry).kind<Pod>('Pod');
    const owned = Array.from({ length: Math.ceil(GROUPS / WRITERS) }, (_, i) => i * WRITERS + w).filter(
      (g) => g < GROUPS,
    );
    let next = 0;
    /** One flip, resolving with its latency: a pod goes NotReady, and on the next flip Ready again. */
    return async (): Promise<number> => {
      const pair = next++ >> 1;
      const g = owned[pair % owned.length]!;
      const pod = pods.get(`pod-${g}-${Math.floor(pair / owned.length) % PER_GROUP}`)!;
      const ready = pod.status?.conditions?.[0]?.status !== 'True';
      const seen = new Promise<number>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`pdb-${g}: no status within ${FLIP_TIMEOUT_MS} ms`)),
          FLIP_TIMEOUT_MS,
        );
        waiters.set(`pdb-${g}`, {
          healthy: ready ? PER_GROUP : PER_GROUP - 1,
          resolve: (at) => {
            clearTimeout(timer);
            resolve(at);
          },
        });
      });
      const status = runningStatus(ready) as Pod['status'];
      const written = await podClient.replaceStatus({ ...pod, status });
      const acked = performance.now();
      pods.set(written.metadata.name!, written);
      return Math.max(0, (await seen) - acked);
    };
  });
  await send({ type: 'ready' });

  for await (const m of messages()) {
    const ms: number[] = [];
    // An even count of flips per writer leaves every pod Ready.
    await Promise.all(
      writers.map(async (flip) => {
        for (let i = 0; i < m.flips; i++) ms.push(await flip());
      }),
    );
    await send({ type: 'latencies', ms });
  }
  stopWatch.abort();
  await watching.catch(() => undefined);
}

/** The parent's round requests until it disconnects. */
async function* messages(): AsyncGenerator<{ flips: number }> {
  const queue: { flips: number }[] = [];
  let wake: () => void = () => {};
  let open = true;
  process.on('message', (m: { flips: number }) => {
    queue.push(m);
    wake();
  });
  process.on('disconnect', () => {
    open = false;
    wake();
  });
  while (open || queue.length) {
    const m = queue.shift();
    if (m) yield m;
    else await new Promise<void>((r) => (wake = r));
  }
}

main().then(
  () => process.exit(0),
  async (err) => {
    await send({ type: 'error', message: (err as Error)?.stack ?? String(err) }).catch(() => undefined);
    process.exit(1);
  },
);
