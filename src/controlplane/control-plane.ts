/**
 * The embedded control plane: storage, REST semantics, the HTTPS server, the garbage collector, and
 * the credentials (a cluster CA, a serving certificate, an admin kubeconfig) that clients use.
 */
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { access, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { type KubeObject, objectKey } from '../api/meta.ts';
import { DEFAULT_SERVICE_ACCOUNT, needsDefaultServiceAccount } from '../api/namespaces.ts';
import { type FlavorName, group, type Naming, naming } from '../api/naming.ts';
import { ResourceRegistry } from '../api/registry.ts';
import type { Namespace } from '../api/types/core.ts';
import { versionInfo } from '../build-info.ts';
import { createLogger } from '../log/logger.ts';
import {
  type CertificateWithKey,
  createSelfSignedCa,
  csrOrganizations,
  issueKeyAndCertificate,
  loadCa,
} from '../pki/certs.ts';
import { rfc3339 } from '../util/time.ts';
import { API_LEVEL, API_LEVEL_SEMVER, VERSION } from '../version.ts';
import type { AdmissionPlugin, UserInfo } from './admission.ts';
import { Aggregator } from './aggregator.ts';
import { ApiServer, type ObjectValidation } from './api.ts';
import { AuditLog } from './audit.ts';
import { bootstrapTokenSource, TokenAuthenticator } from './authn.ts';
import { escalationCheck } from './authz/escalation.ts';
import { NodeAuthorizer, nodeRules } from './authz/node.ts';
import {
  AlwaysAllowAuthorizer,
  type Authorizer,
  accessChecker,
  defaultPolicy,
  RbacAuthorizer,
  requestAuthorizer,
} from './authz/rbac.ts';
import { createReviewer } from './authz/reviews.ts';
import { UnionAuthorizer } from './authz/union.ts';
import { bindingHandler } from './binding.ts';
import { ApiError } from './errors.ts';
import type { EtcdStore } from './etcd-store.ts';
import { evictionHandler } from './eviction.ts';
import { GarbageCollector } from './gc.ts';
import { impersonate } from './impersonation.ts';
import { type KubeconfigOptions, renderKubeconfig, writeKubeconfig } from './kubeconfig.ts';
import { openLevelStore } from './kv-level.ts';
import { isNamespaceType, withNameLabel } from './namespace-label.ts';
import { NodeStorageControllers } from './node-storage-controllers.ts';
import { objectValidation } from './object-validation.ts';
import { Journal } from './persistence.ts';
import type { AccessChecker } from './plugins/authorize.ts';
import { standardAdmission } from './plugins/index.ts';
import type { RequestAuthorizer } from './request-info.ts';
import { ControlPlaneServer } from './server.ts';
import { ServiceAccountTokens, tokenRequestHandler } from './service-account-tokens.ts';
import { Storage } from './storage.ts';
import { defaultStorageClass } from './storage-class.ts';
import { withEmptyStructs } from './struct-defaults.ts';
import { DEFAULT_FEATURE_GATES } from './validation/context.ts';
import type { WatchSettings } from './watch.ts';

/**
 * Where objects are kept: `embedded` (LevelDB in `<dataDir>/store`, durable across restarts), `etcd`
 * (in `etcdServers` under `etcdPrefix`), or `memory` (gone when the process ends).
 */
export type StorageKind = 'embedded' | 'etcd' | 'memory';

export interface ControlPlaneOptions {
  flavor: FlavorName;
  storage: StorageKind;
  etcdServers: string[];
  /** Key prefix in etcd: control planes sharing one serve the same objects; others keep apart by prefix. */
  etcdPrefix: string;
  /** How often etcd's history is compacted (the reference's `--etcd-compaction-interval`); 0 never. */
  etcdCompactionIntervalMs: number;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Where credentials, kubeconfigs and (embedded storage) the objects are written. */
  dataDir: string;
  /** Where the admin kubeconfig goes (default `<dataDir>/kubeconfig`). */
  kubeconfigOut?: string;
  /** An existing CA to use instead of generating one. */
  caCertFile?: string;
  caKeyFile?: string;
  tokenAuthFile?: string;
  featureGates: Record<string, boolean>;
  continueTtlMs: number;
  historySize: number;
  watch: WatchSettings;
  now: () => Date;
  /** Validation and defaulting; the standard per-kind rules when unset. */
  validation?: ObjectValidation;
  /** The admission chain; the standard plugins when unset. */
  admission?: AdmissionPlugin[];
  /**
   * `Node,RBAC` (the default): the Node authorizer for node identities, then `RBAC`: Roles, ClusterRoles and
   * their bindings from storage, with the bootstrap policy, `system:masters` allowed everything;
   * `AlwaysAllow`: every authenticated request passes.
   */
  authorizationMode: 'Node,RBAC' | 'RBAC' | 'AlwaysAllow';
  /**
   * `--anonymous-auth`: a request without credentials is `system:anonymous` in `system:unauthenticated`, which
   * the bootstrap policy lets read only `/healthz`, `/livez`, `/readyz` and `/version`; off, it is 401. As the
   * reference, never with `AlwaysAllow` (which would let anyone do anything).
   */
  anonymousAuth: boolean;
  /** Replaces the request check of `authorizationMode`. */
  authorize?: RequestAuthorizer;
  /** What admission asks the authorizer (approve, sign, attest); `authorizationMode`'s authorizer when unset. */
  accessCheck?: AccessChecker;
  /** Where every write is logged as a JSON-lines audit Event (`--audit-log-path`); none when unset. */
  auditLogPath?: string;
  /** Where the control plane's own messages go (the daemon passes its logger); JSON lines on stderr when unset. */
  log?: Logger;
}

export const DEFAULT_CONTROL_PLANE_OPTIONS: ControlPlaneOptions = {
  flavor: 'orch',
  storage: 'embedded',
  etcdServers: [],
  etcdPrefix: '/registry/',
  etcdCompactionIntervalMs: 5 * 60_000,
  host: '127.0.0.1',
  port: 6443,
  dataDir: '.orch',
  featureGates: {},
  continueTtlMs: 5 * 60_000,
  historySize: 5000,
  watch: {
    bookmarkIntervalMs: 60_000,
    defaultTimeoutSeconds: 1800,
    maxQueuedEvents: 100,
    maxQueuedBytes: 16 * 1024 * 1024,
    slowWatcherGraceMs: 5_000,
  },
  now: () => new Date(),
  authorizationMode: 'Node,RBAC',
  anonymousAuth: true,
};

/** `/version`: the plane emulates the API level it serves. Made at start, not import: it reads the git checkout. */
const controlPlaneVersion = () =>
  versionInfo(`v${API_LEVEL_SEMVER}+embedded.${VERSION}`, `${API_LEVEL.major}.${API_LEVEL.minor}`);

export class ControlPlane {
  readonly registry: ResourceRegistry;
  readonly storage: Storage;
  readonly api: ApiServer;
  readonly tokens = new TokenAuthenticator();
  readonly options: ControlPlaneOptions;
  readonly log: Logger;
  /** Decides requests, admission's access questions and the access reviews. */
  readonly authorizer: Authorizer;
  /** Bound service account tokens (TokenRequest), their signing key loaded or generated at start. */
  serviceAccountTokens?: ServiceAccountTokens;
  private server?: ControlPlaneServer;
  /** The audit log, when `auditLogPath` is set and the control plane has started. */
  audit?: AuditLog;
  private gc?: GarbageCollector;
  private nodeStorage?: NodeStorageControllers;
  private aggregator?: Aggregator;
  private ca?: CertificateWithKey;
  /** Helpers that run against this plane (simulated nodes): stopped before it. */
  private readonly companions: { stop(): Promise<void> }[] = [];
  private journal?: Journal;
  private etcd?: EtcdStore;
  port = 0;
  kubeconfigPath = '';

  constructor(options: Partial<ControlPlaneOptions> = {}) {
    this.options = { ...DEFAULT_CONTROL_PLANE_OPTIONS, ...options };
    this.log = (this.options.log ?? createLogger({ verbosity: 0, format: 'json' })).child({ logger: 'control-plane' });
    this.registry = new ResourceRegistry(naming(this.options.flavor));
    this.storage = new Storage({ historySize: this.options.historySize, loaded: withEmptyStructs });
    const o = this.options;
    const features = (g: string) => o.featureGates[g] ?? DEFAULT_FEATURE_GATES[g] ?? false;
    const rbac = o.authorizationMode === 'AlwaysAllow' ? undefined : new RbacAuthorizer(this.storage, this.registry);
    this.authorizer = this.chooseAuthorizer(o.authorizationMode, rbac);
    const can: AccessChecker = o.accessCheck ?? accessChecker(this.authorizer);
    const admission = [
      ...(o.admission ??
        standardAdmission(this.registry, this.storage, can, csrOrganizations, (user, attrs) =>
          this.authorizer.authorize(user, attrs),
        )),
    ];
    // Last, as the reference's RBAC storage judges the object mutating admission produced.
    if (rbac) admission.push(escalationCheck(rbac, this.registry));
    this.api = new ApiServer(this.registry, this.storage, {
      log: this.log,
      now: o.now,
      continueTtlMs: o.continueTtlMs,
      features,
      validation: o.validation ?? objectValidation(this.registry.naming, features, o.now),
      admission,
    });
    // POST pods/{name}/eviction: deletes a pod within its PodDisruptionBudget.
    this.api.subresourceHandlers.set('pods/eviction', evictionHandler);
    // POST pods/{name}/binding: a scheduler's assignment of a pod to a node.
    this.api.subresourceHandlers.set('pods/binding', bindingHandler);
    // Node agents join with bootstrap tokens kept as Secrets in the system namespace.
    const secrets = this.registry.byKind('Secret')!;
    this.tokens.addSource(
      bootstrapTokenSource((ns, name) => this.storage.get(secrets, `${ns}/${name}`), this.registry.naming, o.now),
    );
  }

  private chooseAuthorizer(
    mode: ControlPlaneOptions['authorizationMode'],
    rbac: RbacAuthorizer | undefined,
  ): Authorizer {
    if (!rbac) return new AlwaysAllowAuthorizer();
    if (mode === 'RBAC') return rbac;
    return new UnionAuthorizer([new NodeAuthorizer(this.storage, this.registry), rbac]);
  }

  get url(): string {
    return `https://${this.options.host}:${this.port}`;
  }

  get faults() {
    if (!this.server) throw new Error('control plane not started');
    return this.server.faults;
  }

  get caPem(): string {
    if (!this.ca) throw new Error('control plane not started');
    return this.ca.certPem;
  }

  /** Where the cluster CA's certificate and key are: the given files, or those generated into the data directory. */
  get caFiles(): { certFile: string; keyFile: string } {
    const o = this.options;
    if (o.caCertFile && o.caKeyFile) return { certFile: o.caCertFile, keyFile: o.caKeyFile };
    return { certFile: join(o.dataDir, 'ca.crt'), keyFile: join(o.dataDir, 'ca.key') };
  }

  /** The cluster CA (also the client CA): what signers and kubeconfigs use. */
  get clusterCa(): CertificateWithKey {
    if (!this.ca) throw new Error('control plane not started');
    return this.ca;
  }

  async start(): Promise<void> {
    const o = this.options;
    await mkdir(o.dataDir, { recursive: true });
    await this.openStore();
    this.ca = await this.loadOrCreateCa();
    if (o.tokenAuthFile) this.tokens.loadFile(o.tokenAuthFile);
    const serving = await issueKeyAndCertificate({
      ca: this.ca,
      subject: { commonName: this.registry.naming.apiServer },
      dnsNames: ['localhost', this.registry.naming.apiServer],
      ipAddresses: ['127.0.0.1', '::1', ...(o.host !== '127.0.0.1' && /^[\d.:]+$/.test(o.host) ? [o.host] : [])],
      usages: ['server auth'],
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + 365 * 24 * 3600_000),
    });
    await this.startServiceAccountTokens();
    await this.labelStoredNamespaces();
    await this.bootstrapNamespaces();
    await this.provideDefaultServiceAccounts();
    // The default StorageClass, as a cluster installer leaves one (the simulated nodes provision its volumes).
    await this.seedIfAbsent(defaultStorageClass(this.registry.naming));
    await this.installBootstrapPolicy();
    this.gc = new GarbageCollector(this.api);
    this.gc.start();
    this.nodeStorage = new NodeStorageControllers(this.storage, this.registry, o.now, this.log);
    this.nodeStorage.start();
    this.aggregator = new Aggregator({
      storage: this.storage,
      registry: this.registry,
      authorizer: this.authorizer,
      seed: (obj) => this.seedIfAbsent(obj),
      log: this.log,
    });
    await this.aggregator.start();
    if (o.auditLogPath) this.audit = new AuditLog(o.auditLogPath, this.registry.naming);
    // As the reference: anonymous requests under AlwaysAllow would let anyone do anything.
    const anonymous = o.anonymousAuth && o.authorizationMode !== 'AlwaysAllow';
    if (o.anonymousAuth && !anonymous) {
      this.log.warn(
        'AnonymousAuth is not allowed with the AlwaysAllow authorizer. Resetting AnonymousAuth to false. You should use a different authorizer',
      );
    }
    this.server = new ControlPlaneServer(this.api, {
      key: serving.keyPem,
      cert: serving.certPem,
      clientCa: this.ca.certPem,
      tokens: this.tokens,
      anonymous,
      authorize: o.authorize ?? requestAuthorizer(this.authorizer),
      impersonate: (user, rawHeaders) =>
        impersonate(user, rawHeaders, group(this.registry.naming, 'authentication'), this.authorizer),
      watch: o.watch,
      version: controlPlaneVersion(),
      maxBodyBytes: 3 * 1024 * 1024,
      aggregator: this.aggregator,
      audit: this.audit,
    });
    this.port = await this.server.listen(o.port, o.host);
    this.kubeconfigPath = o.kubeconfigOut ?? join(o.dataDir, 'kubeconfig');
    await this.writeIdentityKubeconfig(this.kubeconfigPath, { username: 'admin', groups: ['system:masters'] });
  }

  /** Ties a helper's lifetime to the plane's: `stop()` stops it first. */
  attach(companion: { stop(): Promise<void> }): void {
    this.companions.push(companion);
  }

  async stop(): Promise<void> {
    for (const c of this.companions.splice(0).reverse()) await c.stop();
    this.gc?.stop();
    this.nodeStorage?.stop();
    this.aggregator?.stop();
    await this.server?.close();
    await this.audit?.close();
    await this.journal?.close();
    await this.etcd?.close();
  }

  /**
   * Loads the objects a persistent store kept: LevelDB, journaled from now on, or etcd, which the storage
   * then follows as its watch cache.
   */
  private async openStore(): Promise<void> {
    const o = this.options;
    if (o.storage === 'memory') return;
    if (o.storage === 'etcd') {
      if (o.etcdServers.length === 0) throw new Error('etcd storage needs at least one server in --etcd-servers');
      // Imported on use: the etcd client and its gRPC stack would cost every start ~0.3 s.
      const { EtcdStore } = await import('./etcd-store.ts');
      this.etcd = await EtcdStore.open(this.storage, this.registry, {
        servers: o.etcdServers,
        prefix: o.etcdPrefix,
        compactionIntervalMs: o.etcdCompactionIntervalMs,
        log: this.log,
      });
      return;
    }
    const kv = await openLevelStore(join(o.dataDir, 'store'));
    const { journal, skipped } = await Journal.open(this.storage, kv, this.registry, o.historySize);
    this.journal = journal;
    if (skipped > 0) {
      // Only a store both flavors wrote to before each had a directory of its own (data-dir.ts) holds them.
      this.log.warn(
        { skipped },
        "stored objects of resources this flavor does not serve (another flavor's, written before each flavor had its own directory): kept, not served",
      );
    }
  }

  /**
   * Waits until the garbage collector and the node and storage controllers have processed every change so far and
   * are idle together: each can give the other work (a pod the collector deletes releases a claim, whose removal
   * is the collector's again). Throws if they are not within `timeoutMs`.
   */
  async settled(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const loops = [this.gc?.work, this.nodeStorage?.work].filter((l) => l !== undefined);
    while (!loops.every((l) => l.idle)) {
      for (const l of loops) {
        if (!(await l.settled(deadline)))
          throw new Error(`the plane's controllers were still busy after ${timeoutMs} ms`);
      }
    }
  }

  /** Writes a kubeconfig for any identity, with a client certificate from the cluster CA. */
  async writeIdentityKubeconfig(path: string, user: UserInfo): Promise<string> {
    await writeKubeconfig(path, await this.identityKubeconfigOptions(user));
    return path;
  }

  /** The text of a kubeconfig for any identity (simulated nodes keep theirs in memory). */
  async identityKubeconfig(user: UserInfo): Promise<string> {
    return renderKubeconfig(await this.identityKubeconfigOptions(user));
  }

  private async identityKubeconfigOptions(user: UserInfo): Promise<KubeconfigOptions> {
    const cert = await issueKeyAndCertificate({
      ca: this.clusterCa,
      subject: { commonName: user.username, organizations: user.groups },
      usages: ['client auth'],
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + 365 * 24 * 3600_000),
    });
    const flavorName = this.registry.naming.product;
    return {
      server: this.url,
      caPem: this.caPem,
      user: { name: user.username, clientCertPem: cert.certPem, clientKeyPem: cert.keyPem },
      clusterName: `${flavorName}-embedded`,
      contextName: `${user.username}@${flavorName}-embedded`,
    };
  }

  /**
   * Stores an object directly (fixtures, defaults at start); bypasses admission and validation. Seeding a
   * bootstrap-policy object (labelled `<domain>/bootstrapping`) that the control plane already installed
   * replaces it, as the reference's policy reconciliation does, instead of failing as a duplicate.
   */
  async seed(given: KubeObject): Promise<KubeObject> {
    const rt = this.registry.kind(given.apiVersion ?? 'v1', given.kind ?? '');
    if (!rt) throw new Error(`unknown kind ${given.apiVersion} ${given.kind}`);
    const obj = withEmptyStructs(
      isNamespaceType(rt) ? withNameLabel(given, this.registry.naming.labels.metadataName) : given,
    );
    const existing = this.storage.get(rt, objectKey(obj.metadata));
    if (existing && isBootstrapPolicy(existing, this.registry.naming) && isBootstrapPolicy(obj, this.registry.naming)) {
      return this.storage.backend.update(
        rt,
        { ...obj, metadata: { ...existing.metadata, ...obj.metadata } },
        existing.metadata.resourceVersion,
      );
    }
    return this.storage.backend.create(rt, {
      ...obj,
      metadata: {
        uid: crypto.randomUUID(),
        creationTimestamp: rfc3339(this.options.now()),
        ...(rt.hasGeneration ? { generation: 1 } : {}),
        ...obj.metadata,
      },
    });
  }

  /**
   * Seeds a default unless it is stored. Control planes sharing one etcd all seed at start: the one
   * whose create lost the race finds the object there.
   */
  private async seedIfAbsent(obj: KubeObject): Promise<void> {
    const rt = this.registry.kind(obj.apiVersion ?? 'v1', obj.kind ?? '');
    if (!rt || this.storage.get(rt, objectKey(obj.metadata))) return;
    await this.seed(obj).catch(lostTheRace);
  }

  /**
   * The reference's bootstrap RBAC policy (among it the node bootstrap roles: `nodeclient` for
   * `system:bootstrappers`, `selfnodeclient` for `system:nodes`), what node agents need (see
   * {@link nodeAgentPolicy}), and the review endpoints answered by RBAC, so that the CSR approver's
   * SubjectAccessReviews work. Objects already stored are left as they are.
   */
  private async installBootstrapPolicy(): Promise<void> {
    for (const obj of [...defaultPolicy(this.registry.naming), ...nodeAgentPolicy(this.registry.naming)]) {
      await this.seedIfAbsent(obj);
    }
    const saTokens = this.serviceAccountTokens;
    this.api.reviewer ??= createReviewer({
      authorizer: this.authorizer,
      naming: this.registry.naming,
      lookup: (token) => this.tokens.lookup(token),
      audiences: saTokens && {
        api: saTokens.apiAudiences,
        authenticate: (token, audiences) => saTokens.authenticate(token, audiences),
      },
      now: this.options.now,
    });
  }

  /**
   * The service account token issuer: its P-256 signing key kept in the data directory (so tokens outlive a
   * restart), `serviceaccounts/<name>/token`, and its tokens accepted as bearer tokens for the API audience.
   */
  private async startServiceAccountTokens(): Promise<void> {
    const n = this.registry.naming;
    const keyFile = join(this.options.dataDir, 'sa.key');
    const pem = await readFile(keyFile, 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    let key: KeyObject;
    if (pem) key = createPrivateKey(pem);
    else {
      key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
      await writeFile(keyFile, key.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    }
    const issuer = `https://${n.product}.default.svc.cluster.local`;
    const read = (kind: string, namespace: string, name: string) => {
      const rt = this.registry.kind('v1', kind);
      return rt && this.storage.get(rt, namespace ? `${namespace}/${name}` : name);
    };
    const tokens = new ServiceAccountTokens({
      key,
      issuer,
      apiAudiences: [issuer],
      naming: n,
      read,
      now: this.options.now,
    });
    this.serviceAccountTokens = tokens;
    this.tokens.addSource((token) => tokens.authenticate(token)?.user);
    this.api.subresourceHandlers.set('serviceaccounts/token', tokenRequestHandler(tokens, read));
  }

  /**
   * Namespaces a store kept from a version that did not label them get their name label now, once, written
   * like any update: every reader (namespace selectors of admission, label-selector lists, watches,
   * informers) then sees the same labelled object, where labelling on read would have to patch each path.
   */
  private async labelStoredNamespaces(): Promise<void> {
    const rt = this.registry.kind('v1', 'Namespace');
    if (!rt) return;
    const label = this.registry.naming.labels.metadataName;
    for (const ns of this.storage.list(rt)) {
      const labelled = withNameLabel(ns, label);
      if (labelled === ns) continue;
      // A control plane sharing this etcd may have labelled (or removed) it first: nothing is left to do.
      await this.storage.backend.update(rt, labelled, ns.metadata.resourceVersion).catch((err) => {
        if (!(err instanceof ApiError && (err.reason === 'Conflict' || err.reason === 'NotFound'))) throw err;
      });
    }
  }

  private async bootstrapNamespaces(): Promise<void> {
    const n = this.registry.naming;
    for (const name of n.initialNamespaces) {
      await this.seedIfAbsent({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name },
        spec: { finalizers: [n.namespaceFinalizer] },
        status: { phase: 'Active' },
      });
    }
  }

  /**
   * What the reference's serviceaccount controller (in kube-controller-manager, which the embedded plane has none of)
   * does: every Active namespace has its `default` ServiceAccount, which the ServiceAccount admission requires of a
   * pod naming no account. Made for the namespaces stored at start and for each new one; after a delete of the
   * account the daemon's own serviceaccount controller brings it back, as in a real cluster.
   */
  private async provideDefaultServiceAccounts(): Promise<void> {
    const namespaces = this.registry.kind('v1', 'Namespace')!;
    const accounts = this.registry.kind('v1', 'ServiceAccount')!;
    const provide = async (ns: KubeObject) => {
      const metadata = { name: DEFAULT_SERVICE_ACCOUNT, namespace: ns.metadata.name };
      const has = this.storage.get(accounts, objectKey(metadata)) !== undefined;
      if (!needsDefaultServiceAccount(ns as Namespace, has)) return;
      await this.seed({ apiVersion: 'v1', kind: 'ServiceAccount', metadata }).catch(lostTheRace);
    };
    for (const ns of this.storage.list(namespaces)) await provide(ns);
    const stop = this.storage.onCommit(({ rt, event }) => {
      if (!isNamespaceType(rt) || event.type !== 'ADDED') return;
      // After the commit that notifies, not inside it.
      setImmediate(() =>
        provide(event.object).catch((err) => this.log.error({ err }, 'the default ServiceAccount was not made')),
      );
    });
    this.companions.push({ stop: async () => stop() });
  }

  private async loadOrCreateCa(): Promise<CertificateWithKey> {
    const o = this.options;
    if (o.caCertFile || o.caKeyFile) {
      if (!o.caCertFile || !o.caKeyFile) throw new Error('--ca-cert-file and --ca-key-file must be given together');
      return loadCa(await readFile(o.caCertFile, 'utf8'), await readFile(o.caKeyFile, 'utf8'));
    }
    const { certFile, keyFile } = this.caFiles;
    // A persistent cluster keeps its CA: clients that survive a restart keep trusting it.
    if (o.storage !== 'memory' && (await exists(certFile)) && (await exists(keyFile))) {
      return loadCa(await readFile(certFile, 'utf8'), await readFile(keyFile, 'utf8'));
    }
    const ca = await createSelfSignedCa({ commonName: `${this.registry.naming.product}-embedded-ca` });
    // Both files in full or neither: each is written aside and renamed into place, the key first, so a
    // certificate on disk always has its key beside it.
    await writeFileAtomically(keyFile, ca.keyPem, 0o600);
    await writeFileAtomically(certFile, ca.certPem, 0o644);
    return ca;
  }
}

