/**
 * @kubernetes/client-node's typed APIs (CoreV1Api, AppsV1Api, CertificatesV1Api, PolicyV1Api, VersionApi, Watch,
 * PatchStrategy) against the embedded plane with the daemon's controllers, in both flavors: the checks of the
 * Python client suite. The typed CertificatesV1Api's paths are fixed to certificates.k8s.io; in the orch flavor a
 * middleware (the client's own extension point) moves its requests to certificates.orch.io.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ApiException,
  AppsV1Api,
  CertificatesV1Api,
  type ConfigurationOptions,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  PolicyV1Api,
  type RequestContext,
  type ResponseContext,
  setHeaderOptions,
  type V1CertificateSigningRequest,
  type V1Pod,
  VersionApi,
  Watch,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webcryptoRequest } from '../../controllers/certificates/testing.ts';
import { FLAVORS, type FlavorName, group } from '../../src/api/naming.ts';
import { eventually } from '../support/eventually.ts';
import { type ClientPlane, startClientPlane } from './plane.ts';

/** The status code and message of the ApiException a call throws (code undefined: it threw none). */
async function refusal(call: () => Promise<unknown>): Promise<{ code?: number; message: string }> {
  try {
    await call();
    return { message: '' };
  } catch (err) {
    if (!(err instanceof ApiException)) throw err;
    const body = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
    return { code: err.code, message: body?.message ?? '' };
  }
}

