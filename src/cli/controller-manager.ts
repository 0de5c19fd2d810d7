/**
 * `orch-controller-manager`: the daemon. It connects with `--kubeconfig` (else `$KUBECONFIG`, the
 * default file, or the in-cluster service account), or with `--embedded` brings its own control
 * plane; then runs the selected controllers while it holds the leader lease.
 */
import { hostname } from 'node:os';
import { KubeConfig } from '@kubernetes/client-node';
import { register } from 'prom-client';
import { controllerDefinitions } from '../../controllers/index.ts';
import { type FlavorName, group, isFlavorName, naming } from '../api/naming.ts';
import { ResourceRegistry } from '../api/registry.ts';
import { KubeClient } from '../client/client.ts';
import { selectControllers } from '../controller/controller.ts';
import { ApiEventRecorder } from '../controller/events.ts';
import { Manager } from '../controller/manager.ts';
import { newIdentity } from '../leaderelection/elector.ts';
import { LeaderElectionHealth } from '../leaderelection/health.ts';
import { createLogger, type LoggingFormat } from '../log/logger.ts';
import { realClock } from '../util/clock.ts';
import { DAEMON_FLAG_NAMES, embeddedFlags, printWelcome, startEmbedded } from './embedded.ts';
import { FlagError, type FlagSpec, Flags, parseFlags, usage } from './flags.ts';

export const VERSION = '0.1.0';

const GENERIC = 'Generic';
const ELECTION = 'Leader-election';

function specs(): FlagSpec[] {
  const concurrency: FlagSpec[] = controllerDefinitions.map((d) => ({
    name: `concurrent-${d.name}-syncs`,
    type: 'int',
    section: 'Controllers',
    default: String(d.workers),
    usage: `Number of ${d.name} objects synced concurrently.`,
  }));
  return [
    {
      name: 'kubeconfig',
      type: 'string',
      section: GENERIC,
      usage: 'Path to a kubeconfig (default $KUBECONFIG, ~/.kube/config, then in-cluster).',
    },
    { name: 'embedded', type: 'bool', section: GENERIC, usage: 'Start an embedded control plane and run against it.' },
    {
      name: 'api-flavor',
      type: 'string',
      section: GENERIC,
      default: 'auto',
      usage: 'Naming flavor: orch, kubernetes, or auto (decided from discovery).',
    },
    {
      name: 'controllers',
      type: 'stringArray',
      section: GENERIC,
      default: '*',
      usage: "Controllers to enable: '*' all on by default, 'foo' enables foo, '-foo' disables foo.",
    },
    {
      name: 'kube-api-qps',
      type: 'int',
      section: GENERIC,
      default: '20',
      usage: 'QPS to use while talking with the API server.',
    },
    {
      name: 'kube-api-burst',
      type: 'int',
      section: GENERIC,
      default: '30',
      usage: 'Burst to use while talking with the API server.',
    },
    { name: 'v', type: 'int', section: 'Logs', default: '2', usage: 'Log verbosity.' },
    { name: 'logging-format', type: 'string', section: 'Logs', default: 'text', usage: 'Log format: text or json.' },
    {
      name: 'feature-gates',
      type: 'mapStringBool',
      section: 'Feature gate',
      usage: 'Gates of alpha/experimental features, as Name=true,...',
    },
    {
      name: 'leader-elect',
      type: 'bool',
      section: ELECTION,
      default: 'true',
      usage: 'Acquire a leader lease before running controllers.',
    },
    {
      name: 'leader-elect-lease-duration',
      type: 'duration',
      section: ELECTION,
      default: '15s',
      usage: 'How long non-leaders wait after observing a renewal before taking over.',
    },
    {
      name: 'leader-elect-renew-deadline',
      type: 'duration',
      section: ELECTION,
      default: '10s',
      usage: 'How long the leader retries renewing before giving up.',
    },
    {
      name: 'leader-elect-retry-period',
      type: 'duration',
      section: ELECTION,
      default: '2s',
      usage: 'Interval between acquire and renew attempts.',
    },
    {
      name: 'leader-elect-resource-name',
      type: 'string',
      section: ELECTION,
      usage: 'Name of the Lease (default the component name).',
    },
    {
      name: 'leader-elect-resource-namespace',
      type: 'string',
      section: ELECTION,
      usage: 'Namespace of the Lease (default the system namespace).',
    },
    {
      name: 'leader-elect-release-on-cancel',
      type: 'bool',
      section: ELECTION,
      default: 'true',
      usage: 'Release the lease on graceful shutdown so a standby takes over at once.',
    },
    { name: 'help', type: 'bool', section: GENERIC, usage: 'Show this help.' },
    ...concurrency,
    ...embeddedFlags(DAEMON_FLAG_NAMES),
  ];
}

