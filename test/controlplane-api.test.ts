/**
 * The embedded control plane's REST semantics (spec §4, §6, §7), exercised through an unchanged
 * @kubernetes/client-node 2.0.1 and, where that client cannot say what a test needs (raw bodies,
 * headers, the `/watch/` path form, subresources of the orch groups), through raw HTTPS with the
 * same kubeconfig credentials.
 */
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type KubernetesObject,
  ListWatch,
  PatchStrategy,
  PolicyV1Api,
  setHeaderOptions,
  type V1ConfigMap,
  type V1Deployment,
  type V1Pod,
  type V1ReplicaSet,
  type V1StatefulSet,
  Watch,
} from '@kubernetes/client-node';
import * as x509 from '@peculiar/x509';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResourceType } from '../src/api/registry.ts';
import { DEFAULT_CONTROL_PLANE_OPTIONS } from '../src/controlplane/control-plane.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';

/** An object as an item of a typed list shows it: without apiVersion and kind. */
function asListItem<T extends { apiVersion?: string; kind?: string }>(obj: T): Omit<T, 'apiVersion' | 'kind'> {
  const { apiVersion: _apiVersion, kind: _kind, ...item } = obj;
  return item;
}

x509.cryptoProvider.set(webcrypto);

const COORDINATION = 'coordination.orch.io';
const CERTIFICATES = 'certificates.orch.io';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RFC3339_SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const STALE = 'the object has been modified; please apply your changes to the latest version and try again';
const CONTINUE_TTL_MS = 60_000;
const BOOKMARK_INTERVAL_MS = 100;

interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

interface StatusBody {
  kind: string;
  apiVersion: string;
  metadata: { continue?: string };
  status: string;
  message: string;
  reason: string;
  code: number;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    uid?: string;
    causes?: StatusCause[];
    retryAfterSeconds?: number;
  };
}

interface Failure {
  code: number;
  status: StatusBody;
  headers: Record<string, string>;
}

interface RawReply {
  status: number;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  text: string;
  body: any;
}

interface WatchEvent {
  type: string;
  object: any;
}

let cluster: TestCluster;
let kc: KubeConfig;
let core: CoreV1Api;
let apps: AppsV1Api;
let policy: PolicyV1Api;
let custom: CustomObjectsApi;
/** Added to the control plane's clock; tests that need time to pass move it forward. */
let clockSkewMs = 0;

beforeAll(async () => {
  cluster = await startTestCluster({
    now: () => new Date(Date.now() + clockSkewMs),
    continueTtlMs: CONTINUE_TTL_MS,
    featureGates: { ShardedListAndWatch: true },
    watch: {
      ...DEFAULT_CONTROL_PLANE_OPTIONS.watch,
      bookmarkIntervalMs: BOOKMARK_INTERVAL_MS,
      defaultTimeoutSeconds: 30,
    },
  });
  kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  core = kc.makeApiClient(CoreV1Api);
  apps = kc.makeApiClient(AppsV1Api);
  policy = kc.makeApiClient(PolicyV1Api);
  custom = kc.makeApiClient(CustomObjectsApi);
});

afterAll(async () => {
  await cluster?.stop();
});

// ---------------------------------------------------------------------------------------------
// Helpers

/** Runs a client-node call that must fail, and returns its code, parsed Status body and headers. */
async function failure(call: Promise<unknown>): Promise<Failure> {
  let result: unknown;
  try {
    result = await call;
  } catch (err) {
    if (err instanceof ApiException) {
      return { code: err.code, status: JSON.parse(err.body as string), headers: err.headers };
    }
    throw err;
  }
  throw new Error(`expected the request to fail, but it answered ${JSON.stringify(result)}`);
}

function expectStatus(status: StatusBody, code: number, reason: string, message: string | RegExp): void {
  expect(status).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason });
  if (typeof message === 'string') expect(status.message).toBe(message);
  else expect(status.message).toMatch(message);
}

/** One HTTPS request with the kubeconfig's credentials; the body is sent as given (string) or as JSON. */
async function raw(
  method: string,
  path: string,
  opts: { body?: unknown; contentType?: string; accept?: string } = {},
): Promise<RawReply> {
  const server = new URL(kc.getCurrentCluster()!.server);
  const headers: Record<string, string> = { Accept: opts.accept ?? 'application/json' };
  const payload =
    opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  if (payload !== undefined) headers['Content-Type'] = opts.contentType ?? 'application/json';
  const options: RequestOptions = { method, hostname: server.hostname, port: server.port, path, headers };
  await kc.applyToHTTPSOptions(options);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, text, body });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** A streaming GET whose newline-delimited JSON events are collected as they arrive. */
async function rawStream(
  path: string,
): Promise<{ status: number; events: WatchEvent[]; ended: Promise<void>; close(): void }> {
  const server = new URL(kc.getCurrentCluster()!.server);
  const options: RequestOptions = { method: 'GET', hostname: server.hostname, port: server.port, path };
  await kc.applyToHTTPSOptions(options);
  return new Promise((resolve, reject) => {
    const events: WatchEvent[] = [];
    const req = httpsRequest(options, (res) => {
      let buffer = '';
      const ended = new Promise<void>((done) => res.on('close', () => done()));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
          const line = buffer.slice(0, nl).trim();
          buffer = buffer.slice(nl + 1);
          if (line) events.push(JSON.parse(line));
        }
      });
      resolve({ status: res.statusCode ?? 0, events, ended, close: () => req.destroy() });
    });
    req.on('error', (err) => {
      if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err);
    });
    req.end();
  });
}

/** A watch through client-node's Watch class (which adds `watch=true`). */
async function startWatch(
  path: string,
  params: Record<string, string | number | boolean | undefined>,
): Promise<{ events: WatchEvent[]; ended: Promise<unknown>; stop(): void }> {
  const events: WatchEvent[] = [];
  let finish: (err: unknown) => void = () => {};
  const ended = new Promise<unknown>((resolve) => {
    finish = resolve;
  });
  const controller = await new Watch(kc).watch(
    path,
    params,
    (type, object) => events.push({ type, object }),
    (err) => finish(err),
  );
  return { events, ended, stop: () => controller.abort() };
}

/** Polls until `check` returns a truthy value. */
async function until<T>(check: () => T | Promise<T>, what: string, timeoutMs = 5000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

async function newNamespace(): Promise<string> {
  const ns = await core.createNamespace({ body: { metadata: { generateName: 'test-' } } });
  return ns.metadata!.name!;
}

async function exists(read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read();
    return true;
  } catch (err) {
    if (err instanceof ApiException && err.code === 404) return false;
    throw err;
  }
}

function rt(group: string, version: string, plural: string): ResourceType {
  const found = cluster.cp.registry.resource(group, version, plural);
  if (!found) throw new Error(`no resource ${group}/${version}/${plural}`);
  return found;
}

/** The resourceVersion of the whole store, as a list answers it: unchanged means nothing was written. */
async function storeRv(): Promise<number> {
  const list = await core.listNamespace();
  return Number(list.metadata!.resourceVersion);
}

function names(items: readonly KubernetesObject[]): string[] {
  return items.map((o) => o.metadata!.name!);
}

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const apply = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);

function podTemplate(app: string) {
  return {
    metadata: { labels: { app } },
    spec: {
      containers: [
        { name: 'main', image: 'registry.example/main:1' },
        { name: 'sidecar', image: 'registry.example/sidecar:1' },
      ],
    },
  };
}

function statefulSet(name: string, replicas = 1): V1StatefulSet {
  return {
    metadata: { name, labels: { app: name } },
    spec: { replicas, serviceName: name, selector: { matchLabels: { app: name } }, template: podTemplate(name) },
  };
}

function deployment(name: string, replicas = 1): V1Deployment {
  return {
    metadata: { name },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: podTemplate(name) },
  };
}

function lease(name: string, holder: string) {
  return {
    apiVersion: `${COORDINATION}/v1`,
    kind: 'Lease',
    metadata: { name },
    spec: { holderIdentity: holder, leaseDurationSeconds: 15 },
  };
}

/** A syntactically valid PKCS#10 request, as a `CERTIFICATE REQUEST` PEM block. */
async function csrPem(commonName: string): Promise<string> {
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: `CN=${commonName}`,
    keys,
    signingAlgorithm: algorithm,
  });
  return csr.toString('pem');
}

async function createCsr(name: string, signerName: string) {
  const request = Buffer.from(await csrPem(name)).toString('base64');
  return custom.createClusterCustomObject({
    group: CERTIFICATES,
    version: 'v1',
    plural: 'certificatesigningrequests',
    body: {
      apiVersion: `${CERTIFICATES}/v1`,
      kind: 'CertificateSigningRequest',
      metadata: { name },
      spec: { request, signerName, usages: ['digital signature', 'client auth'] },
    },
  });
}

/** 64-bit FNV-1a, written out here so the shard test does not lean on the server's own code. */
function fnv1a64(text: string): bigint {
  let hash = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(text, 'utf8')) hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return hash;
}

// ---------------------------------------------------------------------------------------------