describe.each(FLAVORS)('@kubernetes/client-node, %s flavor', (flavor: FlavorName) => {
  let plane: ClientPlane;
  let clientNode: KubeConfig;
  let core: CoreV1Api;
  const ns = `node-${flavor}`;
  const pod = (name: string, labels: Record<string, string>): V1Pod => ({
    metadata: { name, labels },
    spec: { containers: [{ name: 'c', image: 'app:1' }] },
  });

  beforeAll(async () => {
    plane = await startClientPlane(flavor);
    clientNode = new KubeConfig();
    clientNode.loadFromFile(plane.c.kubeconfig);
    core = clientNode.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: ns } } });
  });

  afterAll(() => plane?.stop());

  it('creates, lists and reads a namespace', async () => {
    const names = (await core.listNamespace()).items.map((n) => n.metadata?.name);
    expect(names).toEqual(expect.arrayContaining(['default', ns]));
    const read = await core.readNamespace({ name: ns });
    expect(read.status?.phase).toBe('Active');
    expect(read.metadata?.labels).toEqual({ [plane.c.cp.registry.naming.labels.metadataName]: ns });
  });

  it('ConfigMap create, replace, merge / strategic / JSON patches, list and delete', async () => {
    const name = 'cm';
    const created = await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name, labels: { app: 'node' } }, data: { a: '1' } },
    });
    expect(created.metadata?.resourceVersion).toBeTruthy();
    const replaced = await core.replaceNamespacedConfigMap({
      name,
      namespace: ns,
      body: { ...created, data: { a: '1', b: '2' } },
    });
    expect(replaced.data).toEqual({ a: '1', b: '2' });
    const patch = (body: object, strategy: PatchStrategy) =>
      core.patchNamespacedConfigMap({ name, namespace: ns, body }, setHeaderOptions('Content-Type', strategy));
    expect((await patch({ data: { c: '3' } }, PatchStrategy.StrategicMergePatch)).data).toEqual({
      a: '1',
      b: '2',
      c: '3',
    });
    expect((await patch({ data: { b: null, d: '4' } }, PatchStrategy.MergePatch)).data).toEqual({
      a: '1',
      c: '3',
      d: '4',
    });
    expect((await patch([{ op: 'replace', path: '/data/a', value: '10' }], PatchStrategy.JsonPatch)).data).toEqual({
      a: '10',
      c: '3',
      d: '4',
    });
    const listed = await core.listNamespacedConfigMap({ namespace: ns, labelSelector: 'app=node' });
    expect(listed.items.map((i) => i.metadata?.name)).toEqual([name]);
    await core.deleteNamespacedConfigMap({ name, namespace: ns });
    expect((await refusal(() => core.readNamespacedConfigMap({ name, namespace: ns }))).code).toBe(404);
  });

  it('a pod Watch from a resourceVersion, with timeoutSeconds and bookmarks allowed, sees every change', async () => {
    const since = (await core.listNamespacedPod({ namespace: ns })).metadata?.resourceVersion;
    await core.createNamespacedPod({ namespace: ns, body: pod('watched', { app: 'watched' }) });
    const change = async () => {
      await core.patchNamespacedPod(
        { name: 'watched', namespace: ns, body: { metadata: { labels: { step: 'two' } } } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );
      await core.deleteNamespacedPod({ name: 'watched', namespace: ns, gracePeriodSeconds: 0 });
    };
    let changed: Promise<void> | undefined;
    const seen: [string, string | undefined, string | undefined][] = [];
    const started = performance.now();
    let abort: AbortController | undefined;
    const ended = new Promise<unknown>((done) => {
      new Watch(clientNode)
        .watch(
          `/api/v1/namespaces/${ns}/pods`,
          { resourceVersion: since, timeoutSeconds: 10, allowWatchBookmarks: true },
          (type, obj: V1Pod) => {
            if (type !== 'BOOKMARK') seen.push([type, obj.metadata?.name, obj.metadata?.labels?.step]);
            // The ADDED event replays the create from `since`; the changes made once it arrived come live.
            if (type === 'ADDED') changed = change();
            if (type === 'DELETED') abort?.abort();
          },
          done,
        )
        .then((a) => {
          abort = a;
        }, done);
    });
    await ended;
    await changed;
    expect(seen).toEqual([
      ['ADDED', 'watched', undefined],
      ['MODIFIED', 'watched', 'two'],
      // As kube-apiserver: an unbound pod's delete writes its deletion marks first, then removes it.
      ['MODIFIED', 'watched', 'two'],
      ['DELETED', 'watched', 'two'],
    ]);
    // It ended on the DELETED event, not at the server's timeout.
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('a CSR is approved through the approval subresource, issued, and verifies against the cluster CA', async () => {
    const certs = clientNode.makeApiClient(CertificatesV1Api);
    const certGroup = group(plane.c.cp.registry.naming, 'certificates');
    // The typed paths name certificates.k8s.io; the orch flavor serves the group as certificates.orch.io. The
    // object API runs middleware as its Observable stub does: a result with toPromise().
    const resolved = <T>(value: T) => ({ toPromise: () => Promise.resolve(value) });
    const options = {
      middlewareMergeStrategy: 'append',
      middleware: [
        {
          pre: (ctx: RequestContext) => {
            ctx.setUrl(ctx.getUrl().replace('/apis/certificates.k8s.io/', `/apis/${certGroup}/`));
            return resolved(ctx);
          },
          post: (rsp: ResponseContext) => resolved(rsp),
        },
      ],
    } as unknown as ConfigurationOptions;
    const name = `node-${flavor}`;
    const { pem } = await webcryptoRequest('ECDSA-P256', { commonName: 'client-node-user', organizations: ['x'] });
    await certs.createCertificateSigningRequest(
      {
        body: {
          apiVersion: `${certGroup}/v1`,
          kind: 'CertificateSigningRequest',
          metadata: { name },
          spec: {
            request: Buffer.from(pem).toString('base64'),
            signerName: plane.c.cp.registry.naming.signers.apiServerClient,
            usages: ['digital signature', 'client auth'],
            expirationSeconds: 3600,
          },
        },
      },
      options,
    );
    const current: V1CertificateSigningRequest = await certs.readCertificateSigningRequest({ name }, options);
    current.status = {
      ...current.status,
      conditions: [{ type: 'Approved', status: 'True', reason: 'ClientNode', message: 'approved by client-node' }],
    };
    const approved = await certs.replaceCertificateSigningRequestApproval({ name, body: current }, options);
    expect(approved.status?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Approved', 'True', 'ClientNode'],
    ]);
    const issued = await eventually(
      async () => (await certs.readCertificateSigningRequest({ name }, options)).status?.certificate,
      20_000,
      'status.certificate',
      200,
    );
    const certPem = Buffer.from(issued, 'base64').toString();
    writeFileSync(join(plane.c.dir, 'node-leaf.pem'), certPem);
    writeFileSync(join(plane.c.dir, 'node-ca.pem'), plane.c.cp.caPem);
    const verify = spawnSync(
      'openssl',
      ['verify', '-purpose', 'sslclient', '-CAfile', 'node-ca.pem', 'node-leaf.pem'],
      { cwd: plane.c.dir, encoding: 'utf8', timeout: 10_000 },
    );
    expect(`${verify.stdout}${verify.stderr}`.trim()).toBe('node-leaf.pem: OK');
  });

  it('an eviction is admitted while the budget allows it, then refused with 429', async () => {
    const policy = clientNode.makeApiClient(PolicyV1Api);
    const labels = { app: 'budgeted' };
    for (const name of ['b-0', 'b-1']) {
      await core.createNamespacedPod({ namespace: ns, body: pod(name, labels) });
      await core.patchNamespacedPodStatus(
        {
          name,
          namespace: ns,
          body: { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );
    }
    const created = await policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: { metadata: { name: 'budget' }, spec: { minAvailable: 1, selector: { matchLabels: labels } } },
    });
    expect(created.status?.disruptionsAllowed).toBe(0);
    await eventually(
      async () =>
        (await policy.readNamespacedPodDisruptionBudget({ name: 'budget', namespace: ns })).status
          ?.disruptionsAllowed === 1,
      20_000,
      'the budget allowing one disruption',
      200,
    );
    const evict = (name: string) =>
      core.createNamespacedPodEviction({ name, namespace: ns, body: { metadata: { name, namespace: ns } } });
    expect(await refusal(() => evict('b-0'))).toEqual({ message: '' });
    expect(await refusal(() => evict('b-1'))).toEqual({
      code: 429,
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
    });
  });

  it('server-side apply: a second manager conflicts (409), then takes the field with force', async () => {
    const apply = (fieldManager: string, value: string, force?: boolean) =>
      core.patchNamespacedConfigMap(
        {
          name: 'applied',
          namespace: ns,
          fieldManager,
          force,
          body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied' }, data: { k: value } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
      );
    expect((await apply('node-a', '1')).data).toEqual({ k: '1' });
    const conflict = await refusal(() => apply('node-b', '2'));
    expect(conflict.code).toBe(409);
    expect(conflict.message).toMatch(/conflict with "node-a"/);
    const forced = await apply('node-b', '2', true);
    expect(forced.data).toEqual({ k: '2' });
    expect(forced.metadata?.managedFields?.map((m) => m.manager)).toEqual(['node-b']);
  });

  it('VersionApi.getCode reads every field', async () => {
    const v = await clientNode.makeApiClient(VersionApi).getCode();
    expect(v.major).toMatch(/^\d+$/);
    expect(v.minor).toMatch(/^\d+\+?$/);
    expect(v.gitVersion).toMatch(/^v\d+\.\d+\.\d+/);
    expect(v.platform).toMatch(/^linux\//);
    expect(Number.isNaN(Date.parse(v.buildDate))).toBe(false);
  });

  it("listNamespacedEvent (core/v1) sees the StatefulSet controller's SuccessfulCreate", async () => {
    const labels = { app: 'web' };
    const set = await clientNode.makeApiClient(AppsV1Api).createNamespacedStatefulSet({
      namespace: ns,
      body: {
        metadata: { name: 'web' },
        spec: {
          serviceName: 'web',
          replicas: 1,
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'web:1' }] } },
        },
      },
    });
    expect(set.status?.replicas).toBe(0);
    const event = await eventually(
      async () =>
        (await core.listNamespacedEvent({ namespace: ns })).items.find(
          (e) => e.involvedObject.name === 'web' && e.reason === 'SuccessfulCreate',
        ),
      20_000,
      'a SuccessfulCreate event of the StatefulSet',
      200,
    );
    expect(event).toMatchObject({ involvedObject: { kind: 'StatefulSet' }, type: 'Normal' });
    expect(event.message).toMatch(/Create Pod web-0 in StatefulSet web successful/);
  });
});
