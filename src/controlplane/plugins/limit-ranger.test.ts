/**
 * LimitRanger, called directly: defaults filled into containers and init containers, the annotation it
 * writes, the min / max / ratio checks per Container, Pod and PersistentVolumeClaim with the reference's
 * messages, aggregation of several errors, and which requests it leaves alone.
 *
 * LimitRanges are put into storage as given, without the API's LimitRange defaulting (max → default,
 * default → defaultRequest, min → defaultRequest); that is what makes the "No request is specified" and
 * "No limit is specified" cases reachable for Container items here.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/meta.ts';
import { ResourceRegistry, type ResourceType } from '../../api/registry.ts';
import type { AdmissionAttributes, AdmissionPlugin, Operation } from '../admission.ts';
import { ApiError } from '../errors.ts';
import { Storage } from '../storage.ts';
import { limitRanger } from './limit-ranger.ts';

const registry = new ResourceRegistry('orch');
const n = registry.naming;
const pods = registry.resource('', 'v1', 'pods')!;
const pvcs = registry.resource('', 'v1', 'persistentvolumeclaims')!;
const limitRanges = registry.resource('', 'v1', 'limitranges')!;
const NS = 'team';
const ANNOTATION = n.annotations.limitRanger;

type List = Record<string, string>;
interface ContainerSpec {
  name: string;
  resources?: { requests?: List; limits?: List };
  restartPolicy?: string;
}
interface PodSpec {
  containers: ContainerSpec[];
  initContainers?: ContainerSpec[];
}

let storage: Storage;
let plugin: AdmissionPlugin;

beforeEach(() => {
  storage = new Storage();
  plugin = limitRanger(registry, storage, n);
});

function addLimitRange(name: string, limits: object[], namespace = NS): void {
  storage.create(limitRanges, {
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: { name, namespace },
    spec: { limits },
  });
}

const container = (name: string, requests?: List, limits?: List): ContainerSpec => ({
  name,
  resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) },
});

function pod(name: string, containers: ContainerSpec[], initContainers?: ContainerSpec[]): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: { containers, ...(initContainers ? { initContainers } : {}) },
  };
}

function pvc(name: string, requests?: List, limits?: List): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: NS },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) },
    },
  };
}

function attrs(
  rt: ResourceType,
  object: KubeObject,
  operation: Operation = 'CREATE',
  more: Partial<AdmissionAttributes> = {},
) {
  return {
    operation,
    rt,
    namespace: object.metadata.namespace,
    name: object.metadata.name ?? '',
    object,
    user: { username: 'alice', groups: ['system:authenticated'] },
    dryRun: false,
    ...more,
  } satisfies AdmissionAttributes;
}

/** Runs the plugin as the write path does: admit, then validate. */
async function admitAndValidate(a: AdmissionAttributes): Promise<void> {
  await plugin.admit?.(a);
  await plugin.validate?.(a);
}

