/**
 * `orch-controller-manager`: the daemon. It connects with `--kubeconfig` (else `$KUBECONFIG`, the
 * default file, or the in-cluster service account), or with `--embedded` brings its own control
 * plane; then runs the selected controllers while it holds the leader lease.
 */
import { hostname } from 'node:os';
import type { CertificatesConfig, FilePair, SignerKey, SigningConfig } from '../../controllers/certificates/config.ts';
import { controllerDefinitions } from '../../controllers/index.ts';
import { whyAnswerers } from '../../controllers/why.ts';
import { DAEMON_NAME, FLAVORS, group, isFlavorName, naming } from '../api/naming.ts';
import { ResourceRegistry } from '../api/registry.ts';
import { versionInfo } from '../build-info.ts';
import { KubeClient } from '../client/client.ts';
import { detectFlavor } from '../client/flavor.ts';
import { KubeConfig } from '../client/kubeconfig.ts';
import { FeatureGates } from '../config/features.ts';
import { ConfigError, loadConfiguration } from '../config/load.ts';
import {
  type ConfigSchema,
  type ControllerManagerConfiguration,
  configFileFlagSpecs,
  configFlagSpecs,
  controllerManagerSchema,
  SECTIONS,
  type SignerFilesConfiguration,
} from '../config/schema.ts';
import {
  type ControllerDefinition,
  controllersIn,
  selectControllers,
  workersByName,
} from '../controller/controller.ts';
import { ApiEventRecorder } from '../controller/events.ts';
import { Manager, type ManagerOptions, type RunOutcome } from '../controller/manager.ts';
import { ServiceAccountCredentials } from '../controller/service-account-credentials.ts';
import { startupRefusal } from '../controlplane/store-refusal.ts';
import { register } from '../diagnostics/metrics/prom-client.ts';
import { standardMetrics } from '../diagnostics/metrics/standard.ts';
import { reviewCacheFlags } from '../diagnostics/options.ts';
import { newIdentity } from '../leaderelection/elector.ts';
import { LeaseGuard } from '../leaderelection/guard.ts';
import { LeaderElectionHealth } from '../leaderelection/health.ts';
import { createLogger } from '../log/logger.ts';
import { ShardedReplica } from '../sharding/replica.ts';
import { realClock } from '../util/clock.ts';
import { VERSION } from '../version.ts';
import { startDiagnostics } from './diagnostics.ts';
import { electionFlags, electionSettings } from './election.ts';
import { DAEMON_FLAG_NAMES, embeddedFlags } from './embedded-flags.ts';
import { FlagError, type FlagSpec, Flags, parseFlags, usage } from './flags.ts';
import { assertPortsFree, isAddressInUse, type Listener, portInUse } from './ports.ts';

const GENERIC = SECTIONS.generic;

/**
 * The component configuration's schema. Flag names carry the node agent's and the API server's words; flags are
 * fixed before discovery picks a flavor, so they use the default flavor's words.
 */
function configSchema(gates: FeatureGates): ConfigSchema {
  return controllerManagerSchema({ naming: naming(), controllers: controllerDefinitions, features: gates });
}

function specs(schema: ConfigSchema): FlagSpec[] {
  const all: FlagSpec[] = [
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
    ...configFileFlagSpecs(),
    { name: 'help', type: 'bool', section: GENERIC, usage: 'Show this help.' },
    // Every flag that sets a configuration field: generic, leader election, logs, feature gates, controllers,
    // CSR signing, secure serving.
    ...configFlagSpecs(schema),
    ...reviewCacheFlags(),
    ...electionFlags(),
    ...embeddedFlags(DAEMON_FLAG_NAMES),
  ];
  const seen = new Set<string>();
  for (const s of all) {
    if (seen.has(s.name)) throw new Error(`flag --${s.name} is defined twice`);
    seen.add(s.name);
  }
  return all;
}

/**
 * The certificate controllers' part of the component configuration. `embeddedCa` (the embedded control plane's
 * cluster CA) signs for every signer when no signing file is configured, so CSRs are issued with no flags at all.
 */