/** `auto`: the flavor whose coordination group the server serves. */
async function detectFlavor(kc: KubeConfig): Promise<FlavorName> {
  for (const flavor of ['orch', 'kubernetes'] as const) {
    const probe = new KubeClient(kc, new ResourceRegistry(flavor), { qps: 0, timeoutMs: 10_000 });
    try {
      await probe.request('GET', `/apis/coordination.${naming(flavor).groupSuffix}`);
      return flavor;
    } catch {
      // not this flavor
    }
  }
  throw new Error("--api-flavor=auto: the server serves neither flavor's coordination group");
}

async function main(): Promise<number> {
  const all = specs();
  const flags = new Flags(all, parseFlags(all, process.argv.slice(2)));
  if (flags.bool('help')) {
    console.log(
      usage('orch-controller-manager', 'Runs the controllers that turn stored desired state into observed state.', all),
    );
    return 0;
  }
  const format = flags.string('logging-format') as LoggingFormat;
  if (!['text', 'json'].includes(format))
    throw new FlagError(`invalid argument "${format}" for "--logging-format" flag: must be text or json`);
  const logger = createLogger({ verbosity: flags.int('v')!, format });
  const gates = flags.mapStringBool('feature-gates');
  const requested = flags.string('api-flavor')!;
  if (requested !== 'auto' && !isFlavorName(requested)) {
    throw new FlagError(`invalid argument "${requested}" for "--api-flavor" flag: must be auto, orch or kubernetes`);
  }

  const kc = new KubeConfig();
  const embedded = flags.bool('embedded')
    ? await startEmbedded(flags, gates, requested === 'auto' ? 'orch' : requested, DAEMON_FLAG_NAMES)
    : undefined;
  if (embedded) {
    printWelcome(embedded);
    kc.loadFromFile(embedded.kubeconfigPath);
  } else if (flags.string('kubeconfig')) kc.loadFromFile(flags.string('kubeconfig')!);
  else kc.loadFromDefault();

  const flavor = requested === 'auto' ? await detectFlavor(kc) : requested;
  if (requested === 'auto') logger.info({ flavor }, 'API flavor chosen from discovery');
  const registry = new ResourceRegistry(flavor);
  const n = registry.naming;
  const client = new KubeClient(kc, registry, {
    qps: flags.int('kube-api-qps')!,
    burst: flags.int('kube-api-burst')!,
    userAgent: `${n.controllerManager}/${VERSION}`,
  });
  const identity = newIdentity();
  // events.<group>/v1, not the core group's Event that `client.kind('Event')` would pick.
  const eventsRt = registry.resource(group(n, 'events'), 'v1', 'events');
  if (!eventsRt) throw new Error(`the registry has no ${group(n, 'events')}/v1 events`);
  const recorder = new ApiEventRecorder(client.resource(eventsRt), n.controllerManager, identity, realClock, logger);
  const definitions = selectControllers(
    controllerDefinitions,
    flags.all('controllers').length ? flags.all('controllers') : ['*'],
  );
  const health = new LeaderElectionHealth();
  const manager = new Manager(
    {
      client,
      registry,
      naming: n,
      recorder,
      logger,
      clock: realClock,
      metrics: register,
      features: (g) => gates[g] ?? false,
      config: {},
    },
    {
      controllers: definitions,
      workers: Object.fromEntries(controllerDefinitions.map((d) => [d.name, flags.int(`concurrent-${d.name}-syncs`)!])),
      leaderElection: {
        enabled: flags.bool('leader-elect'),
        namespace: flags.string('leader-elect-resource-namespace') ?? n.systemNamespace,
        name: flags.string('leader-elect-resource-name') ?? n.controllerManager,
        identity,
        leaseDurationMs: flags.durationMs('leader-elect-lease-duration')!,
        renewDeadlineMs: flags.durationMs('leader-elect-renew-deadline')!,
        retryPeriodMs: flags.durationMs('leader-elect-retry-period')!,
        releaseOnCancel: flags.bool('leader-elect-release-on-cancel'),
      },
      syncTimeoutMs: 60_000,
      shutdownTimeoutMs: 10_000,
      health,
    },
  );
  logger.info({ identity, host: hostname(), controllers: definitions.map((d) => d.name) }, 'starting');

  const stop = new AbortController();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => stop.abort());
  const outcome = await manager.run(stop.signal);
  await embedded?.stop();
  if (outcome === 'lostLeadership') {
    logger.error('leaderelection lost');
    return 1;
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof FlagError ? `Error: ${err.message}` : err);
    process.exit(1);
  },
);