async function writeFileAtomically(path: string, text: string, mode: number): Promise<void> {
  const aside = `${path}.${process.pid}.tmp`;
  await writeFile(aside, text, { mode });
  await rename(aside, path);
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** Whether an object belongs to the bootstrap RBAC policy (the reference's `bootstrapping: rbac-defaults` label). */
function isBootstrapPolicy(obj: KubeObject, n: Naming): boolean {
  return obj.metadata.labels?.[`${n.domain}/bootstrapping`] === 'rbac-defaults';
}

/**
 * The reference's `system:node` role (the Node authorizer's static rules) and its binding, which since the
 * Node authorizer names no subject: node identities get these rules through that authorizer, narrowed by
 * NodeRestriction admission to their own objects, never through RBAC.
 */
function nodeAgentPolicy(n: Naming): KubeObject[] {
  const rbac = group(n, 'rbac.authorization');
  const metadata = {
    name: 'system:node',
    labels: { [`${n.domain}/bootstrapping`]: 'rbac-defaults' },
    annotations: { [`rbac.authorization.${n.domain}/autoupdate`]: 'true' },
  };
  return [
    {
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRole',
      metadata,
      rules: nodeRules(n),
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRoleBinding',
      metadata,
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'system:node' },
    },
  ];
}

/** A seed's create that another control plane sharing the store made first: the object is there, as wanted. */
function lostTheRace(err: unknown): void {
  if (!(err instanceof ApiError && err.reason === 'AlreadyExists')) throw err;
}
