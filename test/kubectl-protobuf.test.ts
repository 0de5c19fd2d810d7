/**
 * kubectl's typed generators send their request bodies as Kubernetes protobuf
 * (`application/vnd.kubernetes.protobuf`): `create namespace|configmap|secret|deployment` and
 * `certificate approve|deny`. These run the real kubectl against the embedded control plane and check
 * what was stored with `kubectl get -o json` — the real-bytes check of the protobuf decoder.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { hasKubectl, Kubectl } from './support/kubectl.ts';

if (!hasKubectl) {
  console.warn('test/kubectl-protobuf.test.ts: no kubectl binary (PATH or $KUBECTL); the protobuf suite is skipped');
}

/** A PEM `CERTIFICATE REQUEST` (EC P-256, CN=system:node:worker-1), base64-encoded as JSON carries it. */
const CSR_REQUEST =
  'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIeE1JR1lBZ0VBTURZeEZUQVRCZ05WQkFvTURITjVjM1JsYlRwdWIyUmxjekVkTUJzR0ExVUVBd3dVYzNsegpkR1Z0T201dlpHVTZkMjl5YTJWeUxURXdXVEFUQmdjcWhrak9QUUlCQmdncWhrak9QUU1CQndOQ0FBU0lXNTg2ClFZbzZHdmkrVmc0NmlVZ1JiL1VGZTVtSnJjV0RyZThTSzVJaDF0a29oMmRMOEFlajQ4a0RUUzNXSnZ5NkE2eTcKVUJWRmxqYXRaNVVMcStjMG9BQXdDZ1lJS29aSXpqMEVBd0lEU0FBd1JRSWdIbi91VUN4aFJ4dWJBQUVXUWlvUwpIUisxcEdUdWtpRnpvTFBrYmNhVU5tUUNJUUQyNHZqR2U5UUZQUHNkbTFJNHZpOVZiQkR4Szg1a2E4S2c5TVU4CmtrVWEwUT09Ci0tLS0tRU5EIENFUlRJRklDQVRFIFJFUVVFU1QtLS0tLQo=';

async function withKubectl(cluster: TestCluster): Promise<{ kubectl: Kubectl; cacheDir: string }> {
  const cacheDir = await mkdtemp(join(tmpdir(), 'kubectl-proto-cache-'));
  return { kubectl: new Kubectl(cluster.kubeconfig, cacheDir), cacheDir };
}