/** The ApiError the call fails with (fails the test if it succeeds or throws something else). */
async function rejection(run: () => Promise<unknown> | unknown): Promise<ApiError> {
  try {
    await run();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected the request to be rejected');
}

/** Expects a 403 Forbidden for the object with exactly `why` after `is forbidden: `. */
async function expectForbidden(a: AdmissionAttributes, why: string): Promise<void> {
  const err = await rejection(() => admitAndValidate(a));
  expect(err.code).toBe(403);
  expect(err.reason).toBe('Forbidden');
  expect(err.message).toBe(`${a.rt.plural} "${a.name}" is forbidden: ${why}`);
  expect(err.details).toEqual({ name: a.name, kind: a.rt.plural });
}

const specOf = (p: KubeObject) => p.spec as PodSpec;

describe('LimitRanger defaulting', () => {
  beforeEach(() =>
    addLimitRange('defaults', [
      {
        type: 'Container',
        default: { cpu: '500m', memory: '256Mi' },
        defaultRequest: { cpu: '100m', memory: '128Mi' },
      },
    ]),
  );

  it('fills missing requests and limits of containers and init containers, and says so in the annotation', async () => {
    const p = pod(
      'web',
      [{ name: 'app' }, container('side', undefined, { cpu: '1' })],
      [container('setup', { memory: '64Mi' })],
    );
    await admitAndValidate(attrs(pods, p));
    const [app, side] = specOf(p).containers;
    const [setup] = specOf(p).initContainers!;
    expect(app.resources).toEqual({
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { cpu: '500m', memory: '256Mi' },
    });
    // A limit set alone stands in for the request: the default request does not apply to cpu.
    expect(side.resources).toEqual({ requests: { cpu: '1', memory: '128Mi' }, limits: { cpu: '1', memory: '256Mi' } });
    expect(setup.resources).toEqual({
      requests: { memory: '64Mi', cpu: '100m' },
      limits: { cpu: '500m', memory: '256Mi' },
    });
    expect(p.metadata.annotations).toEqual({
      [ANNOTATION]:
        'LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app; ' +
        'memory request for container side; memory limit for container side; ' +
        'cpu request for init container setup; cpu, memory limit for init container setup',
    });
  });

  it('keeps existing annotations next to its own', async () => {
    const p = pod('web', [container('app', { cpu: '200m' }, { cpu: '400m' })]);
    p.metadata.annotations = { team: 'blue' };
    await admitAndValidate(attrs(pods, p));
    expect(p.metadata.annotations).toEqual({
      team: 'blue',
      [ANNOTATION]: 'LimitRanger plugin set: memory request for container app; memory limit for container app',
    });
  });

  it('writes no annotation when nothing was missing', async () => {
    const p = pod('web', [container('app', { cpu: '1', memory: '1Gi' }, { cpu: '2', memory: '1Gi' })]);
    await admitAndValidate(attrs(pods, p));
    expect(specOf(p).containers[0].resources).toEqual({
      requests: { cpu: '1', memory: '1Gi' },
      limits: { cpu: '2', memory: '1Gi' },
    });
    expect(p.metadata.annotations).toBeUndefined();
  });

  it('takes defaults only from Container items, and only from LimitRanges of the pod namespace', async () => {
    addLimitRange('pod-level', [{ type: 'Pod', max: { cpu: '8' } }]);
    addLimitRange('elsewhere', [{ type: 'Container', default: { 'ephemeral-storage': '1Gi' } }], 'other');
    const p = pod('web', [{ name: 'app' }]);
    await admitAndValidate(attrs(pods, p));
    expect(specOf(p).containers[0].resources).toEqual({
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { cpu: '500m', memory: '256Mi' },
    });
  });

  it('lets the first LimitRange that sets a value win', async () => {
    addLimitRange('later', [{ type: 'Container', default: { cpu: '2', 'ephemeral-storage': '1Gi' } }]);
    const p = pod('web', [{ name: 'app' }]);
    await admitAndValidate(attrs(pods, p));
    expect(specOf(p).containers[0].resources?.limits).toEqual({
      cpu: '500m',
      memory: '256Mi',
      'ephemeral-storage': '1Gi',
    });
  });
});

describe('LimitRanger Container checks', () => {
  const containerItem = (item: object) => addLimitRange('limits', [{ type: 'Container', ...item }]);

  it('min: a request at or above the minimum passes', async () => {
    containerItem({ min: { cpu: '200m' } });
    await admitAndValidate(attrs(pods, pod('ok', [container('app', { cpu: '200m' }, { cpu: '1' })])));
  });

  it('min: a request below the minimum', async () => {
    containerItem({ min: { cpu: '200m' } });
    await expectForbidden(
      attrs(pods, pod('small', [container('app', { cpu: '100m' })])),
      'minimum cpu usage per Container is 200m, but request is 100m',
    );
  });

  it("a malformed quantity is the client's error: 400 naming the value, not a crash", async () => {
    containerItem({ min: { cpu: '200m' } });
    const err = await rejection(() => admitAndValidate(attrs(pods, pod('bad', [container('app', { cpu: 'lots' })]))));
    expect(err.code).toBe(400);
    expect(err.reason).toBe('BadRequest');
    expect(err.message).toContain('"lots"');
  });

  it('min: no request', async () => {
    containerItem({ min: { cpu: '200m' } });
    await expectForbidden(
      attrs(pods, pod('none', [container('app', { memory: '1Gi' })])),
      'minimum cpu usage per Container is 200m.  No request is specified',
    );
  });

  it('min: a limit below the minimum (the request being fine)', async () => {
    containerItem({ min: { memory: '128Mi' } });
    await expectForbidden(
      attrs(pods, pod('low-limit', [container('app', { memory: '256Mi' }, { memory: '64Mi' })])),
      'minimum memory usage per Container is 128Mi, but limit is 64Mi',
    );
  });

  it('max: a limit at or below the maximum passes', async () => {
    containerItem({ max: { cpu: '2' } });
    await admitAndValidate(attrs(pods, pod('ok', [container('app', { cpu: '1' }, { cpu: '2' })])));
  });

  it('max: a limit above the maximum', async () => {
    containerItem({ max: { cpu: '2' } });
    await expectForbidden(
      attrs(pods, pod('big', [container('app', { cpu: '1' }, { cpu: '3' })])),
      'maximum cpu usage per Container is 2, but limit is 3',
    );
  });

  it('max: no limit', async () => {
    containerItem({ max: { cpu: '2' } });
    await expectForbidden(
      attrs(pods, pod('unbounded', [container('app', { cpu: '1' })])),
      'maximum cpu usage per Container is 2.  No limit is specified',
    );
  });

  it('max: a request above the maximum (the limit being fine)', async () => {
    containerItem({ max: { cpu: '2' } });
    await expectForbidden(
      attrs(pods, pod('greedy', [container('app', { cpu: '3' }, { cpu: '2' })])),
      'maximum cpu usage per Container is 2, but request is 3',
    );
  });

  it('ratio: limit / request within the ratio passes', async () => {
    containerItem({ maxLimitRequestRatio: { cpu: '2' } });
    await admitAndValidate(attrs(pods, pod('ok', [container('app', { cpu: '500m' }, { cpu: '1' })])));
  });

  it('ratio: above the ratio, printed with six decimals', async () => {
    containerItem({ maxLimitRequestRatio: { cpu: '2' } });
    await expectForbidden(
      attrs(pods, pod('bursty', [container('app', { cpu: '250m' }, { cpu: '1' })])),
      'cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000',
    );
  });

  it('ratio: a fractional ratio prints in canonical form', async () => {
    containerItem({ maxLimitRequestRatio: { memory: '1.5' } });
    await expectForbidden(
      attrs(pods, pod('bursty', [container('app', { memory: '1Gi' }, { memory: '2Gi' })])),
      'memory max limit to request ratio per Container is 1500m, but provided ratio is 2.000000',
    );
  });

  it('ratio: a zero request', async () => {
    containerItem({ maxLimitRequestRatio: { cpu: '2' } });
    await expectForbidden(
      attrs(pods, pod('zero', [container('app', { cpu: '0' }, { cpu: '1' })])),
      'cpu max limit to request ratio per Container is 2, but no request is specified or request is 0',
    );
  });

  it('ratio: no limit', async () => {
    containerItem({ maxLimitRequestRatio: { cpu: '2' } });
    await expectForbidden(
      attrs(pods, pod('nolimit', [container('app', { cpu: '1' })])),
      'cpu max limit to request ratio per Container is 2, but no limit is specified or limit is 0',
    );
  });

  it('checks init containers too', async () => {
    containerItem({ max: { memory: '1Gi' } });
    await expectForbidden(
      attrs(
        pods,
        pod(
          'migrating',
          [container('app', { memory: '512Mi' }, { memory: '512Mi' })],
          [container('migrate', { memory: '2Gi' }, { memory: '2Gi' })],
        ),
      ),
      'maximum memory usage per Container is 1Gi, but limit is 2Gi',
    );
  });

  it('compares values, not spellings: 0.5 equals 500m', async () => {
    containerItem({ min: { cpu: '500m' }, max: { cpu: '0.5' } });
    await admitAndValidate(attrs(pods, pod('exact', [container('app', { cpu: '0.5' }, { cpu: '500m' })])));
  });

  it('reports one failure per constraint: a missing request hides the limit check', async () => {
    containerItem({ min: { cpu: '200m' } });
    // Only the request is reported, as the reference's minConstraint stops at its first failure.
    await expectForbidden(
      attrs(pods, pod('one', [container('app', { cpu: '100m' }, { cpu: '100m' })])),
      'minimum cpu usage per Container is 200m, but request is 100m',
    );
  });
});

describe('LimitRanger Pod checks (aggregate over the containers)', () => {
  const podItem = (item: object) => addLimitRange('limits', [{ type: 'Pod', ...item }]);
  const mem = (name: string, value: string, restartPolicy?: string): ContainerSpec => ({
    ...container(name, { memory: value }, { memory: value }),
    ...(restartPolicy ? { restartPolicy } : {}),
  });

  it('max: the sum of the containers within the maximum passes', async () => {
    podItem({ max: { memory: '1Gi' } });
    await admitAndValidate(attrs(pods, pod('ok', [mem('a', '512Mi'), mem('b', '512Mi')])));
  });

  it('max: the sum of the containers above the maximum', async () => {
    podItem({ max: { memory: '1Gi' } });
    await expectForbidden(
      attrs(pods, pod('big', [mem('a', '512Mi'), mem('b', '768Mi')])),
      'maximum memory usage per Pod is 1Gi, but limit is 1280Mi',
    );
  });

  it('max: an init container larger than the regular containers sets the pod value', async () => {
    podItem({ max: { memory: '1Gi' } });
    await expectForbidden(
      attrs(pods, pod('init', [mem('a', '256Mi')], [mem('migrate', '2Gi')])),
      'maximum memory usage per Pod is 1Gi, but limit is 2Gi',
    );
  });

  it('max: a sidecar (restartable init container) adds to the regular containers', async () => {
    podItem({ max: { memory: '1Gi' } });
    await expectForbidden(
      attrs(pods, pod('sidecar', [mem('a', '512Mi')], [mem('proxy', '768Mi', 'Always')])),
      'maximum memory usage per Pod is 1Gi, but limit is 1280Mi',
    );
  });

  it('max: a sidecar started before an init container counts while that init container runs', async () => {
    podItem({ max: { memory: '1Gi' } });
    await expectForbidden(
      attrs(pods, pod('before', [mem('a', '256Mi')], [mem('proxy', '512Mi', 'Always'), mem('setup', '768Mi')])),
      'maximum memory usage per Pod is 1Gi, but limit is 1280Mi',
    );
  });

  it('max: a sidecar started after an init container does not add to it', async () => {
    podItem({ max: { memory: '1Gi' } });
    // Regular 256Mi + sidecar 512Mi = 768Mi; setup alone needs 768Mi: the pod needs 768Mi.
    await admitAndValidate(
      attrs(pods, pod('after', [mem('a', '256Mi')], [mem('setup', '768Mi'), mem('proxy', '512Mi', 'Always')])),
    );
  });

  it('min: the summed requests below the minimum, and at the minimum', async () => {
    podItem({ min: { cpu: '200m' } });
    await expectForbidden(
      attrs(pods, pod('small', [container('a', { cpu: '100m' }), container('b', { cpu: '50m' })])),
      'minimum cpu usage per Pod is 200m, but request is 150m',
    );
    await admitAndValidate(
      attrs(pods, pod('enough', [container('a', { cpu: '100m' }), container('b', { cpu: '100m' })])),
    );
  });

  it('min: no container requests the resource', async () => {
    podItem({ min: { cpu: '200m' } });
    await expectForbidden(
      attrs(pods, pod('none', [container('a', { memory: '1Gi' })])),
      'minimum cpu usage per Pod is 200m.  No request is specified',
    );
  });

  it('max: no container limits the resource', async () => {
    podItem({ max: { cpu: '4' } });
    await expectForbidden(
      attrs(pods, pod('none', [container('a', { cpu: '1' })])),
      'maximum cpu usage per Pod is 4.  No limit is specified',
    );
  });

  it('ratio: over the summed limits and requests', async () => {
    podItem({ maxLimitRequestRatio: { memory: '2' } });
    await expectForbidden(
      attrs(
        pods,
        pod('bursty', [
          container('a', { memory: '256Mi' }, { memory: '512Mi' }),
          container('b', { memory: '256Mi' }, { memory: '1Gi' }),
        ]),
      ),
      'memory max limit to request ratio per Pod is 2, but provided ratio is 3.000000',
    );
    await admitAndValidate(attrs(pods, pod('steady', [container('a', { memory: '256Mi' }, { memory: '512Mi' })])));
  });
});

describe('LimitRanger PersistentVolumeClaim checks', () => {
  beforeEach(() =>
    addLimitRange('storage', [{ type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '10Gi' } }]),
  );

  it('a request within min and max passes, and the claim is not changed', async () => {
    const claim = pvc('data', { storage: '5Gi' });
    const before = structuredClone(claim);
    await admitAndValidate(attrs(pvcs, claim));
    expect(claim).toEqual(before);
  });

  it('a request below the minimum', async () => {
    await expectForbidden(
      attrs(pvcs, pvc('tiny', { storage: '500Mi' })),
      'minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi',
    );
  });

  it('a request above the maximum', async () => {
    await expectForbidden(
      attrs(pvcs, pvc('huge', { storage: '20Gi' })),
      'maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi',
    );
  });

  it('no request: both bounds fail, aggregated', async () => {
    await expectForbidden(
      attrs(pvcs, pvc('empty')),
      '[minimum storage usage per PersistentVolumeClaim is 1Gi.  No request is specified, ' +
        'maximum storage usage per PersistentVolumeClaim is 10Gi.  No request is specified]',
    );
  });

  it('limits are not looked at', async () => {
    await admitAndValidate(attrs(pvcs, pvc('limited', { storage: '5Gi' }, { storage: '50Gi' })));
  });

  it('an update is checked too', async () => {
    const old = pvc('grow', { storage: '5Gi' });
    await expectForbidden(
      attrs(pvcs, pvc('grow', { storage: '20Gi' }), 'UPDATE', { oldObject: old }),
      'maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi',
    );
  });

  it('an update of a claim that is being deleted is skipped', async () => {
    const old = pvc('going', { storage: '5Gi' });
    old.metadata.deletionTimestamp = '2025-01-01T00:00:00Z';
    await admitAndValidate(attrs(pvcs, pvc('going', { storage: '20Gi' }), 'UPDATE', { oldObject: old }));
  });
});

