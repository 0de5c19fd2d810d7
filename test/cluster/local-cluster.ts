/**
 * A real Kubernetes control plane on loopback, from the binaries `npm run k8s:build` makes: etcd, kube-apiserver
 * (RBAC and Node authorizers, NodeRestriction, bootstrap tokens, service-account keys, a front-proxy CA, the
 * feature gates our controllers use), kube-scheduler, kube-controller-manager running every controller except
 * those our daemon implements (its CSR signer, when chosen, signs with the cluster CA), and kwok, which runs the
 * pods of `nodes` simulated nodes through the stages of `kwok-stages.yaml`. Every child logs to `<dir>/logs/` and
 * is stopped by `stop()`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { webcrypto } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeKubeconfig } from '../../src/controlplane/kubeconfig.ts';
import {
  type CertificateWithKey,
  createSelfSignedCa,
  issueKeyAndCertificate,
  type Subject,
} from '../../src/pki/certs.ts';
import { exportPrivateKeyPem, generateKeyPair } from '../../src/pki/keys.ts';
import { derToPem } from '../../src/pki/pem.ts';
import { builtBinary, kubernetesRelease } from '../../tools/k8s/binaries.ts';
import { freePort } from '../support/free-port.ts';

const STAGES = join(dirname(fileURLToPath(import.meta.url)), 'kwok-stages.yaml');
const DAY_MS = 24 * 60 * 60 * 1000;
const READY_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 10_000;
/** Writes only, at level Metadata, once complete: what the embedded plane's `--audit-log-path` logs. */
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted, Panic]
rules:
- level: None
  verbs: [get, list, watch]