function certificatesConfig(cfg: ControllerManagerConfiguration, embeddedCa?: FilePair): CertificatesConfig {
  const s = cfg.csrSigningController;
  const pair = (p: SignerFilesConfiguration): FilePair | undefined =>
    p.certFile || p.keyFile ? { certFile: p.certFile || undefined, keyFile: p.keyFile || undefined } : undefined;
  const given: Record<SignerKey, FilePair | undefined> = {
    nodeAgentServing: pair(s.nodeAgentServingSignerConfiguration),
    apiServerClientNodeAgent: pair(s.nodeAgentClientSignerConfiguration),
    apiServerClient: pair(s.apiServerClientSignerConfiguration),
    legacyUnknown: pair(s.legacyUnknownSignerConfiguration),
  };
  const perSigner: SigningConfig['perSigner'] = {};
  for (const [key, files] of Object.entries(given)) if (files) perSigner[key as SignerKey] = files;
  let certFile = s.clusterSigningCertFile || undefined;
  let keyFile = s.clusterSigningKeyFile || undefined;
  if (embeddedCa && !certFile && !keyFile && Object.keys(perSigner).length === 0) ({ certFile, keyFile } = embeddedCa);
  const approval = cfg.csrApprovingController.nodeAgentServing;
  return {
    signing: { certFile, keyFile, perSigner, durationMs: s.clusterSigningDuration },
    servingApproval: {
      enabled: approval.enabled,
      dnsPatterns: approval.dnsNamePatterns,
      maxDurationMs: approval.maxExpirationSeconds ? approval.maxExpirationSeconds * 1000 : undefined,
    },
    rootCaFile: cfg.clusterTrustBundlePublisherController.rootCAFile || undefined,
  };
}

/** The ports this daemon will listen on: its diagnostics server's, and its embedded API's. */
function listeners(cfg: ControllerManagerConfiguration, flags: Flags): Listener[] {
  const diagnostics = { host: cfg.serving.bindAddress, port: cfg.serving.securePort, flag: 'secure-port' };
  if (!flags.bool('embedded')) return [diagnostics];
  const names = DAEMON_FLAG_NAMES;
  return [{ host: flags.string(names.bind)!, port: flags.int(names.port)!, flag: names.port }, diagnostics];
}

