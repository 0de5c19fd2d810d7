/**
 * The admission chain end to end: real HTTPS requests to the embedded control plane (admin and other
 * client-certificate identities), showing the status codes, reasons and messages of LimitRanger,
 * RuntimeClass, DefaultIngressClass and the certificates plugins, what the admitted objects look like
 * when stored, and that a rejected write stores nothing.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webcryptoRequest } from '../controllers/certificates/testing.ts';
import type { KubeObject } from '../src/api/meta.ts';
import { group } from '../src/api/naming.ts';
import { KubeClient } from '../src/client/client.ts';
import { StatusError } from '../src/client/errors.ts';
import { KubeConfig } from '../src/client/kubeconfig.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { failure } from './support/status-error.ts';

let c: TestCluster;
/** When set, the control plane's clock stands still there (creation timestamps in the IngressClass tests). */
let frozenAt: number | undefined;

beforeAll(async () => {
  c = await startTestCluster({ now: () => new Date(frozenAt ?? Date.now()) });
});

afterAll(async () => {
  await c?.stop();
});

function expectStatus(err: StatusError, code: number, reason: string, message: string): void {
  expect({ code: err.code, reason: err.reason, message: err.message }).toEqual({ code, reason, message });
}

const res = <T extends KubeObject = KubeObject>(kind: string) => c.client.kind<T>(kind);

async function namespace(name: string): Promise<void> {
  await res('Namespace').create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

/** Whether the object exists (404 → false). */
async function exists(kind: string, ns: string | undefined, name: string): Promise<boolean> {
  try {
    await res(kind).get(ns, name);
    return true;
  } catch (err) {
    if (err instanceof StatusError && err.code === 404) return false;
    throw err;
  }
}

/** A client authenticated as `username` in `groups` with a client certificate from the cluster CA. */
async function clientAs(username: string, groups: string[]): Promise<KubeClient> {
  const path = await c.cp.writeIdentityKubeconfig(join(c.dir, `${username.replaceAll(':', '_')}.kubeconfig`), {
    username,
    groups,
  });
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return new KubeClient(kc, c.cp.registry, { qps: 0, maxRetries: 0 });
}

type List = Record<string, string>;
const ctr = (name: string, requests?: List, limits?: List) => ({
  name,
  image: 'registry.example.com/app:1',
  resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) },
});
const podObject = (ns: string, name: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: ns },
  spec,
});