- level: Metadata
`;

/** The controllers of kube-controller-manager that our daemon runs in its place. */
export const OUR_KCM_CONTROLLERS = [
  'certificatesigningrequest-approving-controller',
  'certificatesigningrequest-signing-controller',
  'certificatesigningrequest-cleaner-controller',
  'kube-apiserver-serving-clustertrustbundle-publisher-controller',
  'disruption-controller',
  'statefulset-controller',
  'clusterrole-aggregation-controller',
];

export interface LocalClusterOptions {
  /** Wiped and filled with the PKI, etcd's data, kubeconfigs and logs. */
  dir: string;
  /** kwok nodes, named `kwok-node-<i>`. Defaults to 3. */
  nodes?: number;
  /** kube-controller-manager's `--controllers`; by default every controller but ours. */
  kcmControllers?: string[];
  /** Progress lines. */
  log?: (line: string) => void;
  /** Only etcd and kube-apiserver: no controllers, scheduler or nodes changing objects behind a client's back. */
  apiServerOnly?: boolean;
}

/** What a test worker needs to reach a cluster another process started (plain data, for vitest's `provide`). */
export interface LocalClusterInfo {
  server: string;
  /** An admin (`system:masters`) kubeconfig. */
  kubeconfig: string;
  dir: string;
  /**
   * The cluster CA (kube-apiserver's `--client-ca-file`): it signs identities' client certificates, and
   * kube-controller-manager's CSR signer signs with it too.
   */
  caFiles: { certFile: string; keyFile: string };
  /** kube-apiserver's audit log: every write, one `audit.k8s.io/v1` Event (level Metadata) per line. */
  auditLogPath: string;
}

export interface LocalCluster extends LocalClusterInfo {
  /** One request as the admin; the body is JSON both ways. */
  request(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  /** Stops kube-controller-manager and starts it again with the same flags (its start-time passes run again). */
  restartControllerManager(): Promise<void>;
  /** The pid of one of the cluster's processes (`kube-apiserver`, `etcd`, …) while it runs. */
  pidOf(name: string): number | undefined;
  stop(): Promise<void>;
}

interface Child {
  name: string;
  process: ChildProcess;
  exited: Promise<void>;
}

export function missingBinaries(): string[] {
  return ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'].filter(
    (name) => !builtBinary(name),
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Fails when a child has exited: the wait it interrupts would otherwise run to its deadline. */
function checkAlive(children: Child[], what: string): void {
  const dead = children.find((child) => child.process.exitCode !== null || child.process.signalCode !== null);
  if (dead) throw new Error(`${dead.name} exited while waiting for ${what} (see its log)`);
}

/** GETs `url` with the client certificate until it answers 200; fails when a child exits or at the deadline. */
async function waitFor(
  url: string,
  tls: { ca?: string; cert?: string; key?: string },
  what: string,
  children: Child[],
) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = '';
  while (Date.now() < deadline) {
    checkAlive(children, what);
    last = await new Promise<string>((resolve) => {
      const req = request(url, { ...tls, timeout: 5_000 }, (res) => {
        res.resume();
        resolve(String(res.statusCode));
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', (err) => resolve(err.message));
      req.end();
    });
    if (last === '200') return;
    await sleep(250);
  }
  throw new Error(`${what} not ready after ${READY_TIMEOUT_MS / 1000} s (last answer: ${last})`);
}

export async function startLocalCluster(options: LocalClusterOptions): Promise<LocalCluster> {
  const { dir, nodes = 3, log = () => {} } = options;
  const missing = missingBinaries();
  if (missing.length) throw new Error(`not built: ${missing.join(', ')}; run \`npm run k8s:build\``);

  await rm(dir, { recursive: true, force: true });
  const pki = join(dir, 'pki');
  await mkdir(join(dir, 'logs'), { recursive: true });
  await mkdir(pki, { recursive: true, mode: 0o700 });
  const files = new Map<string, string>();
  const save = async (name: string, text: string) => {
    const path = join(pki, name);
    await writeFile(path, text, { mode: 0o600 });
    files.set(name, path);
    return path;
  };
  const pair = async (name: string, pem: CertificateWithKey) => {
    await save(`${name}.crt`, pem.certPem);
    await save(`${name}.key`, pem.keyPem);
  };

  log('generating the cluster PKI');
  const now = new Date(Date.now() - 60_000);
  const notAfter = new Date(now.getTime() + 365 * DAY_MS);
  const ca = await createSelfSignedCa({ commonName: 'kubernetes', now });
  const frontProxyCa = await createSelfSignedCa({ commonName: 'front-proxy-ca', now });
  await pair('ca', ca);
  await pair('front-proxy-ca', frontProxyCa);
  // The key pair that signs and verifies service-account tokens.
  const serviceAccountKeys = await generateKeyPair('ECDSA-P256');
  await save('sa.key', await exportPrivateKeyPem(serviceAccountKeys.privateKey));
  await save('sa.pub', derToPem(await webcrypto.subtle.exportKey('spki', serviceAccountKeys.publicKey), 'PUBLIC KEY'));
  const issue = (pemCa: CertificateWithKey, subject: Subject, usage: 'client auth' | 'server auth', names = false) =>
    issueKeyAndCertificate({
      ca: pemCa,
      subject,
      usages: [usage],
      notBefore: now,
      notAfter,
      ...(names && {
        dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc'],
        ipAddresses: ['127.0.0.1', '10.96.0.1'],
      }),
    });
  await pair('apiserver', await issue(ca, { commonName: 'kube-apiserver' }, 'server auth', true));
  await pair('front-proxy-client', await issue(frontProxyCa, { commonName: 'front-proxy-client' }, 'client auth'));
  const admin = await issue(ca, { commonName: 'kubernetes-admin', organizations: ['system:masters'] }, 'client auth');
  await pair('admin', admin);

  const [etcdPort, etcdPeerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  const server = `https://127.0.0.1:${apiPort}`;
  const auditLogPath = join(dir, 'logs', 'audit.log');
  /** A kubeconfig in `dir` for a client certificate of the cluster CA. */
  const kubeconfigWith = async (file: string, name: string, cert: CertificateWithKey) => {
    const path = join(dir, file);
    const user = { name, clientCertPem: cert.certPem, clientKeyPem: cert.keyPem };
    await writeKubeconfig(path, {
      server,
      caPem: ca.certPem,
      user,
      clusterName: 'orch-real',
      contextName: 'orch-real',
    });
    return path;
  };
  const kubeconfigFor = async (subject: Subject, file: string) =>
    kubeconfigWith(file, subject.commonName, await issue(ca, subject, 'client auth'));
  const kubeconfig = await kubeconfigWith('kubeconfig', 'kubernetes-admin', admin);
  const kcmKubeconfig = await kubeconfigFor({ commonName: 'system:kube-controller-manager' }, 'kcm.kubeconfig');
  const schedulerKubeconfig = await kubeconfigFor({ commonName: 'system:kube-scheduler' }, 'scheduler.kubeconfig');

  const children: Child[] = [];
  const start = (name: string, binary: string, args: string[]) => {
    const out = createWriteStream(join(dir, 'logs', `${name}.log`), { flags: 'a' });
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(out);
    child.stderr.pipe(out);
    const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
    children.push({ name, process: child, exited });
  };
  const end = async (child: Child) => {
    if (child.process.exitCode !== null || child.process.signalCode !== null) return;
    child.process.kill('SIGTERM');
    const timer = setTimeout(() => child.process.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await child.exited;
    clearTimeout(timer);
  };
  const stop = async () => {
    for (const child of children.reverse()) await end(child);
  };
  const pidOf = (name: string) => children.find((child) => child.name === name)?.process.pid;
  const adminTls = { ca: ca.certPem, cert: admin.certPem, key: admin.keyPem };
  const p = (name: string) => files.get(name) as string;
  const request = (method: string, path: string, body?: unknown) => call(server, adminTls, method, path, body);
  const caFiles = { certFile: p('ca.crt'), keyFile: p('ca.key') };
  let kcmArgs: string[] = [];
  const restartControllerManager = async () => {
    const at = children.findIndex((child) => child.name === 'kube-controller-manager');
    await end(children[at]);
    children.splice(at, 1);
    start('kube-controller-manager', builtBinary('kube-controller-manager') as string, kcmArgs);
  };

  try {
    log('starting etcd');
    start('etcd', builtBinary('etcd') as string, [
      '--name=orch-real',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-cluster=orch-real=http://127.0.0.1:${etcdPeerPort}`,
      '--unsafe-no-fsync',
    ]);

    log(`starting kube-apiserver ${kubernetesRelease()} on ${server}`);
    start('kube-apiserver', builtBinary('kube-apiserver') as string, [
      `--etcd-servers=http://127.0.0.1:${etcdPort}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      // A loopback address may not be a Service endpoint: nothing keeps the `kubernetes` Service's endpoints.
      '--endpoint-reconciler-type=none',
      `--secure-port=${apiPort}`,
      `--tls-cert-file=${p('apiserver.crt')}`,
      `--tls-private-key-file=${p('apiserver.key')}`,
      `--client-ca-file=${p('ca.crt')}`,
      '--authorization-mode=Node,RBAC',
      '--enable-admission-plugins=NodeRestriction',
      '--enable-bootstrap-token-auth=true',
      '--allow-privileged=true',
      '--service-cluster-ip-range=10.96.0.0/16',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${p('sa.pub')}`,
      `--service-account-signing-key-file=${p('sa.key')}`,
      `--requestheader-client-ca-file=${p('front-proxy-ca.crt')}`,
      '--requestheader-allowed-names=front-proxy-client',
      '--requestheader-username-headers=X-Remote-User',
      '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
      `--proxy-client-cert-file=${p('front-proxy-client.crt')}`,
      `--proxy-client-key-file=${p('front-proxy-client.key')}`,
      '--feature-gates=CoordinatedLeaderElection=true,ShardedListAndWatch=true,StatefulSetRecreateStrategy=true',
      '--runtime-config=coordination.k8s.io/v1beta1=true',
      '--profiling=false',
      `--audit-policy-file=${await save('audit-policy.yaml', AUDIT_POLICY)}`,
      `--audit-log-path=${auditLogPath}`,
    ]);
    await waitFor(`${server}/readyz`, adminTls, 'kube-apiserver', children);
    for (const binding of KUBEADM_BINDINGS) await createBinding(server, adminTls, binding);
    if (options.apiServerOnly)
      return { server, kubeconfig, dir, caFiles, auditLogPath, request, restartControllerManager, pidOf, stop };

    const controllers = options.kcmControllers ?? ['*', ...OUR_KCM_CONTROLLERS.map((name) => `-${name}`)];
    log(`starting kube-controller-manager (--controllers=${controllers.join(',')}) and kube-scheduler`);
    kcmArgs = [
      `--kubeconfig=${kcmKubeconfig}`,
      `--authentication-kubeconfig=${kcmKubeconfig}`,
      `--authorization-kubeconfig=${kcmKubeconfig}`,
      '--bind-address=127.0.0.1',
      '--secure-port=0',
      '--leader-elect=false',
      '--use-service-account-credentials=true',
      `--controllers=${controllers.join(',')}`,
      `--root-ca-file=${p('ca.crt')}`,
      `--service-account-private-key-file=${p('sa.key')}`,
      `--cluster-signing-cert-file=${p('ca.crt')}`,
      `--cluster-signing-key-file=${p('ca.key')}`,
      '--feature-gates=CoordinatedLeaderElection=true,StatefulSetRecreateStrategy=true',
    ];
    start('kube-controller-manager', builtBinary('kube-controller-manager') as string, kcmArgs);
    start('kube-scheduler', builtBinary('kube-scheduler') as string, [
      `--kubeconfig=${schedulerKubeconfig}`,
      `--authentication-kubeconfig=${schedulerKubeconfig}`,
      `--authorization-kubeconfig=${schedulerKubeconfig}`,
      '--bind-address=127.0.0.1',
      '--secure-port=0',
      '--leader-elect=false',
    ]);

    log(`starting kwok with ${nodes} nodes`);
    start('kwok', builtBinary('kwok') as string, [
      `--kubeconfig=${kubeconfig}`,
      '--manage-all-nodes=false',
      '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
      '--node-lease-duration-seconds=40',
      '--node-ip=127.0.0.1',
      `--config=${STAGES}`,
    ]);
    for (let i = 1; i <= nodes; i++) await createNode(server, adminTls, `kwok-node-${i}`);
    await waitForNodesReady(server, adminTls, nodes, children);
  } catch (error) {
    await stop();
    throw error;
  }
  return { server, kubeconfig, dir, caFiles, auditLogPath, request, restartControllerManager, pidOf, stop };
}

/**
 * The bindings kubeadm (so kind) makes for TLS bootstrap, which the embedded plane has from the start: bootstrap
 * tokens may create CSRs and ask for node client certificates, nodes may renew their own. kubeadm binds its
 * tokens' group `system:bootstrappers:kubeadm:default-node-token`; here every bootstrap token's group.
 */
const KUBEADM_BINDINGS = [
  ['kubeadm:kubelet-bootstrap', 'system:node-bootstrapper', 'system:bootstrappers'],
  [
    'kubeadm:node-autoapprove-bootstrap',
    'system:certificates.k8s.io:certificatesigningrequests:nodeclient',
    'system:bootstrappers',
  ],
  [
    'kubeadm:node-autoapprove-certificate-rotation',
    'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient',
    'system:nodes',
  ],
] as const;

async function createBinding(server: string, tls: Tls, [name, role, group]: readonly string[]): Promise<void> {
  const rbac = 'rbac.authorization.k8s.io';
  const { status, json } = await call(server, tls, 'POST', `/apis/${rbac}/v1/clusterrolebindings`, {
    metadata: { name },
    roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: role },
    subjects: [{ apiGroup: rbac, kind: 'Group', name: group }],
  });
  if (status !== 201) throw new Error(`creating ClusterRoleBinding ${name}: ${status} ${json?.message ?? ''}`);
}

type Tls = { ca: string; cert: string; key: string };

function call(
  server: string,
  tls: Tls,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${server}${path}`,
      { ...tls, method, timeout: 10_000, headers: { 'content-type': 'application/json', accept: 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : undefined });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

async function createNode(server: string, tls: Tls, name: string): Promise<void> {
  const { status, json } = await call(server, tls, 'POST', '/api/v1/nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        type: 'kwok',
      },
    },
  });
  if (status !== 201 && status !== 409) throw new Error(`creating node ${name}: ${status} ${json?.message ?? ''}`);
}

async function waitForNodesReady(server: string, tls: Tls, count: number, children: Child[]): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    checkAlive(children, 'the nodes');
    const { json } = await call(server, tls, 'GET', '/api/v1/nodes');
    const ready = (json?.items ?? []).filter((node: any) =>
      node.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True'),
    );
    if (ready.length >= count) return;
    await sleep(250);
  }
  throw new Error(`fewer than ${count} nodes Ready after ${READY_TIMEOUT_MS / 1000} s`);
}

export const hasClusterBinaries = missingBinaries().length === 0;
