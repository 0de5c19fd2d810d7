/**
 * kubectl's typed generators send their request bodies as Kubernetes protobuf
 * (`application/vnd.kubernetes.protobuf`) and ask for protobuf answers: every `kubectl create <subcommand>`
 * whose resource is served here, and `certificate approve|deny`. The `rbac.authorization` and `networking`
 * generators are wired to the reference's group names, so they run in the kubernetes flavor. These run the real kubectl against the embedded control plane and check
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

  it('kubectl create serviceaccount, with a protobuf answer', async () => {
    const created = await kubectl.run(['create', 'serviceaccount', 'robot', '-n', NS, '-v=8']);
    expect(created.stdout).toContain('serviceaccount/robot created');
    // The request and the answer (decoded by kubectl to print the line above) are both protobuf.
    expect(created.stderr.match(/Content-Type: application\/vnd\.kubernetes\.protobuf/g)).toHaveLength(2);
    expect((await kubectl.json(['get', 'serviceaccount', 'robot', '-n', NS])).metadata).toMatchObject({
      name: 'robot',
    });
  });

  it.each([
    ['poddisruptionbudget', '--min-available=50%', { minAvailable: '50%' }],
    ['pdb', '--max-unavailable=1', { maxUnavailable: 1 }],
  ])('kubectl create %s %s', async (command, flag, bound) => {
    const name = `budget-${command}`;
    await kubectl.ok(['create', command, name, '-n', NS, '--selector=app=web', flag]);
    const pdb = await kubectl.json(['get', 'pdb', name, '-n', NS]);
    expect(pdb.spec).toEqual({ selector: { matchLabels: { app: 'web' } }, ...bound });
  });

  it('kubectl create secret docker-registry', async () => {
    await kubectl.ok([
      'create',
      'secret',
      'docker-registry',
      'pull',
      '-n',
      NS,
      '--docker-server=registry.example.com',
      '--docker-username=u',
      '--docker-password=p',
    ]);
    const secret = await kubectl.json(['get', 'secret', 'pull', '-n', NS]);
    expect(secret.type).toBe('kubernetes.io/dockerconfigjson');
    const config = JSON.parse(Buffer.from(secret.data['.dockerconfigjson'], 'base64').toString());
    expect(config.auths['registry.example.com']).toMatchObject({ username: 'u', password: 'p' });
  });

  it.each([
    [
      'clusterip',
      ['--tcp=80:8080'],
      { type: 'ClusterIP', ports: [expect.objectContaining({ port: 80, targetPort: 8080 })] },
    ],
    [
      'nodeport',
      ['--tcp=443:8443'],
      { type: 'NodePort', ports: [expect.objectContaining({ port: 443, targetPort: 8443 })] },
    ],
    ['loadbalancer', ['--tcp=53:5353'], { type: 'LoadBalancer' }],
    ['externalname', ['--external-name=db.example.com'], { type: 'ExternalName', externalName: 'db.example.com' }],
  ])('kubectl create service %s', async (type, flags, spec) => {
    await kubectl.ok(['create', 'service', type, `svc-${type}`, '-n', NS, ...flags]);
    expect((await kubectl.json(['get', 'service', `svc-${type}`, '-n', NS])).spec).toMatchObject(spec);
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

  it('kubectl create role and rolebinding', async () => {
    await kubectl.ok(['create', 'role', 'reader', '-n', 'proto-k8s', '--verb=get,list', '--resource=pods,configmaps']);
    const role = await kubectl.json(['get', 'role', 'reader', '-n', 'proto-k8s']);
    expect(role.rules).toEqual([{ apiGroups: [''], resources: ['pods', 'configmaps'], verbs: ['get', 'list'] }]);
    await kubectl.ok([
      'create',
      'rolebinding',
      'reader-bob',
      '-n',
      'proto-k8s',
      '--role=reader',
      '--user=bob',
      '--serviceaccount=proto-k8s:robot',
    ]);
    const binding = await kubectl.json(['get', 'rolebinding', 'reader-bob', '-n', 'proto-k8s']);
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' });
    expect(binding.subjects).toEqual([
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'bob' },
      { kind: 'ServiceAccount', name: 'robot', namespace: 'proto-k8s' },
    ]);
  });

  it('kubectl create clusterrole (with an aggregation rule) and clusterrolebinding', async () => {
    await kubectl.ok(['create', 'clusterrole', 'node-reader', '--verb=get', '--resource=nodes', '--resource-name=n1']);
    expect((await kubectl.json(['get', 'clusterrole', 'node-reader'])).rules).toEqual([
      { apiGroups: [''], resources: ['nodes'], resourceNames: ['n1'], verbs: ['get'] },
    ]);
    await kubectl.ok(['create', 'clusterrole', 'monitoring', '--aggregation-rule=rbac.example.com/aggregate=true']);
    expect((await kubectl.json(['get', 'clusterrole', 'monitoring'])).aggregationRule).toEqual({
      clusterRoleSelectors: [{ matchLabels: { 'rbac.example.com/aggregate': 'true' } }],
    });
    await kubectl.ok(['create', 'clusterrolebinding', 'node-reader-ops', '--clusterrole=node-reader', '--group=ops']);
    expect((await kubectl.json(['get', 'clusterrolebinding', 'node-reader-ops'])).subjects).toEqual([
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'ops' },
    ]);
  });

  it('kubectl create ingress', async () => {
    await kubectl.ok(['create', 'ingress', 'web', '-n', 'proto-k8s', '--rule=example.com/app*=web:80']);
    const ingress = await kubectl.json(['get', 'ingress', 'web', '-n', 'proto-k8s']);
    expect(ingress.spec.rules).toEqual([
      {
        host: 'example.com',
        http: {
          paths: [{ path: '/app', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }],
        },
      },
    ]);
  });

  it('kubectl create serviceaccount and pdb work in this flavor as well', async () => {
    await kubectl.ok(['create', 'serviceaccount', 'robot', '-n', 'proto-k8s']);
    await kubectl.ok(['create', 'pdb', 'budget', '-n', 'proto-k8s', '--selector=app=web', '--min-available=1']);
    expect((await kubectl.json(['get', 'pdb', 'budget', '-n', 'proto-k8s'])).spec.minAvailable).toBe(1);
  });
});