describe('objects and metadata', () => {
  it('creates, gets, lists, replaces and deletes with server-set metadata', async () => {
    const ns = await newNamespace();
    const created = await core.createNamespacedConfigMapWithHttpInfo({
      namespace: ns,
      body: { metadata: { name: 'cfg', labels: { app: 'demo' } }, data: { greeting: 'hello' } },
    });
    expect(created.httpStatusCode).toBe(201);
    const cm = created.data;
    expect(cm.metadata!.uid).toMatch(UUID);
    expect(cm.metadata!.creationTimestamp).toBeInstanceOf(Date);
    expect(cm.metadata!.resourceVersion).toMatch(/^\d+$/);
    expect(cm.metadata!.namespace).toBe(ns);

    const got = await core.readNamespacedConfigMap({ name: 'cfg', namespace: ns });
    expect(got).toEqual(cm);
    const onWire = await raw('GET', `/api/v1/namespaces/${ns}/configmaps/cfg`);
    expect(onWire.status).toBe(200);
    expect(onWire.body.metadata.creationTimestamp).toMatch(RFC3339_SECONDS);

    const list = await core.listNamespacedConfigMap({ namespace: ns });
    expect(list.kind).toBe('ConfigMapList');
    // A typed list's items carry no apiVersion and kind (the list's kind names them), as the reference's.
    expect(list.items).toEqual([asListItem(cm)]);
    expect(Number(list.metadata!.resourceVersion)).toBeGreaterThanOrEqual(Number(cm.metadata!.resourceVersion));

    const replaced = await core.replaceNamespacedConfigMapWithHttpInfo({
      name: 'cfg',
      namespace: ns,
      body: { ...cm, data: { greeting: 'bonjour' } },
    });
    expect(replaced.httpStatusCode).toBe(200);
    expect(replaced.data.data).toEqual({ greeting: 'bonjour' });
    expect(replaced.data.metadata!.uid).toBe(cm.metadata!.uid);
    expect(replaced.data.metadata!.creationTimestamp).toEqual(cm.metadata!.creationTimestamp);
    expect(Number(replaced.data.metadata!.resourceVersion)).toBeGreaterThan(Number(cm.metadata!.resourceVersion));

    const deleted = await raw('DELETE', `/api/v1/namespaces/${ns}/configmaps/cfg`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Success',
      details: { name: 'cfg', kind: 'configmaps', uid: cm.metadata!.uid },
    });
    const gone = await failure(core.readNamespacedConfigMap({ name: 'cfg', namespace: ns }));
    expect(gone.code).toBe(404);
    expectStatus(gone.status, 404, 'NotFound', 'configmaps "cfg" not found');
  });

  it('hands out strictly increasing resourceVersions, one per write', async () => {
    const ns = await newNamespace();
    const seen: number[] = [];
    let cm = await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'rv' }, data: { n: '0' } },
    });
    seen.push(Number(cm.metadata!.resourceVersion));
    for (let i = 1; i <= 3; i++) {
      cm = await core.patchNamespacedConfigMap({ name: 'rv', namespace: ns, body: { data: { n: String(i) } } }, merge);
      seen.push(Number(cm.metadata!.resourceVersion));
    }
    const other = await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'rv2' } } });
    seen.push(Number(other.metadata!.resourceVersion));
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThan(seen[i - 1]);
    // A write that changes nothing is not a write.
    const same = await core.patchNamespacedConfigMap({ name: 'rv', namespace: ns, body: { data: { n: '3' } } }, merge);
    expect(same.metadata!.resourceVersion).toBe(cm.metadata!.resourceVersion);
  });

  it('names objects from generateName', async () => {
    const ns = await newNamespace();
    const a = await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { generateName: 'job-' } } });
    const b = await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { generateName: 'job-' } } });
    expect(a.metadata!.name).toMatch(/^job-[a-z0-9]{5}$/);
    expect(b.metadata!.name).toMatch(/^job-[a-z0-9]{5}$/);
    expect(a.metadata!.name).not.toBe(b.metadata!.name);
    expect(a.metadata!.generateName).toBe('job-');
    const read = await core.readNamespacedConfigMap({ name: a.metadata!.name!, namespace: ns });
    expect(read.metadata!.uid).toBe(a.metadata!.uid);
  });

  it('sets identity and bookkeeping on create itself, ignoring what the request says', async () => {
    const ns = await newNamespace();
    const given = {
      resourceVersion: '999999',
      selfLink: '/elsewhere',
      deletionTimestamp: '2020-01-01T00:00:00Z',
      deletionGracePeriodSeconds: 5,
    };
    const created = await raw('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'given', ...given }, data: { a: '1' } },
    });
    expect(created.status).toBe(201);
    const { metadata } = created.body;
    expect(metadata.resourceVersion).not.toBe(given.resourceVersion);
    for (const field of ['selfLink', 'deletionTimestamp', 'deletionGracePeriodSeconds']) {
      expect(metadata).not.toHaveProperty(field);
    }
    expect((await raw('GET', `/api/v1/namespaces/${ns}/configmaps/given`)).body).toEqual(created.body);
    // A cluster-scoped object keeps no namespace.
    const role = await raw('POST', '/apis/rbac.authorization.orch.io/v1/clusterroles', {
      body: { metadata: { name: `given-${ns}`, namespace: ns }, rules: [] },
    });
    expect(role.status).toBe(201);
    expect(role.body.metadata).not.toHaveProperty('namespace');
  });

  it('bumps generation only for changes outside metadata and status', async () => {
    const ns = await newNamespace();
    const sts = await apps.createNamespacedStatefulSet({ namespace: ns, body: statefulSet('web', 1) });
    expect(sts.metadata!.generation).toBe(1);

    const labelled = await apps.patchNamespacedStatefulSet(
      { name: 'web', namespace: ns, body: { metadata: { labels: { app: 'web', tier: 'front' } } } },
      merge,
    );
    expect(labelled.metadata!.generation).toBe(1);
    expect(Number(labelled.metadata!.resourceVersion)).toBeGreaterThan(Number(sts.metadata!.resourceVersion));

    const withStatus = await apps.replaceNamespacedStatefulSetStatus({
      name: 'web',
      namespace: ns,
      body: { ...labelled, status: { replicas: 1, readyReplicas: 1, observedGeneration: 1 } },
    });
    expect(withStatus.metadata!.generation).toBe(1);
    expect(withStatus.status).toMatchObject({ replicas: 1, readyReplicas: 1 });

    const scaled = await apps.replaceNamespacedStatefulSet({
      name: 'web',
      namespace: ns,
      body: { ...withStatus, spec: { ...withStatus.spec!, replicas: 3 } },
    });
    expect(scaled.metadata!.generation).toBe(2);
    expect(scaled.spec!.replicas).toBe(3);
  });

  it('ignores status on main writes and keeps the spec through /status', async () => {
    const ns = await newNamespace();
    const created = await policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: {
        metadata: { name: 'pdb' },
        spec: { minAvailable: 1, selector: { matchLabels: { app: 'x' } } },
        status: { currentHealthy: 9, desiredHealthy: 9, disruptionsAllowed: 9, expectedPods: 9 },
      },
    });
    // The 9s are dropped; the counts read back 0, as the reference writes them (no omitempty).
    expect(created.status).toEqual({ disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 });

    const status = {
      currentHealthy: 2,
      desiredHealthy: 1,
      disruptionsAllowed: 1,
      expectedPods: 2,
      observedGeneration: 1,
    };
    const viaStatus = await policy.replaceNamespacedPodDisruptionBudgetStatus({
      name: 'pdb',
      namespace: ns,
      body: {
        ...created,
        metadata: { ...created.metadata, labels: { sneaky: 'label' } },
        spec: { ...created.spec, minAvailable: 5 },
        status,
      },
    });
    expect(viaStatus.status).toMatchObject(status);
    expect(viaStatus.spec!.minAvailable).toBe(1);
    // As the reference's PodDisruptionBudget status strategy: the spec is kept, metadata changes are taken.
    expect(viaStatus.metadata!.labels).toEqual({ sneaky: 'label' });
    expect(viaStatus.metadata!.generation).toBe(1);
    expect(Number(viaStatus.metadata!.resourceVersion)).toBeGreaterThan(Number(created.metadata!.resourceVersion));

    const readStatus = await policy.readNamespacedPodDisruptionBudgetStatus({ name: 'pdb', namespace: ns });
    expect(readStatus.status).toMatchObject(status);

    const patched = await policy.patchNamespacedPodDisruptionBudgetStatus(
      { name: 'pdb', namespace: ns, body: { spec: { minAvailable: 7 }, status: { disruptionsAllowed: 0 } } },
      merge,
    );
    expect(patched.status!.disruptionsAllowed).toBe(0);
    expect(patched.status!.currentHealthy).toBe(2);
    expect(patched.spec!.minAvailable).toBe(1);

    const viaMain = await policy.replaceNamespacedPodDisruptionBudget({
      name: 'pdb',
      namespace: ns,
      body: { ...patched, spec: { ...patched.spec, minAvailable: 2 }, status: { currentHealthy: 0 } },
    });
    expect(viaMain.spec!.minAvailable).toBe(2);
    expect(viaMain.metadata!.generation).toBe(2);
    expect(viaMain.status).toEqual(patched.status);
  });

  it('keeps an object with finalizers, marked for deletion, until the finalizers are cleared', async () => {
    const ns = await newNamespace();
    const cm = await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'held', finalizers: ['test.orch.io/hold'] } },
    });
    const deleted = await raw('DELETE', `/api/v1/namespaces/${ns}/configmaps/held`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.kind).toBe('ConfigMap');
    expect(deleted.body.metadata.deletionTimestamp).toMatch(RFC3339_SECONDS);
    expect(deleted.body.metadata.deletionGracePeriodSeconds).toBe(0);

    const marked = await core.readNamespacedConfigMap({ name: 'held', namespace: ns });
    expect(marked.metadata!.deletionTimestamp).toBeInstanceOf(Date);
    expect(marked.metadata!.finalizers).toEqual(['test.orch.io/hold']);
    expect(marked.metadata!.uid).toBe(cm.metadata!.uid);
    // Deleting again does not move the deletion time.
    const again = await raw('DELETE', `/api/v1/namespaces/${ns}/configmaps/held`);
    expect(again.body.metadata.deletionTimestamp).toBe(deleted.body.metadata.deletionTimestamp);

    await core.patchNamespacedConfigMap(
      { name: 'held', namespace: ns, body: { metadata: { finalizers: null } } },
      merge,
    );
    expect(await exists(() => core.readNamespacedConfigMap({ name: 'held', namespace: ns }))).toBe(false);
  });

  it('gives pods bound to a node a grace period, and gracePeriodSeconds=0 removes them', async () => {
    const ns = await newNamespace();
    const spec = { containers: [{ name: 'c', image: 'registry.example/c:1' }] };
    await core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name: 'bound' }, spec: { ...spec, nodeName: 'node-1' } },
    });
    await core.createNamespacedPod({ namespace: ns, body: { metadata: { name: 'unbound' }, spec } });

    const before = Date.now();
    const marked = await raw('DELETE', `/api/v1/namespaces/${ns}/pods/bound`);
    expect(marked.status).toBe(200);
    expect(marked.body.metadata.deletionGracePeriodSeconds).toBe(30);
    const deadline = Date.parse(marked.body.metadata.deletionTimestamp);
    expect(deadline).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 29_000);
    expect(deadline).toBeLessThanOrEqual(Date.now() + 31_000);

    // The node agent keeps writing a terminating pod's status; that must not remove it.
    const pod = await core.readNamespacedPod({ name: 'bound', namespace: ns });
    expect(pod.metadata!.deletionTimestamp).toBeInstanceOf(Date);
    await core.patchNamespacedPodStatus(
      { name: 'bound', namespace: ns, body: { status: { phase: 'Running' } } },
      merge,
    );
    await core.patchNamespacedPod({ name: 'bound', namespace: ns, body: { metadata: { labels: { x: 'y' } } } }, merge);
    const still = await core.readNamespacedPod({ name: 'bound', namespace: ns });
    expect(still.status!.phase).toBe('Running');
    expect(still.metadata!.deletionGracePeriodSeconds).toBe(30);

    await core.deleteNamespacedPod({ name: 'bound', namespace: ns, gracePeriodSeconds: 0 });
    expect(await exists(() => core.readNamespacedPod({ name: 'bound', namespace: ns }))).toBe(false);

    await core.deleteNamespacedPod({ name: 'unbound', namespace: ns });
    expect(await exists(() => core.readNamespacedPod({ name: 'unbound', namespace: ns }))).toBe(false);
  });

  it('rejects a write from a stale resourceVersion with 409 Conflict and changes nothing', async () => {
    const ns = await newNamespace();
    const first = await apps.createNamespacedStatefulSet({ namespace: ns, body: statefulSet('x', 1) });
    const current = await apps.patchNamespacedStatefulSet(
      { name: 'x', namespace: ns, body: { spec: { replicas: 2 } } },
      merge,
    );
    const rvBefore = await storeRv();

    const stale = await failure(
      apps.replaceNamespacedStatefulSet({
        name: 'x',
        namespace: ns,
        body: { ...first, spec: { ...first.spec!, replicas: 5 } },
      }),
    );
    expect(stale.code).toBe(409);
    expectStatus(stale.status, 409, 'Conflict', `Operation cannot be fulfilled on statefulsets.apps "x": ${STALE}`);
    expect(stale.status.details).toMatchObject({ name: 'x', group: 'apps', kind: 'statefulsets' });

    const stalePatch = await failure(
      apps.patchNamespacedStatefulSet(
        {
          name: 'x',
          namespace: ns,
          body: { metadata: { resourceVersion: first.metadata!.resourceVersion }, spec: { replicas: 7 } },
        },
        merge,
      ),
    );
    expectStatus(
      stalePatch.status,
      409,
      'Conflict',
      `Operation cannot be fulfilled on statefulsets.apps "x": ${STALE}`,
    );

    expect(await apps.readNamespacedStatefulSet({ name: 'x', namespace: ns })).toEqual(current);
    expect(await storeRv()).toBe(rvBefore);

    // With the current resourceVersion the same replace goes through.
    const ok = await apps.replaceNamespacedStatefulSet({
      name: 'x',
      namespace: ns,
      body: { ...current, spec: { ...current.spec!, replicas: 5 } },
    });
    expect(ok.spec!.replicas).toBe(5);
  });
});