describe('LimitRanger', () => {
  const NS = 'limits';

  beforeAll(async () => {
    await namespace(NS);
    await res('LimitRange').create({
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'limits', namespace: NS },
      spec: {
        limits: [
          {
            type: 'Container',
            min: { cpu: '100m' },
            max: { cpu: '2', memory: '1Gi' },
            default: { cpu: '500m', memory: '256Mi' },
            defaultRequest: { cpu: '250m', memory: '128Mi' },
          },
          { type: 'Pod', max: { memory: '1536Mi' } },
          { type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '10Gi' } },
        ],
      },
    });
  });

  const pod = (name: string, containers: object[], initContainers?: object[]) =>
    podObject(NS, name, { containers, ...(initContainers ? { initContainers } : {}) });
  const pvc = (name: string, storage: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: NS },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } },
  });

  it('fills defaults into containers and init containers and annotates the pod', async () => {
    const created = await res('Pod').create(pod('defaulted', [ctr('app')], [ctr('setup', undefined, { cpu: '1' })]));
    const stored = await res('Pod').get(NS, 'defaulted');
    expect(stored.spec).toEqual(created.spec);
    const spec = stored.spec as { containers: { resources: object }[]; initContainers: { resources: object }[] };
    expect(spec.containers[0].resources).toEqual({
      requests: { cpu: '250m', memory: '128Mi' },
      limits: { cpu: '500m', memory: '256Mi' },
    });
    expect(spec.initContainers[0].resources).toEqual({
      requests: { cpu: '1', memory: '128Mi' },
      limits: { cpu: '1', memory: '256Mi' },
    });
    expect(stored.metadata.annotations).toEqual({
      [c.cp.registry.naming.annotations.limitRanger]:
        'LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app; ' +
        'memory request for init container setup; memory limit for init container setup',
    });
  });

  it('refuses a container over its maximum with 403 and stores nothing', async () => {
    const err = await failure(res('Pod').create(pod('too-big', [ctr('app', { cpu: '1' }, { cpu: '3' })])));
    expectStatus(
      err,
      403,
      'Forbidden',
      'pods "too-big" is forbidden: maximum cpu usage per Container is 2, but limit is 3',
    );
    // The reference omits an empty `group` from details; this server sends `group: ""` (errors.ts `forbidden`).
    expect(err.status?.details).toMatchObject({ name: 'too-big', kind: 'pods' });
    expect(await exists('Pod', NS, 'too-big')).toBe(false);
  });

  it('refuses a pod whose containers together exceed the Pod maximum', async () => {
    const err = await failure(
      res('Pod').create(
        pod('crowded', [ctr('a', undefined, { memory: '1Gi' }), ctr('b', undefined, { memory: '1Gi' })]),
      ),
    );
    expectStatus(
      err,
      403,
      'Forbidden',
      'pods "crowded" is forbidden: maximum memory usage per Pod is 1536Mi, but limit is 2Gi',
    );
    expect(await exists('Pod', NS, 'crowded')).toBe(false);
  });

  it('aggregates the errors of the LimitRange', async () => {
    const err = await failure(res('Pod').create(pod('both', [ctr('app', { cpu: '50m' }, { memory: '2Gi' })])));
    expectStatus(
      err,
      403,
      'Forbidden',
      'pods "both" is forbidden: [minimum cpu usage per Container is 100m, but request is 50m, ' +
        'maximum memory usage per Container is 1Gi, but limit is 2Gi, ' +
        'maximum memory usage per Pod is 1536Mi, but limit is 2Gi]',
    );
  });

  it('refuses a dry run the same way', async () => {
    const err = await failure(
      res('Pod').create(pod('dry', [ctr('app', { cpu: '1' }, { cpu: '3' })]), { dryRun: true }),
    );
    expectStatus(
      err,
      403,
      'Forbidden',
      'pods "dry" is forbidden: maximum cpu usage per Container is 2, but limit is 3',
    );
  });

  it('checks PersistentVolumeClaims on create and update; a refused update leaves the claim as it was', async () => {
    const err = await failure(res('PersistentVolumeClaim').create(pvc('huge', '20Gi')));
    expectStatus(
      err,
      403,
      'Forbidden',
      'persistentvolumeclaims "huge" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi',
    );
    expect(await exists('PersistentVolumeClaim', NS, 'huge')).toBe(false);

    const small = await failure(res('PersistentVolumeClaim').create(pvc('small', '100Mi')));
    expectStatus(
      small,
      403,
      'Forbidden',
      'persistentvolumeclaims "small" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 100Mi',
    );

    const created = await res('PersistentVolumeClaim').create(pvc('data', '5Gi'));
    const grown = structuredClone(created);
    (grown.spec as any).resources.requests.storage = '20Gi';
    const update = await failure(res('PersistentVolumeClaim').replace(grown));
    expectStatus(
      update,
      403,
      'Forbidden',
      'persistentvolumeclaims "data" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi',
    );
    const stored = await res('PersistentVolumeClaim').get(NS, 'data');
    expect(stored.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect((stored.spec as any).resources.requests).toEqual({ storage: '5Gi' });
  });

  it('does not check pod updates: a pod from before a stricter LimitRange can still be relabelled', async () => {
    const ns = 'limits-later';
    await namespace(ns);
    const big = await res('Pod').create(
      podObject(ns, 'early', { containers: [ctr('app', { cpu: '4' }, { cpu: '4' })] }),
    );
    await res('LimitRange').create({
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'strict', namespace: ns },
      spec: { limits: [{ type: 'Container', max: { cpu: '1' } }] },
    });
    const patched = await res('Pod').patch(ns, 'early', { metadata: { labels: { tier: 'web' } } }, 'merge');
    expect(patched.metadata.labels).toEqual({ tier: 'web' });
    expect(patched.spec).toEqual(big.spec);
    const err = await failure(
      res('Pod').create(podObject(ns, 'late', { containers: [ctr('app', { cpu: '4' }, { cpu: '4' })] })),
    );
    expectStatus(
      err,
      403,
      'Forbidden',
      'pods "late" is forbidden: maximum cpu usage per Container is 1, but limit is 4',
    );
  });

  it('never sees a LimitRange the API refuses as Invalid', async () => {
    const err = await failure(
      res('LimitRange').create({
        apiVersion: 'v1',
        kind: 'LimitRange',
        metadata: { name: 'bad', namespace: NS },
        spec: { limits: [{ type: 'Pod', default: { cpu: '1' } }] },
      }),
    );
    expectStatus(
      err,
      422,
      'Invalid',
      'LimitRange "bad" is invalid: spec.limits[0].default: Forbidden: may not be specified when `type` is \'Pod\'',
    );
    expect(err.causes.map((cause) => cause.field)).toEqual(['spec.limits[0].default']);
    expect(await exists('LimitRange', NS, 'bad')).toBe(false);
  });
});