describe('LimitRanger errors and scope', () => {
  it('aggregates several errors of one LimitRange as [a, b]', async () => {
    addLimitRange('limits', [{ type: 'Container', min: { cpu: '200m' }, max: { memory: '1Gi' } }]);
    await expectForbidden(
      attrs(pods, pod('both', [container('app', { cpu: '100m', memory: '512Mi' }, { cpu: '1', memory: '2Gi' })])),
      '[minimum cpu usage per Container is 200m, but request is 100m, ' +
        'maximum memory usage per Container is 1Gi, but limit is 2Gi]',
    );
  });

  it('prints the same error from two containers once, without brackets', async () => {
    addLimitRange('limits', [{ type: 'Container', min: { cpu: '200m' } }]);
    await expectForbidden(
      attrs(pods, pod('twins', [container('a', { cpu: '100m' }), container('b', { cpu: '100m' })])),
      'minimum cpu usage per Container is 200m, but request is 100m',
    );
  });

  it('combines Container and Pod items of one LimitRange', async () => {
    addLimitRange('limits', [
      { type: 'Container', max: { cpu: '1' } },
      { type: 'Pod', max: { cpu: '1500m' } },
    ]);
    await expectForbidden(
      attrs(
        pods,
        pod('wide', [container('a', { cpu: '1' }, { cpu: '1' }), container('b', { cpu: '1' }, { cpu: '1' })]),
      ),
      'maximum cpu usage per Pod is 1500m, but limit is 2',
    );
  });

  it('rejects with the errors of the first LimitRange that has any', async () => {
    addLimitRange('a-loose', [{ type: 'Container', max: { cpu: '4' } }]);
    addLimitRange('b-memory', [{ type: 'Container', max: { memory: '128Mi' } }]);
    addLimitRange('c-cpu', [{ type: 'Container', max: { cpu: '1' } }]);
    await expectForbidden(
      attrs(pods, pod('web', [container('app', { cpu: '2', memory: '1Gi' }, { cpu: '2', memory: '1Gi' })])),
      'maximum memory usage per Container is 128Mi, but limit is 1Gi',
    );
  });

  it('ignores item types that do not apply to the object', async () => {
    addLimitRange('limits', [
      { type: 'PersistentVolumeClaim', max: { storage: '1Gi' } },
      { type: 'example.com/gpu', max: { 'example.com/gpu': '1' } },
    ]);
    await admitAndValidate(attrs(pods, pod('web', [container('app', { cpu: '1' })])));
    addLimitRange('more', [{ type: 'Container', max: { storage: '100Mi' } }]);
    await admitAndValidate(attrs(pvcs, pvc('data', { storage: '512Mi' })));
  });

  it('skips pod updates: no defaults, no checks', async () => {
    addLimitRange('limits', [
      { type: 'Container', max: { cpu: '1' }, default: { cpu: '1' }, defaultRequest: { cpu: '1' } },
    ]);
    const old = pod('web', [container('app', { cpu: '2' }, { cpu: '2' })]);
    const next = pod('web', [container('app', { cpu: '2' }, { cpu: '2' }), { name: 'extra' }]);
    next.metadata.labels = { tier: 'web' };
    const before = structuredClone(next);
    await admitAndValidate(attrs(pods, next, 'UPDATE', { oldObject: old }));
    expect(next).toEqual(before);
  });

  it('skips subresources', async () => {
    addLimitRange('limits', [{ type: 'PersistentVolumeClaim', max: { storage: '1Gi' } }]);
    const old = pvc('data', { storage: '5Gi' });
    await admitAndValidate(
      attrs(pvcs, pvc('data', { storage: '5Gi' }), 'UPDATE', { oldObject: old, subresource: 'status' }),
    );
  });

  it('does nothing for pods in a namespace without LimitRanges, beyond limits standing in for requests', async () => {
    addLimitRange('limits', [{ type: 'Container', max: { cpu: '1' } }], 'other');
    const p = pod('web', [container('app', undefined, { cpu: '8' })]);
    await admitAndValidate(attrs(pods, p));
    expect(specOf(p).containers[0].resources).toEqual({ requests: { cpu: '8' }, limits: { cpu: '8' } });
    expect(p.metadata.annotations).toBeUndefined();
  });
});