describe('patch', () => {
  it('applies JSON patches, merge patches and strategic merge patches', async () => {
    const ns = await newNamespace();
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'p' }, data: { a: '1', b: '2' } },
    });

    const jp = await core.patchNamespacedConfigMap(
      {
        name: 'p',
        namespace: ns,
        body: [
          { op: 'replace', path: '/data/a', value: '10' },
          { op: 'add', path: '/data/c', value: '3' },
        ],
      },
      jsonPatch,
    );
    expect(jp.data).toEqual({ a: '10', b: '2', c: '3' });

    const mp = await core.patchNamespacedConfigMap(
      { name: 'p', namespace: ns, body: { data: { b: null, d: '4' } } },
      merge,
    );
    expect(mp.data).toEqual({ a: '10', c: '3', d: '4' });

    const failedTest = await failure(
      core.patchNamespacedConfigMap(
        { name: 'p', namespace: ns, body: [{ op: 'test', path: '/data/a', value: 'nope' }] },
        jsonPatch,
      ),
    );
    expect([409, 422]).toContain(failedTest.code);

    await apps.createNamespacedStatefulSet({ namespace: ns, body: statefulSet('s') });
    const smp = await apps.patchNamespacedStatefulSet(
      {
        name: 's',
        namespace: ns,
        body: {
          spec: { template: { spec: { containers: [{ name: 'sidecar', image: 'registry.example/sidecar:2' }] } } },
        },
      },
      strategic,
    );
    expect(smp.spec!.template.spec!.containers.map((c) => [c.name, c.image])).toEqual([
      ['main', 'registry.example/main:1'],
      ['sidecar', 'registry.example/sidecar:2'],
    ]);
    expect(smp.metadata!.generation).toBe(2);

    // Directives are patch syntax, not unknown fields, even under Strict.
    const ordered = await raw('PATCH', `/apis/apps/v1/namespaces/${ns}/statefulsets/s?fieldValidation=Strict`, {
      contentType: PatchStrategy.StrategicMergePatch,
      body: {
        spec: {
          template: {
            spec: {
              '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'main' }],
              containers: [{ name: 'main', image: 'registry.example/main:2' }],
            },
          },
        },
      },
    });
    expect(ordered.status).toBe(200);
    expect(ordered.headers.warning).toBeUndefined();
    expect(
      ordered.body.spec.template.spec.containers.map((c: { name: string; image: string }) => [c.name, c.image]),
    ).toEqual([
      ['sidecar', 'registry.example/sidecar:2'],
      ['main', 'registry.example/main:2'],
    ]);

    // A merge patch replaces lists wholesale.
    const mpList = await apps.patchNamespacedStatefulSet(
      {
        name: 's',
        namespace: ns,
        body: { spec: { template: { spec: { containers: [{ name: 'only', image: 'registry.example/only:1' }] } } } },
      },
      merge,
    );
    expect(mpList.spec!.template.spec!.containers.map((c) => c.name)).toEqual(['only']);

    const missing = await failure(
      core.patchNamespacedConfigMap({ name: 'absent', namespace: ns, body: { data: { a: '1' } } }, merge),
    );
    expectStatus(missing.status, 404, 'NotFound', 'configmaps "absent" not found');
  });

  it('server-side applies with a fieldManager: creates (201), then updates (200)', async () => {
    const ns = await newNamespace();
    const first = await custom.patchNamespacedCustomObjectWithHttpInfo(
      {
        group: COORDINATION,
        version: 'v1',
        namespace: ns,
        plural: 'leases',
        name: 'applied',
        body: lease('applied', 'a'),
        fieldManager: 'tester',
      },
      apply,
    );
    expect(first.httpStatusCode).toBe(201);
    expect(first.data.metadata.uid).toMatch(UUID);
    expect(first.data.spec).toEqual({ holderIdentity: 'a', leaseDurationSeconds: 15 });

    const second = await custom.patchNamespacedCustomObjectWithHttpInfo(
      {
        group: COORDINATION,
        version: 'v1',
        namespace: ns,
        plural: 'leases',
        name: 'applied',
        body: { ...lease('applied', 'b'), spec: { holderIdentity: 'b' } },
        fieldManager: 'tester',
        force: true,
      },
      apply,
    );
    expect(second.httpStatusCode).toBe(200);
    expect(second.data.metadata.uid).toBe(first.data.metadata.uid);
    expect(second.data.spec.holderIdentity).toBe('b');
  });

  it('rejects apply without a fieldManager, and force on a non-apply patch, with 422', async () => {
    const ns = await newNamespace();
    const rvBefore = await storeRv();
    const noManager = await failure(
      custom.patchNamespacedCustomObject(
        { group: COORDINATION, version: 'v1', namespace: ns, plural: 'leases', name: 'l', body: lease('l', 'a') },
        apply,
      ),
    );
    expect(noManager.code).toBe(422);
    expectStatus(
      noManager.status,
      422,
      'Invalid',
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    );
    expect(noManager.status.details!.causes).toEqual([
      { reason: 'FieldValueRequired', field: 'fieldManager', message: 'Required value: is required for apply patch' },
    ]);
    expect(await storeRv()).toBe(rvBefore);
    const notCreated = await failure(
      custom.getNamespacedCustomObject({
        group: COORDINATION,
        version: 'v1',
        namespace: ns,
        plural: 'leases',
        name: 'l',
      }),
    );
    expectStatus(notCreated.status, 404, 'NotFound', `leases.${COORDINATION} "l" not found`);

    await custom.createNamespacedCustomObject({
      group: COORDINATION,
      version: 'v1',
      namespace: ns,
      plural: 'leases',
      body: lease('l', 'a'),
    });
    const forced = await failure(
      custom.patchNamespacedCustomObject(
        {
          group: COORDINATION,
          version: 'v1',
          namespace: ns,
          plural: 'leases',
          name: 'l',
          body: { spec: { holderIdentity: 'b' } },
          force: true,
        },
        merge,
      ),
    );
    expectStatus(
      forced.status,
      422,
      'Invalid',
      'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch',
    );
    expect(forced.status.details!.causes!.map((c) => c.field)).toEqual(['force']);
    const unchanged = await custom.getNamespacedCustomObject({
      group: COORDINATION,
      version: 'v1',
      namespace: ns,
      plural: 'leases',
      name: 'l',
    });
    expect(unchanged.spec.holderIdentity).toBe('a');
  });
});

describe('subresources', () => {
  it('serves /scale of StatefulSets, Deployments and ReplicaSets as a Scale', async () => {
    const ns = await newNamespace();
    const sts = await apps.createNamespacedStatefulSet({ namespace: ns, body: statefulSet('db', 2) });
    const scale = await apps.readNamespacedStatefulSetScale({ name: 'db', namespace: ns });
    expect(scale).toMatchObject({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: { name: 'db', namespace: ns, uid: sts.metadata!.uid, resourceVersion: sts.metadata!.resourceVersion },
      spec: { replicas: 2 },
      status: { replicas: 0, selector: 'app=db' },
    });
    const put = await apps.replaceNamespacedStatefulSetScale({
      name: 'db',
      namespace: ns,
      body: { ...scale, spec: { replicas: 4 } },
    });
    expect(put.kind).toBe('Scale');
    expect(put.spec!.replicas).toBe(4);
    const afterPut = await apps.readNamespacedStatefulSet({ name: 'db', namespace: ns });
    expect(afterPut.spec!.replicas).toBe(4);
    expect(afterPut.metadata!.generation).toBe(2);
    expect(put.metadata!.resourceVersion).toBe(afterPut.metadata!.resourceVersion);

    const staleScale = await failure(
      apps.replaceNamespacedStatefulSetScale({ name: 'db', namespace: ns, body: { ...scale, spec: { replicas: 9 } } }),
    );
    expectStatus(
      staleScale.status,
      409,
      'Conflict',
      `Operation cannot be fulfilled on statefulsets.apps "db": ${STALE}`,
    );

    await apps.createNamespacedDeployment({ namespace: ns, body: deployment('api', 1) });
    const dScale = await apps.readNamespacedDeploymentScale({ name: 'api', namespace: ns });
    expect(dScale).toMatchObject({ kind: 'Scale', spec: { replicas: 1 }, status: { selector: 'app=api' } });
    const dPut = await apps.replaceNamespacedDeploymentScale({
      name: 'api',
      namespace: ns,
      body: { ...dScale, spec: { replicas: 3 } },
    });
    expect(dPut).toMatchObject({ kind: 'Scale', spec: { replicas: 3 } });
    expect((await apps.readNamespacedDeployment({ name: 'api', namespace: ns })).spec!.replicas).toBe(3);

    const rs: V1ReplicaSet = {
      metadata: { name: 'rs' },
      spec: { replicas: 1, selector: { matchLabels: { app: 'rs' } }, template: podTemplate('rs') },
    };
    await apps.createNamespacedReplicaSet({ namespace: ns, body: rs });
    const rsPatch = await apps.patchNamespacedReplicaSetScale(
      { name: 'rs', namespace: ns, body: { spec: { replicas: 6 } } },
      merge,
    );
    expect(rsPatch).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 6 } });
    const rsScale = await apps.readNamespacedReplicaSetScale({ name: 'rs', namespace: ns });
    expect(rsScale.spec!.replicas).toBe(6);
    expect((await apps.readNamespacedReplicaSet({ name: 'rs', namespace: ns })).spec!.replicas).toBe(6);
  });

  it('approves a CertificateSigningRequest through /approval, which changes only the conditions', async () => {
    const csr = await createCsr('approve-me', 'example.com/approval-test');
    expect(csr.spec.request).toBe(csr.spec.request.trim());
    const path = `/apis/${CERTIFICATES}/v1/certificatesigningrequests/approve-me`;
    const condition = { type: 'Approved', status: 'True', reason: 'TestApproval', message: 'approved by the test' };
    const approved = await raw('PUT', `${path}/approval`, {
      body: {
        ...csr,
        spec: { ...csr.spec, signerName: 'example.com/other' },
        status: { conditions: [condition], certificate: 'bm90IGEgY2VydA==' },
      },
    });
    expect(approved.status).toBe(200);
    // Unset condition times default to now (spec §2.1).
    expect(approved.body.status.conditions).toEqual([
      {
        ...condition,
        lastUpdateTime: expect.stringMatching(RFC3339_SECONDS),
        lastTransitionTime: expect.stringMatching(RFC3339_SECONDS),
      },
    ]);
    const stamped = approved.body.status.conditions;
    expect(approved.body.status.certificate).toBeUndefined();
    expect(approved.body.spec.signerName).toBe('example.com/approval-test');
    expect(Number(approved.body.metadata.resourceVersion)).toBeGreaterThan(Number(csr.metadata.resourceVersion));

    const read = await custom.getClusterCustomObject({
      group: CERTIFICATES,
      version: 'v1',
      plural: 'certificatesigningrequests',
      name: 'approve-me',
    });
    expect(read.status.conditions).toEqual(stamped);
    expect(read.spec.signerName).toBe('example.com/approval-test');

    // Main writes leave status alone.
    const mainWrite = await raw('PUT', path, { body: { ...read, status: { conditions: [] } } });
    expect(mainWrite.status).toBe(200);
    expect(mainWrite.body.status.conditions).toEqual(stamped);
  });
});