describe('RuntimeClass', () => {
  const NS = 'sandboxed';
  const nodeGroup = () => group(c.cp.registry.naming, 'node');
  const toleration = { key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' };

  beforeAll(async () => {
    await namespace(NS);
    await res('RuntimeClass').create({
      apiVersion: `${nodeGroup()}/v1`,
      kind: 'RuntimeClass',
      metadata: { name: 'kata' },
      handler: 'kata',
      overhead: { podFixed: { cpu: '250m', memory: '120Mi' } },
      scheduling: { nodeSelector: { sandbox: 'kata' }, tolerations: [toleration] },
    } as KubeObject);
  });

  const pod = (name: string, spec: Record<string, unknown>) =>
    podObject(NS, name, { containers: [ctr('app')], runtimeClassName: 'kata', ...spec });

  it('stores the pod with the class overhead, merged node selector and merged tolerations', async () => {
    await res('Pod').create(pod('sandboxed', { nodeSelector: { disk: 'ssd' }, tolerations: [{ ...toleration }] }));
    const stored = await res('Pod').get(NS, 'sandboxed');
    expect(stored.spec).toMatchObject({
      overhead: { cpu: '250m', memory: '120Mi' },
      nodeSelector: { disk: 'ssd', sandbox: 'kata' },
      // The pod's own (with the not-ready and unreachable ones DefaultTolerationSeconds added), the class's merged in.
      tolerations: [
        toleration,
        ...['not-ready', 'unreachable'].map((taint) => ({
          key: `node.orch.io/${taint}`,
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        })),
      ],
    });
  });

  it('refuses a pod naming a missing class', async () => {
    const err = await failure(res('Pod').create(pod('lost', { runtimeClassName: 'missing' })));
    expectStatus(err, 403, 'Forbidden', 'pods "lost" is forbidden: pod rejected: RuntimeClass "missing" not found');
    expect(await exists('Pod', NS, 'lost')).toBe(false);
  });

  it('refuses a conflicting node selector', async () => {
    const err = await failure(res('Pod').create(pod('clash', { nodeSelector: { sandbox: 'gvisor' } })));
    expectStatus(
      err,
      403,
      'Forbidden',
      'pods "clash" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = kata; pod.spec.nodeSelector[sandbox] = gvisor',
    );
    expect(await exists('Pod', NS, 'clash')).toBe(false);
  });

  it('refuses an overhead other than the class one', async () => {
    const err = await failure(res('Pod').create(pod('heavy', { overhead: { cpu: '1' } })));
    expectStatus(
      err,
      403,
      'Forbidden',
      "pods \"heavy\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
    );
  });

  it('refuses an overhead without a RuntimeClass', async () => {
    const err = await failure(
      res('Pod').create(podObject(NS, 'classless', { containers: [ctr('app')], overhead: { cpu: '100m' } })),
    );
    expectStatus(
      err,
      403,
      'Forbidden',
      'pods "classless" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead',
    );
    expect(await exists('Pod', NS, 'classless')).toBe(false);
  });
});

describe('DefaultIngressClass', () => {
  const NS = 'web';
  const networking = () => group(c.cp.registry.naming, 'networking');
  const IS_DEFAULT = () => c.cp.registry.naming.annotations.defaultIngressClass;

  beforeAll(async () => {
    await namespace(NS);
  });

  afterAll(() => {
    frozenAt = undefined;
  });

  async function ingressClass(name: string, at: string, isDefault?: string): Promise<void> {
    frozenAt = Date.parse(at);
    await res('IngressClass').create({
      apiVersion: `${networking()}/v1`,
      kind: 'IngressClass',
      metadata: { name, ...(isDefault === undefined ? {} : { annotations: { [IS_DEFAULT()]: isDefault } }) },
      spec: { controller: `example.com/${name}` },
    });
    frozenAt = undefined;
  }

  async function ingress(name: string, spec: Record<string, unknown> = {}, annotations?: List) {
    await res('Ingress').create({
      apiVersion: `${networking()}/v1`,
      kind: 'Ingress',
      metadata: { name, namespace: NS, ...(annotations ? { annotations } : {}) },
      spec: { rules: [{ host: `${name}.example.com` }], ...spec },
    });
    return ((await res('Ingress').get(NS, name)).spec as { ingressClassName?: string }).ingressClassName;
  }

  it('walks through no default, one, several, ties, and ingresses that opt out', async () => {
    await ingressClass('plain', '2030-01-01T00:00:00Z');
    await ingressClass('shouty', '2030-06-01T00:00:00Z', 'True');
    expect(await ingress('none')).toBeUndefined();

    await ingressClass('first', '2030-02-01T00:00:00Z', 'true');
    expect(await ingress('one')).toBe('first');

    await ingressClass('second', '2030-03-01T00:00:00Z', 'true');
    expect(await ingress('newest')).toBe('second');

    await ingressClass('zz-tie', '2030-04-01T00:00:00Z', 'true');
    await ingressClass('aa-tie', '2030-04-01T00:00:00Z', 'true');
    expect(await ingress('tie')).toBe('aa-tie');

    expect(await ingress('explicit', { ingressClassName: 'plain' })).toBe('plain');
    expect(await ingress('empty', { ingressClassName: '' })).toBe('');
    expect(
      await ingress('legacy', {}, { [c.cp.registry.naming.annotations.legacyIngressClass]: 'nginx' }),
    ).toBeUndefined();
  });

  it('does not default on update', async () => {
    const created = await res('Ingress').get(NS, 'none');
    const updated = await res('Ingress').replace({
      ...created,
      metadata: { ...created.metadata, labels: { touched: 'yes' } },
    });
    expect(updated.metadata.labels).toEqual({ touched: 'yes' });
    expect((updated.spec as { ingressClassName?: string }).ingressClassName).toBeUndefined();
  });
});

describe('certificates', () => {
  const SIGNER = 'example.com/widgets';
  const certificates = () => group(c.cp.registry.naming, 'certificates');
  const rbac = () => group(c.cp.registry.naming, 'rbac.authorization');
  let carol: KubeClient;

  async function clusterRole(name: string, rules: object[], groupName: string): Promise<void> {
    await res('ClusterRole').create({ apiVersion: `${rbac()}/v1`, kind: 'ClusterRole', metadata: { name }, rules });
    await res('ClusterRoleBinding').create({
      apiVersion: `${rbac()}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: rbac(), kind: 'ClusterRole', name },
      subjects: [{ kind: 'Group', apiGroup: rbac(), name: groupName }],
    } as KubeObject);
  }

  async function csrObject(name: string, signerName: string, organizations: string[]): Promise<KubeObject> {
    const { pem } = await webcryptoRequest('ECDSA-P256', { commonName: name, organizations });
    return {
      apiVersion: `${certificates()}/v1`,
      kind: 'CertificateSigningRequest',
      metadata: { name },
      spec: {
        request: Buffer.from(pem).toString('base64'),
        signerName,
        usages: ['digital signature', 'client auth'],
        username: 'forged',
        groups: ['forged-group'],
      },
    };
  }

  const approved = (csr: KubeObject): KubeObject => ({
    ...csr,
    status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Checked', message: 'by carol' }] },
  });

  beforeAll(async () => {
    // Carol may write approvals, statuses and trust bundles, but holds no verb on any signer yet.
    await clusterRole(
      'widget-operators',
      [
        { apiGroups: [certificates()], resources: ['certificatesigningrequests'], verbs: ['get', 'list'] },
        {
          apiGroups: [certificates()],
          resources: ['certificatesigningrequests/approval', 'certificatesigningrequests/status'],
          verbs: ['update'],
        },
        { apiGroups: [certificates()], resources: ['clustertrustbundles'], verbs: ['create', 'get'] },
      ],
      'widget-operators',
    );
    carol = await clientAs('carol', ['widget-operators']);
  });

  it('records the creator in the spec, whatever the client sent', async () => {
    await res('CertificateSigningRequest').create(await csrObject('widget-1', SIGNER, ['widgets']));
    const stored = await res('CertificateSigningRequest').get(undefined, 'widget-1');
    expect((stored.spec as any).username).toBe('admin');
    expect((stored.spec as any).groups).toEqual(['system:masters', 'system:authenticated']);
  });

  it('refuses an approval by a user without approve on the signer, and changes nothing', async () => {
    const csr = await res('CertificateSigningRequest').get(undefined, 'widget-1');
    const err = await failure(carol.kind('CertificateSigningRequest').replaceApproval(approved(csr)));
    expectStatus(
      err,
      403,
      'Forbidden',
      `certificatesigningrequests.${certificates()} "widget-1" is forbidden: user not permitted to approve requests with signerName "${SIGNER}"`,
    );
    const after = await res('CertificateSigningRequest').get(undefined, 'widget-1');
    expect(after.metadata.resourceVersion).toBe(csr.metadata.resourceVersion);
    expect((after.status as any)?.conditions ?? []).toEqual([]);
  });

  it('an approval without the RBAC right on the subresource is refused by authorization first', async () => {
    const dave = await clientAs('dave', []);
    const csr = await res('CertificateSigningRequest').get(undefined, 'widget-1');
    const err = await failure(dave.kind('CertificateSigningRequest').replaceApproval(approved(csr)));
    expectStatus(
      err,
      403,
      'Forbidden',
      `certificatesigningrequests.${certificates()} "widget-1" is forbidden: User "dave" cannot update resource "certificatesigningrequests/approval" in API group "${certificates()}" at the cluster scope`,
    );
  });

  it('accepts the approval once the user may approve for the <domain>/* wildcard', async () => {
    await clusterRole(
      'widget-approvers',
      [{ apiGroups: [certificates()], resources: ['signers'], resourceNames: ['example.com/*'], verbs: ['approve'] }],
      'widget-operators',
    );
    const csr = await res('CertificateSigningRequest').get(undefined, 'widget-1');
    const result = await carol.kind('CertificateSigningRequest').replaceApproval(approved(csr));
    expect((result.status as any).conditions.map((x: { type: string }) => x.type)).toEqual(['Approved']);
  });

  it('refuses issuing a certificate without sign on the signer', async () => {
    const csr = await res('CertificateSigningRequest').get(undefined, 'widget-1');
    const issued = {
      ...csr,
      status: { ...(csr.status as object), certificate: Buffer.from(c.cp.caPem).toString('base64') },
    };
    const err = await failure(carol.kind('CertificateSigningRequest').replaceStatus(issued));
    expectStatus(
      err,
      403,
      'Forbidden',
      `certificatesigningrequests.${certificates()} "widget-1" is forbidden: user not permitted to sign requests with signerName "${SIGNER}"`,
    );
    const after = await res('CertificateSigningRequest').get(undefined, 'widget-1');
    expect((after.status as any).certificate).toBeUndefined();
  });

  it('refuses a request for system:masters to the API-server client signer', async () => {
    const signer = c.cp.registry.naming.signers.apiServerClient;
    const err = await failure(
      res('CertificateSigningRequest').create(await csrObject('escalate', signer, ['system:masters'])),
    );
    expectStatus(
      err,
      403,
      'Forbidden',
      `certificatesigningrequests.${certificates()} "escalate" is forbidden: use of ${signer} signer with system:masters group is not allowed`,
    );
    expect(await exists('CertificateSigningRequest', undefined, 'escalate')).toBe(false);
  });

  it('refuses a signer-bound trust bundle without attest, then accepts it with attest', async () => {
    const bundle = {
      apiVersion: `${certificates()}/v1`,
      kind: 'ClusterTrustBundle',
      metadata: { name: 'example.com:widgets:ca' },
      spec: { signerName: SIGNER, trustBundle: c.cp.caPem },
    };
    const err = await failure(carol.kind('ClusterTrustBundle').create(bundle));
    expectStatus(
      err,
      403,
      'Forbidden',
      `clustertrustbundles.${certificates()} "example.com:widgets:ca" is forbidden: user not permitted to attest for signerName "${SIGNER}"`,
    );
    expect(await exists('ClusterTrustBundle', undefined, 'example.com:widgets:ca')).toBe(false);

    await clusterRole(
      'widget-attesters',
      [{ apiGroups: [certificates()], resources: ['signers'], resourceNames: [SIGNER], verbs: ['attest'] }],
      'widget-operators',
    );
    await carol.kind('ClusterTrustBundle').create(bundle);
    expect(await exists('ClusterTrustBundle', undefined, 'example.com:widgets:ca')).toBe(true);
  });
});
