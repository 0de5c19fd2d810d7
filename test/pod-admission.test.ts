/**
 * A pod's life on the embedded control plane (kubernetes flavor) as kube-apiserver v1.37 answers it, through real
 * HTTPS requests as the admin: the ServiceAccount, Priority and DefaultTolerationSeconds admission of a create and
 * its QoS class; the `default` ServiceAccount every namespace gets; what a pod update may change; binding a pod to a
 * node; the graceful delete of a pod no node runs; and an events.k8s.io duplicate named after its own group.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject, WatchEvent } from '../src/api/meta.ts';
import { group } from '../src/api/naming.ts';
import type { Pod, PodSpec } from '../src/api/types/core.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { eventually } from './support/eventually.ts';
import { failure } from './support/status-error.ts';

let c: TestCluster;
const NS = 'pods-admitted';
const MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

beforeAll(async () => {
  c = await startTestCluster({ flavor: 'kubernetes' });
  await c.client.kind('Namespace').create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
});

afterAll(async () => {
  await c?.stop();
});

type AdmittedPod = Pod & { spec: PodSpec };
const pods = () => c.client.kind<AdmittedPod>('Pod');
const accounts = () => c.client.kind('ServiceAccount');

function pod(name: string, spec: Partial<PodSpec> = {}, namespace = NS): AdmittedPod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace },
    spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }], ...spec },
  } as AdmittedPod;
}

describe('pod create admission', () => {
  it('gives a new namespace its default ServiceAccount, with no controller running', async () => {
    const account = await eventually(
      () =>
        accounts()
          .get(NS, 'default')
          .catch(() => undefined),
      5_000,
    );
    expect(account.metadata.name).toBe('default');
  });

  it('fills in the account, its token volume and mounts, default tolerations, priority and QoS class', async () => {
    const created = await pods().create(
      pod('filled', { initContainers: [{ name: 'setup', image: 'registry.example/setup:1' }] }),
    );
    const spec = created.spec;
    expect([spec.serviceAccountName, spec.serviceAccount]).toEqual(['default', 'default']);
    expect(spec.volumes).toHaveLength(1);
    const volume = spec.volumes![0];
    expect(volume.name).toMatch(/^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(volume.projected).toEqual({
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        {
          downwardAPI: {
            items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
          },
        },
      ],
    });
    const mount = { name: volume.name, readOnly: true, mountPath: MOUNT };
    expect([spec.initContainers![0].volumeMounts, spec.containers[0].volumeMounts]).toEqual([[mount], [mount]]);
    expect(spec.tolerations).toEqual(
      ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'].map((key) => ({
        key,
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 300,
      })),
    );
    expect([spec.priority, spec.preemptionPolicy]).toEqual([0, 'PreemptLowerPriority']);
    expect(created.status?.qosClass).toBe('BestEffort');
    // What was stored is what was answered.
    expect((await pods().get(NS, 'filled')).spec).toEqual(spec);
  });

  it('mounts no token when the pod or its account says so, the pod deciding first', async () => {
    await accounts().create({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'quiet', namespace: NS },
      automountServiceAccountToken: false,
    } as KubeObject);
    const bySa = await pods().create(pod('by-account', { serviceAccountName: 'quiet' }));
    const byPod = await pods().create(pod('by-pod', { automountServiceAccountToken: false }));
    const podWins = await pods().create(
      pod('pod-wins', { serviceAccountName: 'quiet', automountServiceAccountToken: true }),
    );
    expect([bySa.spec.volumes, byPod.spec.volumes, podWins.spec.volumes?.length]).toEqual([undefined, undefined, 1]);
    // The deprecated field names the account when the current one is empty.
    const legacy = await pods().create(pod('legacy', { serviceAccount: 'quiet' }));
    expect([legacy.spec.serviceAccountName, legacy.spec.serviceAccount]).toEqual(['quiet', 'quiet']);
  });

  it('leaves a container that mounts something at the token path alone', async () => {
    const created = await pods().create(
      pod('own-mount', {
        containers: [
          { name: 'mine', image: 'i:1', volumeMounts: [{ name: 'own', mountPath: MOUNT }] },
          { name: 'other', image: 'i:1' },
        ],
        volumes: [{ name: 'own', emptyDir: {} }],
      }),
    );
    const [mine, other] = created.spec.containers;
    expect(mine.volumeMounts).toEqual([{ name: 'own', mountPath: MOUNT }]);
    expect(other.volumeMounts?.[0].mountPath).toBe(MOUNT);
    expect(created.spec.volumes?.map((v) => v.name.replace(/-[a-z0-9]{5}$/, ''))).toEqual(['own', 'kube-api-access']);
  });

  it('refuses a pod whose account does not exist, as 403 Forbidden', async () => {
    const err = await failure(pods().create(pod('lost', { serviceAccountName: 'absent' })));
    expect([err.code, err.reason, err.message]).toEqual([
      403,
      'Forbidden',
      `pods "lost" is forbidden: error looking up service account ${NS}/absent: serviceaccount "absent" not found`,
    ]);
  });

  it("waits for a namespace's default account: one made meanwhile admits the pod, none refuses it (403)", async () => {
    const [late, missing] = ['default-comes-late', 'without-default'];
    for (const ns of [late, missing]) {
      await c.client.kind('Namespace').create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      await eventually(
        () =>
          accounts()
            .get(ns, 'default')
            .catch(() => undefined),
        5_000,
      );
      await accounts().delete(ns, 'default');
    }
    const admitted = pods().create(pod('waited', {}, late));
    const refused = failure(pods().create(pod('orphan', {}, missing)));
    // The reference looks again for a while, for its controller to make the account.
    await new Promise((r) => setTimeout(r, 200));
    await accounts().create({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'default', namespace: late },
    });
    expect((await admitted).spec.serviceAccountName).toBe('default');
    const err = await refused;
    expect([err.code, err.message]).toEqual([
      403,
      `pods "orphan" is forbidden: error looking up service account ${missing}/default: serviceaccount "default" not found`,
    ]);
  });

  it('takes the priority of the system classes, refuses unknown classes and a priority of its own', async () => {
    const critical = await pods().create(pod('critical', { priorityClassName: 'system-node-critical' }));
    expect([critical.spec.priority, critical.spec.preemptionPolicy]).toEqual([2000001000, 'PreemptLowerPriority']);
    const unknown = await failure(pods().create(pod('unknown', { priorityClassName: 'gold' })));
    expect([unknown.code, unknown.message]).toEqual([
      403,
      'pods "unknown" is forbidden: no PriorityClass with name gold was found',
    ]);
    const own = await failure(pods().create(pod('own', { priority: 7 })));
    expect([own.code, own.message]).toEqual([
      403,
      'pods "own" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name',
    ]);
  });

  it('adds no default toleration that the pod already has', async () => {
    const all = await pods().create(pod('tolerates-all', { tolerations: [{ operator: 'Exists' }] }));
    expect(all.spec.tolerations).toEqual([{ operator: 'Exists' }]);
    const notReady = { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' } as const;
    const one = await pods().create(pod('tolerates-one', { tolerations: [notReady] }));
    expect(one.spec.tolerations?.map((t) => [t.key, t.tolerationSeconds])).toEqual([
      ['node.kubernetes.io/not-ready', undefined],
      ['node.kubernetes.io/unreachable', 300],
    ]);
  });

  it.each([
    ['nothing', 'qos-none', {}, 'BestEffort'],
    ['requests only', 'qos-requests', { requests: { cpu: '100m' } }, 'Burstable'],
    [
      'equal requests and limits',
      'qos-equal',
      { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } },
      'Guaranteed',
    ],
    [
      'limits only (requests default to them)',
      'qos-limits',
      { limits: { cpu: '500m', memory: '128Mi' } },
      'Guaranteed',
    ],
    ['a cpu limit only', 'qos-cpu-limit', { limits: { cpu: '500m' } }, 'Burstable'],
  ])('computes the QoS class of a pod with %s', async (_, name, resources, qos) => {
    const created = await pods().create(pod(name, { containers: [{ name: 'app', image: 'i:1', resources }] }));
    expect(created.status?.qosClass).toBe(qos);
  });

  it('keeps the QoS class when a status write leaves it out', async () => {
    const created = await pods().create(pod('status-writer'));
    const written = await pods().replaceStatus({ ...created, status: { phase: 'Pending' } });
    expect(written.status?.qosClass).toBe('BestEffort');
  });
});

describe('pod updates', () => {
  it('lets an update change images, add tolerations and keep what admission set', async () => {
    const created = await pods().create(pod('mutable'));
    const toleration = { key: 'dedicated', operator: 'Equal', value: 'x', effect: 'NoSchedule' } as const;
    const spec = {
      ...created.spec,
      containers: [{ ...created.spec.containers[0], image: 'registry.example/app:2' }],
      tolerations: [...(created.spec.tolerations ?? []), toleration],
    };
    const updated = await pods().replace({ ...created, spec });
    expect(updated.spec.containers[0].image).toBe('registry.example/app:2');
    expect(updated.spec.tolerations).toHaveLength(3);
    // A write that leaves out the default tolerations and the priority keeps them.
    const { priority: _p, preemptionPolicy: _pp, tolerations: _t, ...rest } = updated.spec;
    const again = await pods().replace({
      ...updated,
      metadata: { ...updated.metadata, labels: { a: 'b' } },
      spec: { ...rest, tolerations: [toleration] },
    });
    expect([again.spec.priority, again.spec.tolerations?.length, again.metadata.labels]).toEqual([0, 3, { a: 'b' }]);
  });

  it('refuses any other spec change, and a change of an existing toleration, as 422 Invalid', async () => {
    const created = await pods().create(pod('immutable', { tolerations: [{ key: 'k', operator: 'Exists' }] }));
    const withPort = {
      ...created.spec,
      containers: [{ ...created.spec.containers[0], ports: [{ containerPort: 80 }] }],
      tolerations: created.spec.tolerations?.slice(1),
    };
    const err = await failure(pods().replace({ ...created, spec: withPort }));
    expect([err.code, err.reason]).toEqual([422, 'Invalid']);
    expect(err.causes.map((cause) => [cause.reason, cause.field])).toEqual([
      ['FieldValueForbidden', 'spec.tolerations'],
      ['FieldValueForbidden', 'spec'],
    ]);
    expect(err.causes[1].message).toBe(
      'Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
    );
    expect(err.message).toMatch(/^Pod "immutable" is invalid: \[spec\.tolerations: Forbidden: existing toleration/);
    // A strategic merge patch is judged on its result alike.
    const patched = await failure(
      pods().patch(
        NS,
        'immutable',
        { spec: { containers: [{ name: 'app', ports: [{ containerPort: 80 }] }] } },
        'strategic',
      ),
    );
    expect([patched.code, patched.causes.map((cause) => cause.field)]).toEqual([422, ['spec']]);
  });
});

describe('pod binding', () => {
  const bind = (name: string, target: object, metadata: object = {}, query = '') =>
    c.client.request<KubeObject>('POST', `/api/v1/namespaces/${NS}/pods/${name}/binding${query}`, {
      body: { apiVersion: 'v1', kind: 'Binding', metadata: { name, ...metadata }, target },
    });

  it("assigns the node, merges the binding's metadata, marks the pod scheduled and clears its nomination", async () => {
    await pods().create({ ...pod('bound'), metadata: { name: 'bound', namespace: NS, labels: { app: 'web' } } });
    await pods().patchStatus(NS, 'bound', { status: { nominatedNodeName: 'node-b' } }, 'merge');
    const answer = await bind(
      'bound',
      { kind: 'Node', name: 'node-a' },
      { annotations: { note: 'placed' }, labels: { zone: 'z1' } },
    );
    expect([answer.status, answer.body]).toEqual([
      201,
      { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 },
    ]);
    const bound = await pods().get(NS, 'bound');
    expect(bound.spec.nodeName).toBe('node-a');
    expect(bound.metadata.annotations).toEqual({ note: 'placed' });
    expect(bound.metadata.labels).toEqual({ app: 'web', zone: 'z1' });
    expect(bound.status?.nominatedNodeName).toBeUndefined();
    expect(bound.status?.conditions?.find((cond) => cond.type === 'PodScheduled')?.status).toBe('True');

    const again = await failure(bind('bound', { name: 'node-b' }));
    expect([again.code, again.reason, again.message]).toEqual([
      409,
      'Conflict',
      'Operation cannot be fulfilled on pods/binding "bound": pod bound is already assigned to node "node-a"',
    ]);
  });

  it("refuses an update that sets an unbound pod's node, as 422 Invalid", async () => {
    const created = await pods().create(pod('self-placed'));
    const err = await failure(pods().replace({ ...created, spec: { ...created.spec, nodeName: 'node-a' } }));
    expect([err.code, err.causes.map((cause) => cause.field)]).toEqual([422, ['spec']]);
  });

  it("refuses a bad target, a name that is not the URL's, a missing pod and a stale uid, and writes nothing on a dry run", async () => {
    await pods().create(pod('waiting'));
    const invalid = await failure(bind('waiting', { kind: 'Pod', name: 'Not_A_Node' }));
    expect([invalid.code, invalid.causes.map((cause) => [cause.reason, cause.field])]).toEqual([
      422,
      [['FieldValueNotSupported', 'target.kind']],
    ]);
    const unnamed = await failure(bind('waiting', { kind: 'Node' }));
    expect(unnamed.message).toBe('Binding "waiting" is invalid: target.name: Required value');
    const mismatch = await failure(
      c.client.request('POST', `/api/v1/namespaces/${NS}/pods/waiting/binding`, {
        body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'other' }, target: { name: 'node-a' } },
      }),
    );
    expect([mismatch.code, mismatch.message]).toEqual([400, 'name in URL does not match name in Binding object']);
    expect((await failure(bind('absent', { name: 'node-a' }))).code).toBe(404);
    const stale = await failure(bind('waiting', { name: 'node-a' }, { uid: 'not-its-uid' }));
    expect([stale.code, stale.reason]).toEqual([409, 'Conflict']);
    expect(stale.message).toMatch(
      /^Operation cannot be fulfilled on pods "waiting": Precondition failed: UID in precondition: not-its-uid/,
    );

    expect((await bind('waiting', { name: 'node-a' }, {}, '?dryRun=All')).status).toBe(201);
    expect((await pods().get(NS, 'waiting')).spec.nodeName).toBeUndefined();
  });
});

describe('pod delete', () => {
  it('answers a pod no node runs with its deletion marks, written before it goes', async () => {
    const created = await pods().create(pod('unbound'));
    const seen: WatchEvent<AdmittedPod>[] = [];
    const abort = new AbortController();
    const watching = pods().watch(
      NS,
      { resourceVersion: created.metadata.resourceVersion, fieldSelector: 'metadata.name=unbound' },
      (e) => void seen.push(e),
      abort.signal,
    );
    const answer = (await pods().delete(NS, 'unbound')) as AdmittedPod;
    expect(answer.kind).toBe('Pod');
    expect(answer.metadata.deletionTimestamp).toBeDefined();
    expect([answer.metadata.deletionGracePeriodSeconds, answer.metadata.generation]).toEqual([0, 2]);
    await eventually(() => seen.length >= 2, 5_000);
    abort.abort();
    await watching.catch(() => undefined);
    expect(seen.map((e) => [e.type, e.object.metadata.deletionGracePeriodSeconds])).toEqual([
      ['MODIFIED', 0],
      ['DELETED', 0],
    ]);
    expect((await failure(pods().get(NS, 'unbound'))).code).toBe(404);
  });
});

describe('events.k8s.io', () => {
  it("names its own resource in a duplicate's AlreadyExists", async () => {
    const n = c.cp.registry.naming;
    const events = c.client.resource(c.cp.registry.resource(group(n, 'events'), 'v1', 'events')!);
    const event = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'twice', namespace: NS },
      eventTime: '2026-11-28T00:00:00.000000Z',
      reportingController: 'example.com/test',
      reportingInstance: 'test-1',
      action: 'Test',
      reason: 'Tested',
      type: 'Normal',
      regarding: { kind: 'Pod', namespace: NS, name: 'filled' },
    };
    await events.create(event as KubeObject);
    const err = await failure(events.create(event as KubeObject));
    expect([err.code, err.reason, err.message, err.status?.details]).toEqual([
      409,
      'AlreadyExists',
      'events.events.k8s.io "twice" already exists',
      { name: 'twice', group: 'events.k8s.io', kind: 'events' },
    ]);
  });
});