describe('list', () => {
  it('filters by equality- and set-based label selectors', async () => {
    const ns = await newNamespace();
    const labels: Record<string, Record<string, string>> = {
      a: { env: 'prod', tier: 'web' },
      b: { env: 'dev', tier: 'web' },
      c: { env: 'prod' },
      d: {},
    };
    for (const [name, l] of Object.entries(labels)) {
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name, labels: l } } });
    }
    const select = async (labelSelector: string) =>
      names((await core.listNamespacedConfigMap({ namespace: ns, labelSelector })).items);
    expect(await select('env=prod')).toEqual(['a', 'c']);
    expect(await select('env==prod,tier=web')).toEqual(['a']);
    expect(await select('env!=prod')).toEqual(['b', 'd']);
    expect(await select('env in (prod,dev),tier')).toEqual(['a', 'b']);
    expect(await select('env notin (prod)')).toEqual(['b', 'd']);
    expect(await select('!tier')).toEqual(['c', 'd']);
    expect(await select('tier,env')).toEqual(['a', 'b']);

    const bad = await failure(core.listNamespacedConfigMap({ namespace: ns, labelSelector: 'env in (prod' }));
    expect(bad.code).toBe(400);
    expectStatus(bad.status, 400, 'BadRequest', /^unable to parse requirement|^found/);
  });

  it('filters by field selectors and rejects unsupported fields with 400', async () => {
    const ns = await newNamespace();
    const spec = { containers: [{ name: 'c', image: 'registry.example/c:1' }] };
    await core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name: 'p1' }, spec: { ...spec, nodeName: 'n1' } },
    });
    await core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name: 'p2' }, spec: { ...spec, nodeName: 'n2' } },
    });
    await core.createNamespacedPod({ namespace: ns, body: { metadata: { name: 'p3' }, spec } });
    const pods = async (fieldSelector: string) =>
      names((await core.listNamespacedPod({ namespace: ns, fieldSelector })).items);
    expect(await pods('spec.nodeName=n1')).toEqual(['p1']);
    expect(await pods('spec.nodeName!=n1')).toEqual(['p2', 'p3']);
    expect(await pods('spec.nodeName=')).toEqual(['p3']);
    expect(await pods('metadata.name=p2')).toEqual(['p2']);
    expect(await pods(`metadata.name!=p2,metadata.namespace=${ns}`)).toEqual(['p1', 'p3']);

    const signer = `example.com/fs-${ns}`;
    await createCsr(`${ns}-one`, signer);
    await createCsr(`${ns}-two`, `${signer}-other`);
    const csrs = await custom.listClusterCustomObject({
      group: CERTIFICATES,
      version: 'v1',
      plural: 'certificatesigningrequests',
      fieldSelector: `spec.signerName=${signer}`,
    });
    expect(names(csrs.items)).toEqual([`${ns}-one`]);

    const unsupported = await failure(
      core.listNamespacedConfigMap({ namespace: ns, fieldSelector: 'spec.nodeName=n1' }),
    );
    expect(unsupported.code).toBe(400);
    // A kind without field selectors of its own answers with the reference's generic message.
    expectStatus(
      unsupported.status,
      400,
      'BadRequest',
      '"spec.nodeName" is not a known field selector: only "metadata.name", "metadata.namespace"',
    );
    const malformed = await failure(core.listNamespacedPod({ namespace: ns, fieldSelector: 'spec.nodeName' }));
    expectStatus(malformed.status, 400, 'BadRequest', /invalid selector/);
  });

  it('pages with limit and continue from the first call’s snapshot, across concurrent writes', async () => {
    const ns = await newNamespace();
    for (const name of ['c1', 'c2', 'c3', 'c4', 'c5']) {
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name }, data: { v: 'old' } } });
    }
    const page1 = await core.listNamespacedConfigMap({ namespace: ns, limit: 2 });
    expect(names(page1.items)).toEqual(['c1', 'c2']);
    expect(page1.metadata!._continue).toBeTruthy();
    expect(page1.metadata!.remainingItemCount).toBe(3);
    const listRv = page1.metadata!.resourceVersion;

    await core.deleteNamespacedConfigMap({ name: 'c4', namespace: ns });
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'c6' } } });
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'c0' } } });
    await core.patchNamespacedConfigMap({ name: 'c3', namespace: ns, body: { data: { v: 'new' } } }, merge);

    const page2 = await core.listNamespacedConfigMap({ namespace: ns, limit: 2, _continue: page1.metadata!._continue });
    expect(names(page2.items)).toEqual(['c3', 'c4']);
    expect(page2.items[0].data).toEqual({ v: 'old' });
    expect(page2.metadata!.resourceVersion).toBe(listRv);
    expect(page2.metadata!._continue).toBeTruthy();

    const page3 = await core.listNamespacedConfigMap({ namespace: ns, limit: 2, _continue: page2.metadata!._continue });
    expect(names(page3.items)).toEqual(['c5']);
    expect(page3.metadata!._continue).toBeFalsy();
    expect(page3.metadata!.resourceVersion).toBe(listRv);

    const fresh = await core.listNamespacedConfigMap({ namespace: ns });
    expect(names(fresh.items)).toEqual(['c0', 'c1', 'c2', 'c3', 'c5', 'c6']);
  });

  it('answers an expired continue token with 410 Expired and a fresh token that works', async () => {
    const ns = await newNamespace();
    for (const name of ['e1', 'e2', 'e3', 'e4']) {
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name } } });
    }
    const page1 = await core.listNamespacedConfigMap({ namespace: ns, limit: 2 });
    expect(names(page1.items)).toEqual(['e1', 'e2']);
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'e5' } } });
    clockSkewMs += 2 * CONTINUE_TTL_MS;
    try {
      const expired = await failure(
        core.listNamespacedConfigMap({ namespace: ns, limit: 2, _continue: page1.metadata!._continue }),
      );
      expect(expired.code).toBe(410);
      expectStatus(
        expired.status,
        410,
        'Expired',
        /^The provided continue parameter is too old to display a consistent list result\./,
      );
      const token = expired.status.metadata.continue;
      expect(token).toBeTruthy();
      expect(token).not.toBe(page1.metadata!._continue);

      // The fresh token continues from the next key on the latest state (so e5 shows up).
      const next = await core.listNamespacedConfigMap({ namespace: ns, limit: 2, _continue: token });
      expect(names(next.items)).toEqual(['e3', 'e4']);
      const last = await core.listNamespacedConfigMap({ namespace: ns, limit: 2, _continue: next.metadata!._continue });
      expect(names(last.items)).toEqual(['e5']);
      expect(last.metadata!._continue).toBeFalsy();
    } finally {
      clockSkewMs = 0;
    }
  });

  it('serves resourceVersion and resourceVersionMatch as the reference does', async () => {
    const ns = await newNamespace();
    const v1 = await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'x' }, data: { v: '1' } },
    });
    const v2 = await core.patchNamespacedConfigMap({ name: 'x', namespace: ns, body: { data: { v: '2' } } }, merge);
    const y = await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'y' } } });
    const rv1 = v1.metadata!.resourceVersion!;
    const rv2 = v2.metadata!.resourceVersion!;
    const rvY = Number(y.metadata!.resourceVersion);

    const latest = await core.listNamespacedConfigMap({ namespace: ns });
    expect(latest.items).toEqual([v2, y].map(asListItem));
    expect(Number(latest.metadata!.resourceVersion)).toBeGreaterThanOrEqual(rvY);

    const any = await core.listNamespacedConfigMap({ namespace: ns, resourceVersion: '0' });
    expect(names(any.items)).toEqual(['x', 'y']);

    const notOlder = await core.listNamespacedConfigMap({
      namespace: ns,
      resourceVersion: rv1,
      resourceVersionMatch: 'NotOlderThan',
    });
    expect(notOlder.items).toEqual([v2, y].map(asListItem));
    expect(Number(notOlder.metadata!.resourceVersion)).toBeGreaterThanOrEqual(rvY);

    const exact1 = await core.listNamespacedConfigMap({
      namespace: ns,
      resourceVersion: rv1,
      resourceVersionMatch: 'Exact',
    });
    expect(exact1.items).toEqual([v1].map(asListItem));
    expect(exact1.metadata!.resourceVersion).toBe(rv1);
    const exact2 = await core.listNamespacedConfigMap({
      namespace: ns,
      resourceVersion: rv2,
      resourceVersionMatch: 'Exact',
    });
    expect(exact2.items).toEqual([v2].map(asListItem));

    const current = Number(latest.metadata!.resourceVersion);
    const tooLarge = String(current + 1000);
    for (const resourceVersionMatch of ['NotOlderThan', 'Exact']) {
      const future = await failure(
        core.listNamespacedConfigMap({ namespace: ns, resourceVersion: tooLarge, resourceVersionMatch }),
      );
      expect(future.code).toBe(504);
      expectStatus(
        future.status,
        504,
        'Timeout',
        new RegExp(`^Too large resource version: ${tooLarge}, current: \\d+$`),
      );
      expect(future.status.details!.causes![0].reason).toBe('ResourceVersionTooLarge');
    }

    const noRv = await failure(core.listNamespacedConfigMap({ namespace: ns, resourceVersionMatch: 'NotOlderThan' }));
    expect(noRv.code).toBe(422);
    expectStatus(
      noRv.status,
      422,
      'Invalid',
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
    );
    expect(noRv.status.details).toMatchObject({ group: 'meta.k8s.io', kind: 'ListOptions' });
    expect(noRv.status.details!.causes!.map((c) => [c.reason, c.field])).toEqual([
      ['FieldValueForbidden', 'resourceVersionMatch'],
    ]);

    await cluster.cp.faults.compact();
    const old = await failure(
      core.listNamespacedConfigMap({ namespace: ns, resourceVersion: rv1, resourceVersionMatch: 'Exact' }),
    );
    expect(old.code).toBe(410);
    expectStatus(old.status, 410, 'Expired', new RegExp(`^too old resource version: ${rv1} \\(\\d+\\)$`));
    // The latest state is still served after the compaction.
    const afterCompaction = await core.listNamespacedConfigMap({ namespace: ns, resourceVersion: rv1 });
    expect(afterCompaction.items).toEqual([v2, y].map(asListItem));
  });

  it('partitions objects with complementary shardSelector ranges and rejects malformed ones with 422', async () => {
    const ns = await newNamespace();
    const uids = new Map<string, string>();
    for (let i = 0; i < 16; i++) {
      const cm = await core.createNamespacedConfigMap({
        namespace: ns,
        body: { metadata: { name: `s${String(i).padStart(2, '0')}` } },
      });
      uids.set(cm.metadata!.name!, cm.metadata!.uid!);
    }
    const low = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')";
    const high = "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')";
    const lowNames = names((await core.listNamespacedConfigMap({ namespace: ns, shardSelector: low })).items);
    const highNames = names((await core.listNamespacedConfigMap({ namespace: ns, shardSelector: high })).items);
    const expectedLow = [...uids].filter(([, uid]) => fnv1a64(uid) < 0x8000000000000000n).map(([n]) => n);
    expect(lowNames).toEqual(expectedLow);
    expect([...lowNames, ...highNames].sort()).toEqual([...uids.keys()]);
    expect(lowNames.filter((n) => highNames.includes(n))).toEqual([]);
    const both = names(
      (await core.listNamespacedConfigMap({ namespace: ns, shardSelector: `${low} || ${high}` })).items,
    );
    expect(both).toEqual([...uids.keys()]);

    const bad = "shardRange(object.metadata.uid, '0x0')";
    const malformed = await failure(core.listNamespacedConfigMap({ namespace: ns, shardSelector: bad }));
    expect(malformed.code).toBe(422);
    expectStatus(
      malformed.status,
      422,
      'Invalid',
      new RegExp(
        `^ListOptions\\.meta\\.k8s\\.io "" is invalid: shardSelector: Invalid value: ${escapeRegExp(JSON.stringify(bad))}: `,
      ),
    );
    expect(malformed.status.details!.causes!.map((c) => c.field)).toEqual(['shardSelector']);
  });
});

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('watch', () => {
  it('streams ADDED, MODIFIED and DELETED through ?watch=true (client-node Watch), one namespace only', async () => {
    const ns = await newNamespace();
    const elsewhere = await newNamespace();
    const start = await core.listNamespacedConfigMap({ namespace: ns });
    const w = await startWatch(`/api/v1/namespaces/${ns}/configmaps`, {
      resourceVersion: start.metadata!.resourceVersion,
    });
    try {
      await core.createNamespacedConfigMap({ namespace: elsewhere, body: { metadata: { name: 'a' } } });
      const a = await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'a' } } });
      const a2 = await core.patchNamespacedConfigMap({ name: 'a', namespace: ns, body: { data: { k: 'v' } } }, merge);
      await core.deleteNamespacedConfigMap({ name: 'a', namespace: ns });
      await core.deleteNamespacedConfigMap({ name: 'a', namespace: elsewhere });
      await until(() => w.events.length >= 3, 'three events');
      await sleep(50);
      expect(w.events.map((e) => [e.type, e.object.metadata.namespace, e.object.metadata.name])).toEqual([
        ['ADDED', ns, 'a'],
        ['MODIFIED', ns, 'a'],
        ['DELETED', ns, 'a'],
      ]);
      expect(w.events[0].object.metadata.resourceVersion).toBe(a.metadata!.resourceVersion);
      expect(w.events[1].object.metadata.resourceVersion).toBe(a2.metadata!.resourceVersion);
      expect(Number(w.events[2].object.metadata.resourceVersion)).toBeGreaterThan(Number(a2.metadata!.resourceVersion));
      expect(w.events[1].object.data).toEqual({ k: 'v' });
    } finally {
      w.stop();
    }
  });

  it('streams through the /watch/ path form, namespaced and across namespaces', async () => {
    const ns1 = await newNamespace();
    const ns2 = await newNamespace();
    const rv = (await core.listNamespacedConfigMap({ namespace: ns1 })).metadata!.resourceVersion;
    const one = await rawStream(`/api/v1/watch/namespaces/${ns1}/configmaps?resourceVersion=${rv}`);
    const all = await rawStream(`/apis/${COORDINATION}/v1/watch/leases?resourceVersion=${rv}`);
    try {
      expect(one.status).toBe(200);
      expect(all.status).toBe(200);
      await core.createNamespacedConfigMap({ namespace: ns1, body: { metadata: { name: 'mine' } } });
      await core.createNamespacedConfigMap({ namespace: ns2, body: { metadata: { name: 'other' } } });
      for (const ns of [ns1, ns2]) {
        await custom.createNamespacedCustomObject({
          group: COORDINATION,
          version: 'v1',
          namespace: ns,
          plural: 'leases',
          body: lease(`lease-${ns}`, 'h'),
        });
      }
      await until(() => one.events.length >= 1 && all.events.length >= 2, 'path-form watch events');
      await sleep(50);
      expect(one.events.map((e) => [e.type, e.object.metadata.namespace, e.object.metadata.name])).toEqual([
        ['ADDED', ns1, 'mine'],
      ]);
      expect(all.events.map((e) => [e.type, e.object.kind, e.object.metadata.namespace])).toEqual([
        ['ADDED', 'Lease', ns1],
        ['ADDED', 'Lease', ns2],
      ]);
    } finally {
      one.close();
      all.close();
    }
  });

  it('resumes from the last resourceVersion after a dropped watch without missing events', async () => {
    const ns = await newNamespace();
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const start = (await core.listNamespacedConfigMap({ namespace: ns })).metadata!.resourceVersion;
    const first = await startWatch(path, { resourceVersion: start });
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'a' } } });
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'b' } } });
    await until(() => first.events.length >= 2, 'events before the drop');
    expect(cluster.cp.faults.dropWatches()).toBeGreaterThanOrEqual(1);
    expect(await first.ended).toBeNull();

    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'c' } } });
    await core.patchNamespacedConfigMap({ name: 'a', namespace: ns, body: { data: { k: '1' } } }, merge);
    await core.deleteNamespacedConfigMap({ name: 'b', namespace: ns });

    const last = first.events[first.events.length - 1].object.metadata.resourceVersion;
    const second = await startWatch(path, { resourceVersion: last });
    try {
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'd' } } });
      await until(() => second.events.length >= 4, 'events after resuming');
      const all = [...first.events, ...second.events];
      expect(all.map((e) => [e.type, e.object.metadata.name])).toEqual([
        ['ADDED', 'a'],
        ['ADDED', 'b'],
        ['ADDED', 'c'],
        ['MODIFIED', 'a'],
        ['DELETED', 'b'],
        ['ADDED', 'd'],
      ]);
      const rvs = all.map((e) => Number(e.object.metadata.resourceVersion));
      for (let i = 1; i < rvs.length; i++) expect(rvs[i]).toBeGreaterThan(rvs[i - 1]);
    } finally {
      second.stop();
    }
  });

  it('answers a watch from a compacted resourceVersion with a 410 Expired ERROR event', async () => {
    const ns = await newNamespace();
    const cm = await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'old' } } });
    await core.patchNamespacedConfigMap({ name: 'old', namespace: ns, body: { data: { a: 'b' } } }, merge);
    await cluster.cp.faults.compact();
    const w = await startWatch(`/api/v1/namespaces/${ns}/configmaps`, {
      resourceVersion: cm.metadata!.resourceVersion,
    });
    expect(await w.ended).toBeNull();
    expect(w.events).toHaveLength(1);
    expect(w.events[0].type).toBe('ERROR');
    expectStatus(w.events[0].object, 410, 'Expired', /^too old resource version: \d+ \(\d+\)$/);
  });

  it('sends bookmarks only when allowWatchBookmarks is set', async () => {
    const ns = await newNamespace();
    const rv = (await core.listNamespacedConfigMap({ namespace: ns })).metadata!.resourceVersion;
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const plain = await startWatch(path, { resourceVersion: rv });
    const withBookmarks = await startWatch(path, { resourceVersion: rv, allowWatchBookmarks: true });
    try {
      await until(() => withBookmarks.events.some((e) => e.type === 'BOOKMARK'), 'a bookmark');
      const bookmark = withBookmarks.events.find((e) => e.type === 'BOOKMARK')!;
      expect(bookmark.object).toMatchObject({ kind: 'ConfigMap', apiVersion: 'v1' });
      expect(Number(bookmark.object.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(rv));

      const cm = await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'after' } } });
      await until(
        () =>
          withBookmarks.events.some(
            (e) =>
              e.type === 'BOOKMARK' &&
              Number(e.object.metadata.resourceVersion) >= Number(cm.metadata!.resourceVersion),
          ),
        'a bookmark past the write',
      );
      await sleep(3 * BOOKMARK_INTERVAL_MS);
      expect(plain.events.map((e) => e.type)).toEqual(['ADDED']);
    } finally {
      plain.stop();
      withBookmarks.stop();
    }
  });

  it('serves watch-list: initial ADDED events, the initial-events-end bookmark, then live events', async () => {
    const ns = await newNamespace();
    for (const name of ['w1', 'w2', 'w3']) {
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name } } });
    }
    const listed = await core.listNamespacedConfigMap({ namespace: ns });
    const w = await startWatch(`/api/v1/namespaces/${ns}/configmaps`, {
      sendInitialEvents: true,
      resourceVersionMatch: 'NotOlderThan',
      allowWatchBookmarks: true,
    });
    try {
      await until(() => w.events.length >= 4, 'initial events and the bookmark');
      expect(w.events.slice(0, 3).map((e) => [e.type, e.object.metadata.name])).toEqual([
        ['ADDED', 'w1'],
        ['ADDED', 'w2'],
        ['ADDED', 'w3'],
      ]);
      const end = w.events[3];
      expect(end.type).toBe('BOOKMARK');
      expect(end.object.metadata.annotations).toEqual({ 'orch.io/initial-events-end': 'true' });
      expect(Number(end.object.metadata.resourceVersion)).toBeGreaterThanOrEqual(
        Number(listed.metadata!.resourceVersion),
      );

      const live = await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'w4' } } });
      await until(() => w.events.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'w4'), 'the live event');
      const after = w.events.slice(4).filter((e) => e.type !== 'BOOKMARK');
      expect(after.map((e) => [e.type, e.object.metadata.name])).toEqual([['ADDED', 'w4']]);
      expect(Number(live.metadata!.resourceVersion)).toBeGreaterThan(Number(end.object.metadata.resourceVersion));
      // Later (periodic) bookmarks never carry the annotation.
      for (const e of w.events.slice(4)) expect(e.object.metadata.annotations).toBeUndefined();
    } finally {
      w.stop();
    }
  });

  it('rejects sendInitialEvents without resourceVersionMatch=NotOlderThan with 422', async () => {
    const ns = await newNamespace();
    for (const query of [
      'sendInitialEvents=true',
      'sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=1',
    ]) {
      const reply = await raw('GET', `/api/v1/namespaces/${ns}/configmaps?watch=true&${query}`);
      expect(reply.status).toBe(422);
      expectStatus(
        reply.body,
        422,
        'Invalid',
        /^ListOptions\.meta\.k8s\.io "" is invalid: .*resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan/,
      );
      expect(reply.body.details.causes.map((c: StatusCause) => c.field)).toContain('resourceVersionMatch');
    }
  });

  it('ends the stream after timeoutSeconds', async () => {
    const ns = await newNamespace();
    const started = Date.now();
    const w = await startWatch(`/api/v1/namespaces/${ns}/configmaps`, { timeoutSeconds: 1 });
    expect(await w.ended).toBeNull();
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(elapsed).toBeLessThan(5000);
  });

  it('keeps a watch with timeoutSeconds=0 open for the default timeout, as the reference', async () => {
    const ns = await newNamespace();
    const w = await startWatch(`/api/v1/namespaces/${ns}/configmaps`, { timeoutSeconds: 0 });
    const endedEarly = await Promise.race([w.ended.then(() => true), sleep(1_500).then(() => false)]);
    w.stop();
    expect(endedEarly).toBe(false);
  });

  it('sends DELETED when an object stops matching a label-filtered watch, ADDED when it starts', async () => {
    const ns = await newNamespace();
    const rv = (await core.listNamespacedConfigMap({ namespace: ns })).metadata!.resourceVersion;
    const w = await startWatch(`/api/v1/namespaces/${ns}/configmaps`, {
      resourceVersion: rv,
      labelSelector: 'tier=web',
    });
    try {
      await core.createNamespacedConfigMap({
        namespace: ns,
        body: { metadata: { name: 'm', labels: { tier: 'web' } } },
      });
      await core.createNamespacedConfigMap({
        namespace: ns,
        body: { metadata: { name: 'n', labels: { tier: 'db' } } },
      });
      const moved = await core.patchNamespacedConfigMap(
        { name: 'm', namespace: ns, body: { metadata: { labels: { tier: 'db' } } } },
        merge,
      );
      await core.patchNamespacedConfigMap(
        { name: 'n', namespace: ns, body: { metadata: { labels: { tier: 'web' } } } },
        merge,
      );
      await core.patchNamespacedConfigMap({ name: 'n', namespace: ns, body: { data: { k: 'v' } } }, merge);
      await until(() => w.events.length >= 4, 'selection events');
      await sleep(50);
      expect(w.events.map((e) => [e.type, e.object.metadata.name])).toEqual([
        ['ADDED', 'm'],
        ['DELETED', 'm'],
        ['ADDED', 'n'],
        ['MODIFIED', 'n'],
      ]);
      expect(w.events[1].object.metadata.resourceVersion).toBe(moved.metadata!.resourceVersion);
    } finally {
      w.stop();
    }
  });

  it('keeps a client-node ListWatch informer correct across a dropped watch and a compaction', async () => {
    const ns = await newNamespace();
    const informer = new ListWatch<V1ConfigMap>(
      `/api/v1/namespaces/${ns}/configmaps`,
      new Watch(kc),
      () => core.listNamespacedConfigMap({ namespace: ns }),
      false,
      undefined,
      undefined,
      { delayFn: () => sleep(10) },
    );
    const errors: unknown[] = [];
    informer.on('error', (err) => errors.push(err));
    await informer.start();
    try {
      const cached = () =>
        informer
          .list(ns)
          .map((o) => o.metadata!.name!)
          .sort();
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'i1' } } });
      await until(() => cached().join() === 'i1', 'the first object in the cache');

      cluster.cp.faults.dropWatches();
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'i2' } } });
      await until(() => cached().join() === 'i1,i2', 'the object written while disconnected');

      await cluster.cp.faults.compact();
      cluster.cp.faults.dropWatches();
      await core.deleteNamespacedConfigMap({ name: 'i1', namespace: ns });
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'i3' } } });
      await until(() => cached().join() === 'i2,i3', 'the cache after a relist', 8000);
      expect(errors).toEqual([]);
    } finally {
      await informer.stop();
    }
  });
});