async function main(): Promise<number> {
  const startTime = new Date(Date.now() - process.uptime() * 1000);
  const gates = new FeatureGates();
  const schema = configSchema(gates);
  const all = specs(schema);
  const flags = new Flags(all, parseFlags(all, process.argv.slice(2)));
  if (flags.bool('help')) {
    console.log(
      usage('orch-controller-manager', 'Runs the controllers that turn stored desired state into observed state.', all),
    );
    return 0;
  }
  const requested = flags.string('api-flavor')!;
  if (requested !== 'auto' && !isFlavorName(requested)) {
    throw new FlagError(`invalid argument "${requested}" for "--api-flavor" flag: must be auto, orch or kubernetes`);
  }
  // Defaults, then --config, then --config-dir drop-ins, then the flags given: strict, or start-up fails.
  const loaded = await loadConfiguration({
    schema,
    accept: requested === 'auto' ? FLAVORS.map((f) => naming(f)) : [naming(requested)],
    configFile: flags.string('config'),
    configDir: flags.string('config-dir'),
    flags,
  });
  const cfg = loaded.config;
  const gateWarnings = gates.set(cfg.featureGates);
  const election = electionSettings(flags);
  const logger = createLogger({ verbosity: cfg.logging.verbosity, format: cfg.logging.format });
  for (const warning of gateWarnings) logger.warn(warning);
  if (loaded.files.length) logger.info({ files: loaded.files }, 'configuration loaded');

  // Every port is checked before anything starts or prints: a busy one is one line naming the flag that moves it.
  await assertPortsFree(listeners(cfg, flags));

  const kc = new KubeConfig();
  // Loaded only when asked for: the control plane and its store are most of the bundle and unused otherwise.
  const plane = flags.bool('embedded') ? await import('./embedded.ts') : undefined;
  const embedded = await plane?.startEmbedded(
    flags,
    gates.asMap(),
    requested === 'auto' ? (loaded.flavor ?? 'orch') : requested,
    DAEMON_FLAG_NAMES,
    logger,
  );
  if (plane && embedded) {
    await plane.printWelcome(embedded);
    kc.loadFromFile(embedded.kubeconfigPath);
  } else if (flags.string('kubeconfig')) kc.loadFromFile(flags.string('kubeconfig')!);
  else kc.loadFromDefault();

  const flavor =
    requested === 'auto'
      ? await detectFlavor(kc).catch((err: Error) => {
          throw new Error(`--api-flavor=auto: ${err.message}`);
        })
      : requested;
  if (requested === 'auto') logger.info({ flavor }, 'API flavor chosen from discovery');
  if (loaded.flavor && loaded.flavor !== flavor) {
    throw new ConfigError([
      {
        source: loaded.files[0],
        path: 'apiVersion',
        problem: `names the ${loaded.flavor} flavor, but the server serves the ${flavor} flavor`,
      },
    ]);
  }
  const registry = new ResourceRegistry(flavor);
  const n = registry.naming;
  const { observeClientRequest } = standardMetrics(register, {
    naming: n,
    gates: gates.metricStates(),
    build: () => versionInfo(VERSION),
  });
  const identity = newIdentity();
  const le = cfg.generic.leaderElection;
  // Only the replica that can prove it holds the lease writes (see LeaseGuard).
  const guard = le.leaderElect ? new LeaseGuard(le.renewDeadline, realClock, undefined, le.leaseDuration) : undefined;
  const client = new KubeClient(kc, registry, {
    qps: cfg.generic.clientConnection.qps,
    burst: cfg.generic.clientConnection.burst,
    // The replica's identity, so audit logs attribute every write to one replica.
    userAgent: `${n.controllerManager}/${VERSION} (${identity})`,
    observe: observeClientRequest,
    headers: cfg.generic.clientConnection.extraHeaders,
    protobuf: cfg.generic.clientConnection.contentType === 'application/vnd.kubernetes.protobuf',
    writeGuard: guard,
  });
  // events.<group>/v1, not the core group's Event that `client.kind('Event')` would pick.
  const eventsRt = registry.resource(group(n, 'events'), 'v1', 'events');
  if (!eventsRt) throw new Error(`the registry has no ${group(n, 'events')}/v1 events`);
  const recorderFor = (c: KubeClient) =>
    new ApiEventRecorder(c.resource(eventsRt), n.controllerManager, identity, realClock, logger);
  const recorder = recorderFor(client);
  let definitions: typeof controllerDefinitions;
  try {
    // The embedded control plane runs none of the API server's own controllers: this daemon does.
    const apiServerControllers = !embedded && flavor === 'kubernetes';
    definitions = selectControllers(controllersIn(flavor, controllerDefinitions), cfg.generic.controllers, {
      apiServerControllers,
    }).filter((d) => !d.featureGate || gates.enabled(d.featureGate));
  } catch (err) {
    // A bad --controllers value is a usage error: one line, not a stack trace.
    throw new FlagError((err as Error).message);
  }
  const controllerConfig = {
    certificates: certificatesConfig(cfg, embedded?.caFiles),
    leaseCandidateGc: { periodMs: election.gcPeriodMs },
    apiservice: { probeVerifyTls: cfg.apiServiceAvailabilityController.probeVerifyTLS },
  };
  const health = new LeaderElectionHealth();
  // As kube-controller-manager's: the controllers' own requests and events carry their service accounts' tokens;
  // the informers, elections and reviews keep the daemon's credentials. Token requests are not fenced.
  const credentials = cfg.generic.useServiceAccountCredentials
    ? new ServiceAccountCredentials({
        root: client.derive({ writeGuard: undefined }),
        naming: n,
        namespace: n.systemNamespace,
        clock: realClock,
        logger: logger.child({ credentials: 'service-account' }),
      })
    : undefined;
  const ctx = {
    client,
    registry,
    naming: n,
    recorder,
    logger,
    clock: realClock,
    metrics: register,
    features: (g: string) => gates.enabled(g),
    config: controllerConfig,
    controllerClient: credentials && ((d: ControllerDefinition, base: KubeClient) => credentials.clientFor(d, base)),
    recorderFor,
  };
  const coordinated = gates.enabled('CoordinatedLeaderElection');
  if (election.shards !== undefined && !le.leaderElect) {
    throw new FlagError('--sharding needs --leader-elect: each shard is held through a Lease');
  }
  const sharded = election.shards === undefined ? [] : definitions.filter((d) => d.shardBy);
  const leaderElection: ManagerOptions['leaderElection'] = {
    enabled: le.leaderElect,
    namespace: le.resourceNamespace || n.systemNamespace,
    name: le.resourceName || DAEMON_NAME,
    identity,
    leaseDurationMs: le.leaseDuration,
    renewDeadlineMs: le.renewDeadline,
    retryPeriodMs: le.retryPeriod,
    releaseOnCancel: le.releaseOnCancel,
    // As kube-controller-manager: a LeaseCandidate only in coordinated mode. A classic replica that published one
    // would draw an API server's election controller (gate on) into its Lease, rewriting what the holder renews.
    // Sharded replicas publish theirs all the same: it is how they find each other.
    candidate: coordinated || sharded.length ? election.candidate : undefined,
    coordinated,
    // Sharded replicas' candidates are renewed every retry period, so a stopped one shows soon.
    candidateRenewMs: sharded.length ? le.retryPeriod : undefined,
  };
  const managerOptions = {
    workers: workersByName(definitions, cfg.concurrency),
    syncTimeoutMs: 60_000,
    shutdownTimeoutMs: 10_000,
  };
  const manager = new Manager(ctx, {
    ...managerOptions,
    controllers: definitions.filter((d) => !d.lease && !sharded.includes(d)),
    leaderElection,
    health,
    guard,
  });
  // Controllers with a Lease of their own (the coordinated election's) run under it, elected the classic way,
  // their writes fenced by that Lease.
  const ownLeases = [...new Set(definitions.flatMap((d) => (d.lease ? [d.lease] : [])))];
  const managers = [
    manager,
    ...ownLeases.map((name) => {
      const ownGuard = le.leaderElect
        ? new LeaseGuard(le.renewDeadline, realClock, undefined, le.leaseDuration)
        : undefined;
      return new Manager(
        { ...ctx, client: client.derive({ writeGuard: ownGuard }), logger: logger.child({ lease: name }) },
        {
          ...managerOptions,
          controllers: definitions.filter((d) => d.lease === name),
          leaderElection: { ...leaderElection, name, candidate: undefined, coordinated: false },
          guard: ownGuard,
        },
      );
    }),
  ];
  const replica =
    election.shards === undefined
      ? undefined
      : new ShardedReplica({
          ctx,
          controllers: sharded,
          shards: election.shards,
          leaderElection,
          ...managerOptions,
        });
  // With its own control plane, the daemon trusts that cluster's CA for the clients of its diagnostics server,
  // as a kube-controller-manager given --client-ca-file: the admin kubeconfig reads /metrics, /statusz, ...
  if (embedded && !cfg.serving.clientCAFile) cfg.serving.clientCAFile = embedded.caFiles.certFile;
  const diagnostics = await startDiagnostics({
    cfg,
    schema,
    gates,
    naming: n,
    specs: all,
    flags,
    // Token and access reviews write nothing: standbys answer them too, so they are not fenced.
    client: client.derive({ writeGuard: undefined }),
    registry: register,
    logger,
    manager,
    leaderHealth: health,
    controllers: definitions,
    version: VERSION,
    startTime,
    why: whyAnswerers,
    controllerConfig,
    shards: replica,
  }).catch((err) => {
    throw isAddressInUse(err) ? portInUse(cfg.serving.bindAddress, cfg.serving.securePort, 'secure-port') : err;
  });
  logger.info(
    { identity, host: hostname(), controllers: definitions.map((d) => d.name), diagnosticsPort: diagnostics.port },
    'starting',
  );

  const stop = new AbortController();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => stop.abort());
  // The first manager to end (a lost Lease, a failure, or the signal) ends them all.
  const runs = await Promise.allSettled([
    ...managers.map((m) => m.run(stop.signal).finally(() => stop.abort())),
    ...(replica ? [replica.run(stop.signal).then((): RunOutcome => 'stopped')] : []),
  ]);
  credentials?.stop();
  await diagnostics.stop();
  await embedded?.stop();
  const failed = runs.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  const outcomes = runs.map((r) => (r as PromiseFulfilledResult<RunOutcome>).value);
  if (outcomes.includes('lostLeadership')) {
    logger.error('leaderelection lost');
    return 1;
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    const oneLine = err instanceof FlagError || err instanceof ConfigError || startupRefusal(err);
    console.error(oneLine ? `Error: ${err.message}` : err);
    process.exit(1);
  },
);
