/**
 * RuntimeClass admission, called directly: the class must exist, its overhead is copied into the pod
 * (a different one is refused), its node selector is merged (a conflict is refused), its tolerations are
 * merged by the reference's superset rules, and a pod overhead without a class overhead is refused.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/meta.ts';
import { group } from '../../api/naming.ts';
import { ResourceRegistry } from '../../api/registry.ts';
import type { AdmissionAttributes, AdmissionPlugin, Operation } from '../admission.ts';
import { ApiError } from '../errors.ts';
import { Storage } from '../storage.ts';
import { mergeTolerations, runtimeClassAdmission, type Toleration } from './runtime-class.ts';

const registry = new ResourceRegistry('orch');
const n = registry.naming;
const pods = registry.resource('', 'v1', 'pods')!;
const runtimeClasses = registry.resource(group(n, 'node'), 'v1', 'runtimeclasses')!;

interface PodSpec {
  runtimeClassName?: string;
  overhead?: Record<string, string>;
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
  containers: { name: string }[];
}

let storage: Storage;
let plugin: AdmissionPlugin;

beforeEach(() => {
  storage = new Storage();
  plugin = runtimeClassAdmission(registry, storage, n);
});

function addRuntimeClass(name: string, fields: object = {}): void {
  storage.create(runtimeClasses, {
    apiVersion: `${group(n, 'node')}/v1`,
    kind: 'RuntimeClass',
    metadata: { name },
    handler: name,
    ...fields,
  } as KubeObject);
}

function pod(name: string, spec: Partial<PodSpec> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { containers: [{ name: 'app' }], ...spec },
  };
}

const specOf = (p: KubeObject) => p.spec as PodSpec;

function attrs(object: KubeObject, operation: Operation = 'CREATE', more: Partial<AdmissionAttributes> = {}) {
  return {
    operation,
    rt: pods,
    namespace: object.metadata.namespace,
    name: object.metadata.name ?? '',
    object,
    user: { username: 'alice', groups: ['system:authenticated'] },
    dryRun: false,
    ...more,
  } satisfies AdmissionAttributes;
}

async function admitAndValidate(a: AdmissionAttributes): Promise<void> {
  await plugin.admit?.(a);
  await plugin.validate?.(a);
}

async function rejection(run: () => Promise<unknown> | unknown): Promise<ApiError> {
  try {
    await run();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected the request to be rejected');
}

function expectForbidden(err: ApiError, name: string, why: string): void {
  expect(err.code).toBe(403);
  expect(err.reason).toBe('Forbidden');
  expect(err.message).toBe(`pods "${name}" is forbidden: ${why}`);
  expect(err.details).toEqual({ name, kind: 'pods' });
}

const OVERHEAD = { cpu: '250m', memory: '120Mi' };

describe('RuntimeClass lookup', () => {
  it('refuses a pod naming a RuntimeClass that does not exist', async () => {
    const err = await rejection(() => admitAndValidate(attrs(pod('web', { runtimeClassName: 'x' }))));
    expectForbidden(err, 'web', 'pod rejected: RuntimeClass "x" not found');
  });

  it('accepts a pod naming an existing class without overhead or scheduling, unchanged', async () => {
    addRuntimeClass('runc');
    const p = pod('web', { runtimeClassName: 'runc', nodeSelector: { disk: 'ssd' } });
    const before = structuredClone(p);
    await admitAndValidate(attrs(p));
    expect(p).toEqual(before);
  });

  it('only looks at pod creations (not updates, not subresources)', async () => {
    const p = pod('web', { runtimeClassName: 'x' });
    await admitAndValidate(attrs(p, 'UPDATE', { oldObject: pod('web', { runtimeClassName: 'x' }) }));
    await admitAndValidate(attrs(p, 'CREATE', { subresource: 'binding' }));
  });
});

describe('RuntimeClass overhead', () => {
  beforeEach(() => addRuntimeClass('kata', { overhead: { podFixed: OVERHEAD } }));

  it('copies the class overhead into a pod that has none', async () => {
    const p = pod('web', { runtimeClassName: 'kata' });
    await admitAndValidate(attrs(p));
    expect(specOf(p).overhead).toEqual(OVERHEAD);
  });

  it('accepts a pod overhead equal to the class one, compared as quantities', async () => {
    const p = pod('web', { runtimeClassName: 'kata', overhead: { cpu: '0.25', memory: '120Mi' } });
    await admitAndValidate(attrs(p));
    expect(specOf(p).overhead).toEqual(OVERHEAD);
  });

  it('refuses a pod overhead that differs from the class one', async () => {
    const p = pod('web', { runtimeClassName: 'kata', overhead: { cpu: '1' } });
    const err = await rejection(() => admitAndValidate(attrs(p)));
    expectForbidden(err, 'web', "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
    expect(specOf(p).overhead).toEqual({ cpu: '1' });
  });

  it('validation alone also refuses an overhead that differs from the class one', async () => {
    const p = pod('web', { runtimeClassName: 'kata', overhead: { cpu: '250m', memory: '1Gi' } });
    const err = await rejection(() => plugin.validate?.(attrs(p)));
    expectForbidden(err, 'web', "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
  });

  it('refuses a pod overhead without any RuntimeClass', async () => {
    const err = await rejection(() => admitAndValidate(attrs(pod('web', { overhead: { cpu: '100m' } }))));
    expectForbidden(err, 'web', 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
  });

  it('refuses a pod overhead when the class defines none', async () => {
    addRuntimeClass('runc');
    const p = pod('web', { runtimeClassName: 'runc', overhead: { cpu: '100m' } });
    const err = await rejection(() => admitAndValidate(attrs(p)));
    expectForbidden(err, 'web', 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
  });
});

describe('RuntimeClass node selector', () => {
  beforeEach(() => addRuntimeClass('kata', { scheduling: { nodeSelector: { sandbox: 'kata', arch: 'amd64' } } }));

  it('gives a pod without a node selector the class one', async () => {
    const p = pod('web', { runtimeClassName: 'kata' });
    await admitAndValidate(attrs(p));
    expect(specOf(p).nodeSelector).toEqual({ sandbox: 'kata', arch: 'amd64' });
  });

  it('merges the class selector into the pod one; equal values are no conflict', async () => {
    const p = pod('web', { runtimeClassName: 'kata', nodeSelector: { disk: 'ssd', arch: 'amd64' } });
    await admitAndValidate(attrs(p));
    expect(specOf(p).nodeSelector).toEqual({ disk: 'ssd', sandbox: 'kata', arch: 'amd64' });
  });

  it('refuses a pod whose selector gives a class key another value', async () => {
    const p = pod('web', { runtimeClassName: 'kata', nodeSelector: { sandbox: 'gvisor' } });
    const err = await rejection(() => admitAndValidate(attrs(p)));
    expectForbidden(
      err,
      'web',
      'conflict: runtimeClass.scheduling.nodeSelector[sandbox] = kata; pod.spec.nodeSelector[sandbox] = gvisor',
    );
    expect(specOf(p).nodeSelector).toEqual({ sandbox: 'gvisor' });
  });
});

describe('RuntimeClass tolerations (superset merge)', () => {
  const admitWith = async (podTolerations: Toleration[] | undefined, classTolerations: Toleration[] | undefined) => {
    addRuntimeClass('kata', { scheduling: { ...(classTolerations ? { tolerations: classTolerations } : {}) } });
    const p = pod('web', { runtimeClassName: 'kata', ...(podTolerations ? { tolerations: podTolerations } : {}) });
    await admitAndValidate(attrs(p));
    return specOf(p).tolerations;
  };
  const sandbox: Toleration = { key: 'sandbox', operator: 'Equal', value: 'kata', effect: 'NoSchedule' };

  it('appends the class tolerations after the pod ones', async () => {
    const own: Toleration = { key: 'team', operator: 'Equal', value: 'blue', effect: 'NoSchedule' };
    expect(await admitWith([own], [sandbox])).toEqual([own, sandbox]);
  });

  it('gives a pod without tolerations the class ones', async () => {
    expect(await admitWith(undefined, [sandbox])).toEqual([sandbox]);
  });

  it('keeps an exact duplicate once (the first occurrence)', async () => {
    expect(await admitWith([sandbox], [{ ...sandbox }])).toEqual([sandbox]);
  });

  it('treats an absent field and an empty one as the same toleration', async () => {
    const bare: Toleration = { key: 'sandbox', operator: 'Exists' };
    expect(await admitWith([bare], [{ key: 'sandbox', operator: 'Exists', effect: '' }])).toEqual([bare]);
  });

  it('lets a wildcard Exists (no key) cover every other toleration', async () => {
    const wildcard: Toleration = { operator: 'Exists' };
    const own: Toleration[] = [
      { key: 'team', operator: 'Exists' },
      { key: 'gpu', operator: 'Equal', value: 'true', effect: 'NoExecute', tolerationSeconds: 30 },
    ];
    expect(await admitWith(own, [wildcard])).toEqual([wildcard]);
  });

  it('lets a wildcard with an effect cover only that effect', async () => {
    const noSchedule: Toleration = { operator: 'Exists', effect: 'NoSchedule' };
    const own: Toleration[] = [sandbox, { key: 'gpu', operator: 'Exists', effect: 'NoExecute' }];
    expect(await admitWith(own, [noSchedule])).toEqual([own[1], noSchedule]);
  });

  it('lets a key with Exists cover Equal tolerations of that key', async () => {
    const anyValue: Toleration = { key: 'sandbox', operator: 'Exists' };
    expect(await admitWith([sandbox], [anyValue])).toEqual([anyValue]);
  });

  it('keeps Equal tolerations with different values apart', async () => {
    const gvisor: Toleration = { ...sandbox, value: 'gvisor' };
    expect(await admitWith([sandbox], [gvisor])).toEqual([sandbox, gvisor]);
  });

  it('treats an empty operator as Equal, not as Exists', async () => {
    const emptyOp: Toleration = { key: 'sandbox', operator: '', value: 'kata' };
    const other: Toleration = { key: 'sandbox', operator: 'Equal', value: 'gvisor' };
    expect(await admitWith([other], [emptyOp])).toEqual([other, emptyOp]);
  });

  describe('NoExecute with tolerationSeconds', () => {
    const unreachable = (tolerationSeconds?: number): Toleration => ({
      key: 'node.orch.io/unreachable',
      operator: 'Exists',
      effect: 'NoExecute',
      ...(tolerationSeconds === undefined ? {} : { tolerationSeconds }),
    });

    it('covers a shorter or equal tolerationSeconds', async () => {
      expect(await admitWith([unreachable(60)], [unreachable(300)])).toEqual([unreachable(300)]);
    });

    it('is covered by a longer tolerationSeconds, whichever comes first', async () => {
      expect(await admitWith([unreachable(600)], [unreachable(300)])).toEqual([unreachable(600)]);
      expect(mergeTolerations([unreachable(300)], [unreachable(600)])).toEqual([unreachable(600)]);
    });

    it('does not cover a toleration without tolerationSeconds, which covers it instead', async () => {
      expect(await admitWith([unreachable(300)], [unreachable()])).toEqual([unreachable()]);
      expect(mergeTolerations([unreachable()], [unreachable(300)])).toEqual([unreachable()]);
    });
  });

  it('merges the pod tolerations among themselves too whenever the class has scheduling', async () => {
    expect(await admitWith([sandbox, { ...sandbox }], undefined)).toEqual([sandbox]);
  });

  it('leaves the tolerations alone when the class has no scheduling', async () => {
    addRuntimeClass('plain');
    const p = pod('web', { runtimeClassName: 'plain', tolerations: [sandbox, { ...sandbox }] });
    await admitAndValidate(attrs(p));
    expect(specOf(p).tolerations).toEqual([sandbox, sandbox]);
  });
});

describe('RuntimeClass everything at once', () => {
  it('sets overhead, node selector and tolerations of one pod', async () => {
    const toleration: Toleration = { key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' };
    addRuntimeClass('kata', {
      overhead: { podFixed: OVERHEAD },
      scheduling: { nodeSelector: { sandbox: 'kata' }, tolerations: [toleration] },
    });
    const p = pod('web', { runtimeClassName: 'kata', nodeSelector: { disk: 'ssd' } });
    await admitAndValidate(attrs(p));
    expect(specOf(p)).toEqual({
      runtimeClassName: 'kata',
      containers: [{ name: 'app' }],
      overhead: OVERHEAD,
      nodeSelector: { disk: 'ssd', sandbox: 'kata' },
      tolerations: [toleration],
    });
  });
});