describe('write options', () => {
  it('dryRun=All validates and answers but persists nothing; an unknown dryRun value is rejected', async () => {
    const ns = await newNamespace();
    const existing = await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'keep' }, data: { a: '1' } },
    });
    const rvBefore = await storeRv();

    const created = await core.createNamespacedConfigMapWithHttpInfo({
      namespace: ns,
      body: { metadata: { name: 'dry' } },
      dryRun: 'All',
    });
    expect(created.httpStatusCode).toBe(201);
    expect(created.data.metadata!.name).toBe('dry');
    expect(created.data.metadata!.uid).toMatch(UUID);
    expect(await exists(() => core.readNamespacedConfigMap({ name: 'dry', namespace: ns }))).toBe(false);

    const patched = await core.patchNamespacedConfigMap(
      { name: 'keep', namespace: ns, body: { data: { a: '2' } }, dryRun: 'All' },
      merge,
    );
    expect(patched.data).toEqual({ a: '2' });

    const deleted = await raw('DELETE', `/api/v1/namespaces/${ns}/configmaps/keep?dryRun=All`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'keep' } });

    const collection = await raw('DELETE', `/api/v1/namespaces/${ns}/configmaps?dryRun=All`);
    expect(collection.status).toBe(200);

    expect(await core.readNamespacedConfigMap({ name: 'keep', namespace: ns })).toEqual(existing);
    expect(await storeRv()).toBe(rvBefore);

    const bad = await failure(
      core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'foo' } }, dryRun: 'Foo' }),
    );
    expect(bad.code).toBe(422);
    expectStatus(
      bad.status,
      422,
      'Invalid',
      'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Foo"]: supported values: "All"',
    );
    expect(bad.status.details!.causes).toEqual([
      {
        reason: 'FieldValueNotSupported',
        field: 'dryRun',
        message: 'Unsupported value: ["Foo"]: supported values: "All"',
      },
    ]);
    const badDelete = await failure(core.deleteNamespacedConfigMap({ name: 'keep', namespace: ns, dryRun: 'Foo' }));
    expectStatus(
      badDelete.status,
      422,
      'Invalid',
      'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Foo"]: supported values: "All"',
    );
    const badPatch = await failure(
      core.patchNamespacedConfigMap({ name: 'keep', namespace: ns, body: { data: { a: '3' } }, dryRun: 'Foo' }, merge),
    );
    expectStatus(badPatch.status, 422, 'Invalid', /^PatchOptions\.meta\.k8s\.io "" is invalid: dryRun: /);
    expect(await exists(() => core.readNamespacedConfigMap({ name: 'foo', namespace: ns }))).toBe(false);
    expect(await core.readNamespacedConfigMap({ name: 'keep', namespace: ns })).toEqual(existing);
    expect(await storeRv()).toBe(rvBefore);
  });

  it('fieldValidation: Ignore drops silently, Warn sends one Warning per field, Strict fails listing all', async () => {
    const ns = await newNamespace();
    const body = (name: string) =>
      `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"},"data":{"k":"first","k":"last"},"bogus":true}`;
    const path = `/api/v1/namespaces/${ns}/configmaps`;

    const ignore = await raw('POST', `${path}?fieldValidation=Ignore`, { body: body('ignore') });
    expect(ignore.status).toBe(201);
    expect(ignore.headers.warning).toBeUndefined();
    expect(ignore.body.data).toEqual({ k: 'last' });
    expect(ignore.body.bogus).toBeUndefined();

    const warned: string[][] = [];
    for (const query of ['?fieldValidation=Warn', '']) {
      const warn = await raw('POST', `${path}${query}`, { body: body(`warn${query ? '' : '-default'}`) });
      expect(warn.status).toBe(201);
      expect(warn.body.data).toEqual({ k: 'last' });
      const warnings: string[] = [];
      for (let i = 0; i < warn.rawHeaders.length; i += 2) {
        if (warn.rawHeaders[i].toLowerCase() === 'warning') warnings.push(warn.rawHeaders[i + 1]);
      }
      warned.push(warnings.sort());
    }
    const expected = ['299 - "duplicate field \\"data.k\\""', '299 - "unknown field \\"bogus\\""'];
    expect(warned).toEqual([expected, expected]);

    const rvBefore = await storeRv();
    const strict = await raw('POST', `${path}?fieldValidation=Strict`, { body: body('strict') });
    expect(strict.status).toBe(400);
    expectStatus(
      strict.body,
      400,
      'BadRequest',
      /^ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: /,
    );
    expect(strict.body.message).toContain('unknown field "bogus"');
    expect(strict.body.message).toContain('duplicate field "data.k"');
    expect(await exists(() => core.readNamespacedConfigMap({ name: 'strict', namespace: ns }))).toBe(false);
    expect(await storeRv()).toBe(rvBefore);

    const clean = await raw('POST', `${path}?fieldValidation=Strict`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'clean' }, data: { k: 'v' } },
    });
    expect(clean.status).toBe(201);
    expect(clean.headers.warning).toBeUndefined();

    const unsupported = await raw('POST', `${path}?fieldValidation=Loose`, { body: body('loose') });
    expect(unsupported.status).toBe(422);
    expectStatus(unsupported.body, 422, 'Invalid', /fieldValidation: Unsupported value: "Loose"/);
  });

  it('rejects a fieldManager longer than 128 characters with 422', async () => {
    const ns = await newNamespace();
    const rvBefore = await storeRv();
    const tooLong = await failure(
      core.createNamespacedConfigMap({
        namespace: ns,
        body: { metadata: { name: 'fm' } },
        fieldManager: 'm'.repeat(129),
      }),
    );
    expect(tooLong.code).toBe(422);
    expectStatus(
      tooLong.status,
      422,
      'Invalid',
      /^CreateOptions\.meta\.k8s\.io "" is invalid: fieldManager: Too long: /,
    );
    expect(tooLong.status.details!.causes!.map((c) => [c.reason, c.field])).toEqual([
      ['FieldValueTooLong', 'fieldManager'],
    ]);
    expect(await storeRv()).toBe(rvBefore);
    const ok = await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'fm' } },
      fieldManager: 'm'.repeat(128),
    });
    expect(ok.metadata!.name).toBe('fm');
  });

  it('pretty-prints with pretty=true', async () => {
    const ns = await newNamespace();
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'pp' }, data: { a: 'b' } } });
    const compact = await raw('GET', `/api/v1/namespaces/${ns}/configmaps/pp`);
    const pretty = await raw('GET', `/api/v1/namespaces/${ns}/configmaps/pp?pretty=true`);
    expect(compact.text).not.toContain('\n');
    expect(pretty.text).toMatch(/^\{\n {2}"/);
    expect(pretty.body).toEqual(compact.body);
    const prettyList = await raw('GET', `/api/v1/namespaces/${ns}/configmaps?pretty=true`);
    expect(prettyList.text).toMatch(/^\{\n {2}"/);
    const prettyWrite = await raw('PATCH', `/api/v1/namespaces/${ns}/configmaps/pp?pretty=true`, {
      body: { data: { a: 'c' } },
      contentType: 'application/merge-patch+json',
    });
    expect(prettyWrite.status).toBe(200);
    expect(prettyWrite.text).toMatch(/^\{\n {2}"/);
  });
});

describe('delete', () => {
  /** A Deployment owning a ReplicaSet owning two Pods, each link with blockOwnerDeletion. */
  async function family(ns: string, holdFirstPod = false) {
    const d = await apps.createNamespacedDeployment({ namespace: ns, body: deployment('d') });
    const rs = await apps.createNamespacedReplicaSet({
      namespace: ns,
      body: {
        metadata: {
          name: 'd-rs',
          ownerReferences: [
            {
              apiVersion: 'apps/v1',
              kind: 'Deployment',
              name: 'd',
              uid: d.metadata!.uid!,
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
        spec: { replicas: 2, selector: { matchLabels: { app: 'd' } }, template: podTemplate('d') },
      },
    });
    const pods: V1Pod[] = [];
    for (const name of ['d-rs-1', 'd-rs-2']) {
      pods.push(
        await core.createNamespacedPod({
          namespace: ns,
          body: {
            metadata: {
              name,
              labels: { app: 'd' },
              finalizers: holdFirstPod && name === 'd-rs-1' ? ['test.orch.io/hold'] : undefined,
              ownerReferences: [
                {
                  apiVersion: 'apps/v1',
                  kind: 'ReplicaSet',
                  name: 'd-rs',
                  uid: rs.metadata!.uid!,
                  controller: true,
                  blockOwnerDeletion: true,
                },
              ],
            },
            spec: podTemplate('d').spec,
          },
        }),
      );
    }
    return { d, rs, pods };
  }

  const readDeployment = (ns: string) => () => apps.readNamespacedDeployment({ name: 'd', namespace: ns });
  const readRs = (ns: string) => () => apps.readNamespacedReplicaSet({ name: 'd-rs', namespace: ns });
  const readPod = (ns: string, name: string) => () => core.readNamespacedPod({ name, namespace: ns });

  it('Background propagation removes the owner at once and the dependents through the GC', async () => {
    const ns = await newNamespace();
    await family(ns);
    const reply = await raw('DELETE', `/apis/apps/v1/namespaces/${ns}/deployments/d?propagationPolicy=Background`);
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'd', group: 'apps' } });
    expect(await exists(readDeployment(ns))).toBe(false);
    await cluster.cp.settled();
    await until(async () => !(await exists(readRs(ns))), 'the ReplicaSet to go');
    await until(async () => (await core.listNamespacedPod({ namespace: ns })).items.length === 0, 'the pods to go');
  });

  it('Orphan propagation removes the owner and leaves the dependents without the reference', async () => {
    const ns = await newNamespace();
    const { pods } = await family(ns);
    await apps.deleteNamespacedDeployment({ name: 'd', namespace: ns, propagationPolicy: 'Orphan' });
    await cluster.cp.settled();
    await until(async () => !(await exists(readDeployment(ns))), 'the Deployment to go');
    const rs = await apps.readNamespacedReplicaSet({ name: 'd-rs', namespace: ns });
    expect(rs.metadata!.ownerReferences).toBeUndefined();
    expect(rs.metadata!.deletionTimestamp).toBeUndefined();
    const left = await core.listNamespacedPod({ namespace: ns });
    expect(names(left.items)).toEqual(['d-rs-1', 'd-rs-2']);
    expect(left.items.map((p) => p.metadata!.ownerReferences)).toEqual(pods.map((p) => p.metadata!.ownerReferences));
  });

  it('Foreground propagation keeps the owner until blocking dependents are gone', async () => {
    const ns = await newNamespace();
    await family(ns, true);
    const reply = await raw('DELETE', `/apis/apps/v1/namespaces/${ns}/deployments/d?propagationPolicy=Foreground`);
    expect(reply.status).toBe(200);
    expect(reply.body.kind).toBe('Deployment');
    expect(reply.body.metadata.finalizers).toContain('foregroundDeletion');
    expect(reply.body.metadata.deletionTimestamp).toMatch(RFC3339_SECONDS);

    await cluster.cp.settled();
    await until(async () => !(await exists(readPod(ns, 'd-rs-2'))), 'the unheld pod to go');
    await cluster.cp.settled();
    const held = await core.readNamespacedPod({ name: 'd-rs-1', namespace: ns });
    expect(held.metadata!.deletionTimestamp).toBeInstanceOf(Date);
    const rs = await apps.readNamespacedReplicaSet({ name: 'd-rs', namespace: ns });
    expect(rs.metadata!.deletionTimestamp).toBeInstanceOf(Date);
    expect(rs.metadata!.finalizers).toContain('foregroundDeletion');
    const owner = await apps.readNamespacedDeployment({ name: 'd', namespace: ns });
    expect(owner.metadata!.finalizers).toEqual(['foregroundDeletion']);

    await core.patchNamespacedPod({ name: 'd-rs-1', namespace: ns, body: { metadata: { finalizers: null } } }, merge);
    await cluster.cp.settled();
    await until(async () => !(await exists(readDeployment(ns))), 'the Deployment to go last');
    expect(await exists(readRs(ns))).toBe(false);
    expect(await exists(readPod(ns, 'd-rs-1'))).toBe(false);
  });

  it('rejects orphanDependents together with propagationPolicy with 422', async () => {
    const ns = await newNamespace();
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'both' } } });
    const both = await failure(
      core.deleteNamespacedConfigMap({
        name: 'both',
        namespace: ns,
        orphanDependents: true,
        propagationPolicy: 'Background',
      }),
    );
    expect(both.code).toBe(422);
    expectStatus(
      both.status,
      422,
      'Invalid',
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Background": orphanDependents and deletionPropagation cannot be both set',
    );
    expect(both.status.details!.causes!.map((c) => c.field)).toEqual(['propagationPolicy']);
    expect(await exists(() => core.readNamespacedConfigMap({ name: 'both', namespace: ns }))).toBe(true);
  });

  it('checks uid and resourceVersion preconditions with 409', async () => {
    const ns = await newNamespace();
    const cm = await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'pre' } } });
    const uid = cm.metadata!.uid!;
    const rv = cm.metadata!.resourceVersion!;
    const wrongUid = '00000000-0000-0000-0000-000000000000';
    const uidMismatch = await failure(
      core.deleteNamespacedConfigMap({ name: 'pre', namespace: ns, body: { preconditions: { uid: wrongUid } } }),
    );
    expect(uidMismatch.code).toBe(409);
    expectStatus(
      uidMismatch.status,
      409,
      'Conflict',
      `Operation cannot be fulfilled on ConfigMap "pre": the UID in the precondition (${wrongUid}) does not match the UID in record (${uid}). The object might have been deleted and then recreated`,
    );
    // The reference names the kind in this conflict, not the resource.
    expect(uidMismatch.status.details).toEqual({ name: 'pre', kind: 'ConfigMap' });
    const rvMismatch = await failure(
      core.deleteNamespacedConfigMap({ name: 'pre', namespace: ns, body: { preconditions: { resourceVersion: '1' } } }),
    );
    expectStatus(
      rvMismatch.status,
      409,
      'Conflict',
      `Operation cannot be fulfilled on ConfigMap "pre": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${rv}). The object might have been modified`,
    );
    expect(await core.readNamespacedConfigMap({ name: 'pre', namespace: ns })).toEqual(cm);
    await core.deleteNamespacedConfigMap({
      name: 'pre',
      namespace: ns,
      body: { preconditions: { uid, resourceVersion: rv } },
    });
    expect(await exists(() => core.readNamespacedConfigMap({ name: 'pre', namespace: ns }))).toBe(false);
  });

  it('deletes a corrupt object only with ignoreStoreReadErrorWithClusterBreakingPotential', async () => {
    const ns = await newNamespace();
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'bad' } } });
    const good = await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'good' } } });
    await cluster.cp.faults.corrupt(rt('', 'v1', 'configmaps'), ns, 'bad');

    const get = await failure(core.readNamespacedConfigMap({ name: 'bad', namespace: ns }));
    expect(get.code).toBe(500);
    expectStatus(get.status, 500, 'InternalError', /^Internal error occurred: .*bad/);
    const list = await failure(core.listNamespacedConfigMap({ namespace: ns }));
    expectStatus(list.status, 500, 'InternalError', /^Internal error occurred: /);
    const del = await failure(core.deleteNamespacedConfigMap({ name: 'bad', namespace: ns }));
    expectStatus(del.status, 500, 'InternalError', /^Internal error occurred: /);

    const healthy = await failure(
      core.deleteNamespacedConfigMap({
        name: 'good',
        namespace: ns,
        ignoreStoreReadErrorWithClusterBreakingPotential: true,
      }),
    );
    expect(healthy.code).toBe(422);
    expectStatus(
      healthy.status,
      422,
      'Invalid',
      /^DeleteOptions\.meta\.k8s\.io "" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: /,
    );
    expect(healthy.status.details!.causes!.map((c) => c.field)).toEqual([
      'ignoreStoreReadErrorWithClusterBreakingPotential',
    ]);
    expect(await core.readNamespacedConfigMap({ name: 'good', namespace: ns })).toEqual(good);

    const forced = await raw(
      'DELETE',
      `/api/v1/namespaces/${ns}/configmaps/bad?ignoreStoreReadErrorWithClusterBreakingPotential=true`,
    );
    expect(forced.status).toBe(200);
    expect(forced.body).toMatchObject({
      kind: 'Status',
      status: 'Success',
      details: { name: 'bad', kind: 'configmaps' },
    });
    const gone = await failure(core.readNamespacedConfigMap({ name: 'bad', namespace: ns }));
    expectStatus(gone.status, 404, 'NotFound', 'configmaps "bad" not found');
    expect(names((await core.listNamespacedConfigMap({ namespace: ns })).items)).toEqual(['good']);
  });

  it('deletes a collection by label selector', async () => {
    const ns = await newNamespace();
    for (const [name, group] of [
      ['a', 'x'],
      ['b', 'x'],
      ['c', 'y'],
    ]) {
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name, labels: { group } } } });
    }
    const reply = await raw('DELETE', `/api/v1/namespaces/${ns}/configmaps?labelSelector=group%3Dx`);
    expect(reply.status).toBe(200);
    expect(reply.body.kind).toBe('ConfigMapList');
    expect(names(reply.body.items)).toEqual(['a', 'b']);
    expect(names((await core.listNamespacedConfigMap({ namespace: ns })).items)).toEqual(['c']);
    await core.deleteCollectionNamespacedConfigMap({ namespace: ns });
    expect((await core.listNamespacedConfigMap({ namespace: ns })).items).toEqual([]);
  });
});