describe.skipIf(!hasKubectl)('kubectl typed generators (protobuf bodies), orch flavor', () => {
  const NS = 'proto-suite';
  let cluster: TestCluster;
  let kubectl: Kubectl;
  let cacheDir: string;

  beforeAll(async () => {
    cluster = await startTestCluster();
    ({ kubectl, cacheDir } = await withKubectl(cluster));
  });

  afterAll(async () => {
    await cluster?.stop();
    if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
  });

  it('kubectl create namespace', async () => {
    expect(await kubectl.ok(['create', 'namespace', NS])).toContain(`namespace/${NS} created`);
    const ns = await kubectl.json(['get', 'namespace', NS]);
    expect(ns).toMatchObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    expect(ns.metadata.uid).toBeTruthy();
    expect(ns.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('kubectl create configmap --from-literal, non-ASCII and long values included', async () => {
    const long = 'x'.repeat(400);
    await kubectl.ok([
      'create',
      'configmap',
      'settings',
      '-n',
      NS,
      '--from-literal=mode=fast',
      '--from-literal=greeting=héllo wörld ✓',
      `--from-literal=long=${long}`,
    ]);
    const cm = await kubectl.json(['get', 'configmap', 'settings', '-n', NS]);
    expect(cm.metadata).toMatchObject({ name: 'settings', namespace: NS });
    expect(cm.data).toEqual({ mode: 'fast', greeting: 'héllo wörld ✓', long });
  });

  it('kubectl create secret generic --from-literal', async () => {
    await kubectl.ok([
      'create',
      'secret',
      'generic',
      'creds',
      '-n',
      NS,
      '--from-literal=password=s3cr3t',
      '--from-literal=user=admin',
    ]);
    const secret = await kubectl.json(['get', 'secret', 'creds', '-n', NS]);
    // kubectl sends no type unless --type is given (the reference server then defaults it to Opaque).
    expect([undefined, 'Opaque']).toContain(secret.type);
    expect(secret.data).toEqual({
      password: Buffer.from('s3cr3t').toString('base64'),
      user: Buffer.from('admin').toString('base64'),
    });
  });

  it('kubectl create deployment --image --replicas', async () => {
    await kubectl.ok(['create', 'deployment', 'web', '--image=nginx', '--replicas=2', '-n', NS]);
    const deploy = await kubectl.json(['get', 'deployment', 'web', '-n', NS]);
    expect(deploy.metadata).toMatchObject({ name: 'web', namespace: NS, labels: { app: 'web' } });
    expect(deploy.spec.replicas).toBe(2);
    expect(deploy.spec.selector).toEqual({ matchLabels: { app: 'web' } });
    expect(deploy.spec.template.metadata.labels).toEqual({ app: 'web' });
    expect(deploy.spec.template.spec.containers).toHaveLength(1);
    expect(deploy.spec.template.spec.containers[0]).toMatchObject({ name: 'nginx', image: 'nginx' });
  });

  it('kubectl create with --dry-run=server sends protobuf too and stores nothing', async () => {
    await kubectl.ok(['create', 'configmap', 'dry', '-n', NS, '--from-literal=a=b', '--dry-run=server']);
    const r = await kubectl.run(['get', 'configmap', 'dry', '-n', NS]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('NotFound');
  });
});

describe.skipIf(!hasKubectl)('kubectl certificate approve|deny (protobuf bodies), kubernetes flavor', () => {
  let cluster: TestCluster;
  let kubectl: Kubectl;
  let cacheDir: string;

  const csr = (name: string) => ({
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: {
      request: CSR_REQUEST,
      signerName: 'example.com/test-signer',
      expirationSeconds: 86400,
      usages: ['digital signature', 'client auth'],
    },
  });

  beforeAll(async () => {
    cluster = await startTestCluster({ flavor: 'kubernetes' });
    ({ kubectl, cacheDir } = await withKubectl(cluster));
    for (const name of ['proto-csr-approve', 'proto-csr-deny']) {
      await kubectl.ok(['apply', '-f', '-'], { input: JSON.stringify(csr(name)) });
    }
  });

  afterAll(async () => {
    await cluster?.stop();
    if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
  });

  it('kubectl certificate approve adds an Approved condition and keeps the spec', async () => {
    expect(await kubectl.ok(['certificate', 'approve', 'proto-csr-approve'])).toContain('approved');
    const got = await kubectl.json(['get', 'csr', 'proto-csr-approve']);
    expect(got.spec).toMatchObject({
      request: CSR_REQUEST,
      signerName: 'example.com/test-signer',
      expirationSeconds: 86400,
      usages: ['digital signature', 'client auth'],
    });
    expect(got.status.conditions).toEqual([
      expect.objectContaining({ type: 'Approved', status: 'True', reason: 'KubectlApprove' }),
    ]);
  });

  it('kubectl certificate deny adds a Denied condition', async () => {
    expect(await kubectl.ok(['certificate', 'deny', 'proto-csr-deny'])).toContain('denied');
    const got = await kubectl.json(['get', 'csr', 'proto-csr-deny']);
    expect(got.status.conditions).toEqual([
      expect.objectContaining({ type: 'Denied', status: 'True', reason: 'KubectlDeny' }),
    ]);
  });

  it('kubectl create namespace works in this flavor as well', async () => {
    await kubectl.ok(['create', 'namespace', 'proto-k8s']);
    expect((await kubectl.json(['get', 'namespace', 'proto-k8s'])).metadata.name).toBe('proto-k8s');
  });
});