describe('errors', () => {
  it('NotFound names the qualified resource', async () => {
    const ns = await newNamespace();
    const sts = await failure(apps.readNamespacedStatefulSet({ name: 'nope', namespace: ns }));
    expect(sts.code).toBe(404);
    expectStatus(sts.status, 404, 'NotFound', 'statefulsets.apps "nope" not found');
    expect(sts.status.details).toMatchObject({ name: 'nope', group: 'apps', kind: 'statefulsets' });
    const l = await failure(
      custom.getNamespacedCustomObject({
        group: COORDINATION,
        version: 'v1',
        namespace: ns,
        plural: 'leases',
        name: 'nope',
      }),
    );
    expectStatus(l.status, 404, 'NotFound', `leases.${COORDINATION} "nope" not found`);
    const noNs = await failure(
      core.createNamespacedConfigMap({ namespace: 'no-such-ns', body: { metadata: { name: 'x' } } }),
    );
    expectStatus(noNs.status, 404, 'NotFound', 'namespaces "no-such-ns" not found');
  });

  it('AlreadyExists leaves the existing object alone', async () => {
    const ns = await newNamespace();
    const first = await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'dup' }, data: { a: '1' } },
    });
    const dup = await failure(
      core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'dup' }, data: { a: '2' } } }),
    );
    expect(dup.code).toBe(409);
    expectStatus(dup.status, 409, 'AlreadyExists', 'configmaps "dup" already exists');
    expect(dup.status.details).toMatchObject({ name: 'dup', kind: 'configmaps' });
    expect(await core.readNamespacedConfigMap({ name: 'dup', namespace: ns })).toEqual(first);
  });

  it('Invalid lists causes with their fields', async () => {
    const ns = await newNamespace();
    const noName = await failure(core.createNamespacedConfigMap({ namespace: ns, body: { data: { a: 'b' } } }));
    expect(noName.code).toBe(422);
    expectStatus(
      noName.status,
      422,
      'Invalid',
      'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required',
    );
    expect(noName.status.details).toMatchObject({ kind: 'ConfigMap' });
    expect(noName.status.details!.causes).toEqual([
      {
        reason: 'FieldValueRequired',
        field: 'metadata.name',
        message: 'Required value: name or generateName is required',
      },
    ]);
  });

  it('BadRequest for a malformed body, and nothing is written', async () => {
    const ns = await newNamespace();
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'm' } } });
    const rvBefore = await storeRv();
    const post = await raw('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: '{"metadata": {"name": "broken"' });
    expect(post.status).toBe(400);
    expectStatus(
      post.body,
      400,
      'BadRequest',
      'the object provided is unrecognized (must be of type ConfigMap): ' +
        'couldn\'t get version/kind; json parse error: unexpected end of JSON input ({"metadata": {"name": "broken")',
    );
    const put = await raw('PUT', `/api/v1/namespaces/${ns}/configmaps/m`, { body: '{not json' });
    expectStatus(put.body, 400, 'BadRequest', /json parse error/);
    const patch = await raw('PATCH', `/api/v1/namespaces/${ns}/configmaps/m`, {
      body: '{"data":',
      contentType: 'application/merge-patch+json',
    });
    expectStatus(patch.body, 400, 'BadRequest', /json parse error/);
    expect(await storeRv()).toBe(rvBefore);
  });

  it('MethodNotAllowed for verbs a path does not serve', async () => {
    const ns = await newNamespace();
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'here' } } });
    const rvBefore = await storeRv();
    const postItem = await raw('POST', `/api/v1/namespaces/${ns}/configmaps/here`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other' } },
    });
    expect(postItem.status).toBe(405);
    expectStatus(
      postItem.body,
      405,
      'MethodNotAllowed',
      'the server does not allow this method on the requested resource',
    );
    const putCollection = await raw('PUT', `/api/v1/namespaces/${ns}/configmaps`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'here' } },
    });
    expect(putCollection.status).toBe(405);
    expectStatus(
      putCollection.body,
      405,
      'MethodNotAllowed',
      'the server does not allow this method on the requested resource',
    );
    const patchCollection = await raw('PATCH', `/api/v1/namespaces/${ns}/configmaps`, {
      body: { data: { a: 'b' } },
      contentType: 'application/merge-patch+json',
    });
    expect(patchCollection.status).toBe(405);
    const options = await raw('OPTIONS', `/api/v1/namespaces/${ns}/configmaps`);
    expect(options.status).toBe(405);
    expectStatus(
      options.body,
      405,
      'MethodNotAllowed',
      'the server does not allow this method on the requested resource',
    );
    expect(await exists(() => core.readNamespacedConfigMap({ name: 'other', namespace: ns }))).toBe(false);
    expect(await storeRv()).toBe(rvBefore);
  });

  it('UnsupportedMediaType for a PATCH in text/plain', async () => {
    const ns = await newNamespace();
    const cm = await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 't' }, data: { a: '1' } },
    });
    const reply = await raw('PATCH', `/api/v1/namespaces/${ns}/configmaps/t`, {
      body: '{"data":{"a":"2"}}',
      contentType: 'text/plain',
    });
    expect(reply.status).toBe(415);
    // The reference's words for a patch type it does not know: the bare status text.
    expectStatus(reply.body, 415, 'UnsupportedMediaType', '415: Unsupported Media Type');
    expect(await core.readNamespacedConfigMap({ name: 't', namespace: ns })).toEqual(cm);
  });

  it('UnsupportedMediaType for a POST in text/plain, with nothing created', async () => {
    const ns = await newNamespace();
    const reply = await raw('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: '{"metadata":{"name":"t"}}',
      contentType: 'text/plain',
    });
    expectStatus(
      reply.body,
      415,
      'UnsupportedMediaType',
      /^the body of the request was in an unknown format - accepted media types include: application\/json, application\/yaml, application\/vnd\.kubernetes\.protobuf$/,
    );
    expect(await exists(() => core.readNamespacedConfigMap({ name: 't', namespace: ns }))).toBe(false);
  });

  it('NotAcceptable for a media type the server cannot produce; YAML or protobuf when asked first; JSON among others', async () => {
    const ns = await newNamespace();
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'n' }, data: { a: '1' } } });
    const path = `/api/v1/namespaces/${ns}/configmaps/n`;
    const xml = await raw('GET', path, { accept: 'application/xml' });
    expect(xml.status).toBe(406);
    expectStatus(
      xml.body,
      406,
      'NotAcceptable',
      '406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf',
    );
    const protobufOnly = await raw('GET', path, { accept: 'application/vnd.kubernetes.protobuf' });
    expect(protobufOnly.status).toBe(200);
    expect(protobufOnly.headers['content-type']).toBe('application/vnd.kubernetes.protobuf');
    expect(protobufOnly.text.startsWith('k8s\u0000')).toBe(true);
    const yaml = await raw('GET', path, { accept: 'application/yaml' });
    expect(yaml.status).toBe(200);
    expect(yaml.headers['content-type']).toBe('application/yaml');
    expect(yaml.text).toMatch(/^apiVersion: v1\nkind: ConfigMap\n/);
    const jsonFirst = await raw('GET', path, { accept: 'application/json,application/vnd.kubernetes.protobuf' });
    expect(jsonFirst.status).toBe(200);
    expect(jsonFirst.body).toMatchObject({ kind: 'ConfigMap', data: { a: '1' } });
    // The first listed type the server produces wins, as in the reference: YAML before JSON.
    const yamlFirst = await raw('GET', path, { accept: 'application/yaml, application/json' });
    expect(yamlFirst.headers['content-type']).toBe('application/yaml');
    // The reference's 406 carries empty details, no causes.
    expect(xml.body.details).toEqual({});
    // A Status is negotiated as any answer: protobuf to a protobuf-first client, as the reference.
    const missing = await raw('GET', `${path}-missing`, {
      accept: 'application/vnd.kubernetes.protobuf,application/json',
    });
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toBe('application/vnd.kubernetes.protobuf');
    expect(missing.text.startsWith('k8s\u0000')).toBe(true);
    expect(missing.text).toContain('NotFound');
  });

  it('answers paths it does not serve as the reference does: JSON 404 under an API, text elsewhere; 405 without causes', async () => {
    const ns = await newNamespace();
    for (const path of [
      `/api/v1/namespaces/${ns}/frobnicators`,
      '/apis/apps/v9/deployments',
      `/api/v1/namespaces/${ns}/nodes`,
    ]) {
      const reply = await raw('GET', path);
      expect(reply.status, path).toBe(404);
      expect(reply.body, path).toMatchObject({ kind: 'Status', reason: 'NotFound', details: {} });
      expect(reply.body.details.causes, path).toBeUndefined();
    }
    for (const path of ['/apis/nope.example.com/v1/things', '/nope']) {
      const reply = await raw('GET', path);
      expect(reply.status, path).toBe(404);
      expect(reply.headers['content-type'], path).toBe('text/plain; charset=utf-8');
      expect(reply.text, path).toBe('404 page not found\n');
    }
    const missingDocument = await raw('GET', '/openapi/v3/apis/nope.example.com/v1');
    expect(missingDocument.status).toBe(404);
    expect(missingDocument.text).toBe('');
    const put = await raw('PUT', `/api/v1/namespaces/${ns}/configmaps`, { body: {} });
    expect(put.status).toBe(405);
    expect(put.body).toMatchObject({ reason: 'MethodNotAllowed', details: {} });
    expect(put.body.details.causes).toBeUndefined();
    // A namespaced kind is created only within a namespace: the all-namespaces collection has no POST.
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: ns } };
    const post = await raw('POST', '/api/v1/configmaps', { body });
    expect(post.status).toBe(405);
    expect(post.body).toMatchObject({ reason: 'MethodNotAllowed', details: {} });
  });

  it('a rejected write changes nothing', async () => {
    const ns = await newNamespace();
    const before = await apps.createNamespacedStatefulSet({ namespace: ns, body: statefulSet('r', 1) });
    const path = `/apis/apps/v1/namespaces/${ns}/statefulsets/r`;
    const rvBefore = await storeRv();
    const attempts: [string, Promise<RawReply>, number][] = [
      [
        'stale replace',
        raw('PUT', path, {
          body: {
            ...before,
            metadata: { ...before.metadata, resourceVersion: '1' },
            spec: { ...before.spec, replicas: 9 },
          },
        }),
        409,
      ],
      [
        'strict unknown field',
        raw('PATCH', `${path}?fieldValidation=Strict`, {
          body: { spec: { replicas: 9, bogus: 1 } },
          contentType: 'application/merge-patch+json',
        }),
        400,
      ],
      [
        'bad dryRun',
        raw('PATCH', `${path}?dryRun=Maybe`, {
          body: { spec: { replicas: 9 } },
          contentType: 'application/merge-patch+json',
        }),
        422,
      ],
      [
        'force on merge',
        raw('PATCH', `${path}?force=true`, {
          body: { spec: { replicas: 9 } },
          contentType: 'application/merge-patch+json',
        }),
        422,
      ],
      [
        'long fieldManager',
        raw('PATCH', `${path}?fieldManager=${'f'.repeat(200)}`, {
          body: { spec: { replicas: 9 } },
          contentType: 'application/merge-patch+json',
        }),
        422,
      ],
      ['wrong media type', raw('PATCH', path, { body: '{"spec":{"replicas":9}}', contentType: 'text/plain' }), 415],
      [
        'name mismatch',
        raw('PUT', path, { body: { ...before, metadata: { ...before.metadata, name: 'other' } } }),
        400,
      ],
    ];
    for (const [what, attempt, code] of attempts) {
      const reply = await attempt;
      expect({ what, code: reply.status }).toEqual({ what, code });
      expect(reply.body.kind).toBe('Status');
      expect(reply.body.code).toBe(code);
    }
    expect(await apps.readNamespacedStatefulSet({ name: 'r', namespace: ns })).toEqual(before);
    expect(await storeRv()).toBe(rvBefore);
  });

  it('an injected 429 reaches the client with its code and Retry-After', async () => {
    const ns = await newNamespace();
    cluster.cp.faults.failRequests({
      code: 429,
      count: 1,
      retryAfterSeconds: 7,
      match: (method, path) => method === 'GET' && path.endsWith('/configmaps/throttled'),
    });
    const throttled = await failure(core.readNamespacedConfigMap({ name: 'throttled', namespace: ns }));
    expect(throttled.code).toBe(429);
    expect(throttled.headers['retry-after']).toBe('7');
    expectStatus(throttled.status, 429, 'TooManyRequests', 'Too many requests, please try again later.');
    expect(throttled.status.details!.retryAfterSeconds).toBe(7);
    // One use only: the next request goes through to the real answer.
    const after = await failure(core.readNamespacedConfigMap({ name: 'throttled', namespace: ns }));
    expect(after.code).toBe(404);
  });
});
