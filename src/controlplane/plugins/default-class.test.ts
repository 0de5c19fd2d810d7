/**
 * DefaultIngressClass, called directly: an Ingress created without a class gets the default IngressClass
 * (the newest when there are several, ties broken by name); only the annotation value "true" marks a
 * default; a class already set (even "") or the legacy annotation leaves the Ingress alone. DefaultStorageClass,
 * the same rule for claims, also takes the beta default annotation.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/meta.ts';
import { group } from '../../api/naming.ts';
import { ResourceRegistry } from '../../api/registry.ts';
import type { AdmissionAttributes, AdmissionPlugin, Operation } from '../admission.ts';
import { Storage } from '../storage.ts';
import { defaultIngressClass, defaultStorageClass } from './default-class.ts';

const registry = new ResourceRegistry('orch');
const n = registry.naming;
const networking = group(n, 'networking');
const ingresses = registry.resource(networking, 'v1', 'ingresses')!;
const ingressClasses = registry.resource(networking, 'v1', 'ingressclasses')!;
const IS_DEFAULT = n.annotations.defaultIngressClass;
const LEGACY = n.annotations.legacyIngressClass;

let storage: Storage;
let plugin: AdmissionPlugin;

beforeEach(() => {
  storage = new Storage();
  plugin = defaultIngressClass(registry, storage, n);
});

/** An IngressClass created at `created`; `isDefault` is the annotation value (absent when undefined). */
function addClass(name: string, created: string, isDefault?: string): void {
  storage.create(ingressClasses, {
    apiVersion: `${networking}/v1`,
    kind: 'IngressClass',
    metadata: {
      name,
      creationTimestamp: created,
      ...(isDefault === undefined ? {} : { annotations: { [IS_DEFAULT]: isDefault } }),
    },
    spec: { controller: `example.com/${name}` },
  });
}

function ingress(name: string, spec?: Record<string, unknown>, annotations?: Record<string, string>): KubeObject {
  return {
    apiVersion: `${networking}/v1`,
    kind: 'Ingress',
    metadata: { name, namespace: 'default', ...(annotations ? { annotations } : {}) },
    ...(spec ? { spec } : {}),
  };
}

async function admit(object: KubeObject, operation: Operation = 'CREATE', more: Partial<AdmissionAttributes> = {}) {
  const a: AdmissionAttributes = {
    operation,
    rt: ingresses,
    namespace: 'default',
    name: object.metadata.name ?? '',
    object,
    user: { username: 'alice', groups: ['system:authenticated'] },
    dryRun: false,
    ...more,
  };
  await plugin.admit?.(a);
  await plugin.validate?.(a);
  return object;
}

const classOf = (ing: KubeObject) => (ing.spec as { ingressClassName?: string | null } | undefined)?.ingressClassName;

describe('DefaultIngressClass', () => {
  it('leaves the class unset when no IngressClass is the default', async () => {
    addClass('nginx', '2025-01-01T00:00:00Z');
    addClass('traefik', '2025-01-02T00:00:00Z', 'false');
    expect(classOf(await admit(ingress('web', { rules: [] })))).toBeUndefined();
  });

  it('sets the one default IngressClass', async () => {
    addClass('nginx', '2025-01-01T00:00:00Z', 'true');
    addClass('traefik', '2025-01-02T00:00:00Z');
    const ing = await admit(ingress('web', { rules: [{ host: 'example.com' }] }));
    expect(ing.spec).toEqual({ rules: [{ host: 'example.com' }], ingressClassName: 'nginx' });
  });

  it('gives an Ingress without a spec one holding the class', async () => {
    addClass('nginx', '2025-01-01T00:00:00Z', 'true');
    expect((await admit(ingress('web'))).spec).toEqual({ ingressClassName: 'nginx' });
  });

  it('picks the newest of several defaults', async () => {
    addClass('old', '2025-01-01T00:00:00Z', 'true');
    addClass('newest', '2025-03-01T00:00:00Z', 'true');
    addClass('middle', '2025-02-01T00:00:00Z', 'true');
    expect(classOf(await admit(ingress('web', {})))).toBe('newest');
  });

  it('breaks a tie of creation times by name', async () => {
    addClass('old', '2025-01-01T00:00:00Z', 'true');
    addClass('zeta', '2025-03-01T00:00:00Z', 'true');
    addClass('alpha', '2025-03-01T00:00:00Z', 'true');
    addClass('beta', '2025-03-01T00:00:00Z', 'true');
    expect(classOf(await admit(ingress('web', {})))).toBe('alpha');
  });

  it.each(['True', 'TRUE', '', 'false', 'yes', ' true'])(
    'does not take the annotation value %j as a default',
    async (value) => {
      addClass('odd', '2025-03-01T00:00:00Z', value);
      addClass('real', '2025-01-01T00:00:00Z', 'true');
      expect(classOf(await admit(ingress('web', {})))).toBe('real');
    },
  );

  it('leaves a class that is already set alone', async () => {
    addClass('nginx', '2025-01-01T00:00:00Z', 'true');
    expect(classOf(await admit(ingress('web', { ingressClassName: 'traefik' })))).toBe('traefik');
  });

  it('leaves an empty class name alone: "" is set', async () => {
    addClass('nginx', '2025-01-01T00:00:00Z', 'true');
    expect(classOf(await admit(ingress('web', { ingressClassName: '' })))).toBe('');
  });

  it('treats a null class name as unset', async () => {
    addClass('nginx', '2025-01-01T00:00:00Z', 'true');
    expect(classOf(await admit(ingress('web', { ingressClassName: null })))).toBe('nginx');
  });

  it.each(['nginx', ''])('leaves an Ingress with the legacy annotation (%j) alone', async (value) => {
    addClass('traefik', '2025-01-01T00:00:00Z', 'true');
    const ing = await admit(ingress('web', {}, { [LEGACY]: value }));
    expect(ing.spec).toEqual({});
  });

  it('does not touch updates or subresources', async () => {
    addClass('nginx', '2025-01-01T00:00:00Z', 'true');
    const old = ingress('web', {});
    expect(classOf(await admit(ingress('web', {}), 'UPDATE', { oldObject: old }))).toBeUndefined();
    expect(
      classOf(await admit(ingress('web', {}), 'UPDATE', { oldObject: old, subresource: 'status' })),
    ).toBeUndefined();
  });

  it('does not touch other kinds', async () => {
    addClass('nginx', '2025-01-01T00:00:00Z', 'true');
    const cm: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' } };
    const a: AdmissionAttributes = {
      operation: 'CREATE',
      rt: registry.resource('', 'v1', 'configmaps')!,
      namespace: 'default',
      name: 'c',
      object: cm,
      user: { username: 'alice', groups: [] },
      dryRun: false,
    };
    await plugin.admit?.(a);
    expect(cm).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' } });
  });
});

describe('DefaultStorageClass', () => {
  const storageGroup = group(n, 'storage');
  const claims = registry.resource('', 'v1', 'persistentvolumeclaims')!;
  const storageClasses = registry.resource(storageGroup, 'v1', 'storageclasses')!;
  const addStorageClass = (name: string, created: string, annotation?: string) =>
    storage.create(storageClasses, {
      apiVersion: `${storageGroup}/v1`,
      kind: 'StorageClass',
      metadata: { name, creationTimestamp: created, ...(annotation ? { annotations: { [annotation]: 'true' } } : {}) },
      provisioner: 'example.com/p',
    });
  const admitClaim = async (spec: Record<string, unknown>, annotations?: Record<string, string>) => {
    const object: KubeObject = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data', namespace: 'default', ...(annotations ? { annotations } : {}) },
      spec,
    };
    await defaultStorageClass(registry, storage, n).admit?.({
      operation: 'CREATE',
      rt: claims,
      namespace: 'default',
      name: 'data',
      object,
      user: { username: 'alice', groups: [] },
      dryRun: false,
    });
    return (object.spec as { storageClassName?: string }).storageClassName;
  };

  it('gives a claim without a class the newest default, beta annotation included', async () => {
    addStorageClass('plain', '2025-03-01T00:00:00Z');
    addStorageClass('standard', '2025-01-01T00:00:00Z', n.annotations.defaultStorageClass);
    expect(await admitClaim({})).toBe('standard');
    addStorageClass('beta', '2025-02-01T00:00:00Z', n.annotations.betaDefaultStorageClass);
    expect(await admitClaim({})).toBe('beta');
  });

  it('leaves a claim naming a class (even ""), or the beta class annotation, alone', async () => {
    addStorageClass('standard', '2025-01-01T00:00:00Z', n.annotations.defaultStorageClass);
    expect(await admitClaim({ storageClassName: '' })).toBe('');
    expect(await admitClaim({ storageClassName: 'fast' })).toBe('fast');
    expect(await admitClaim({}, { [n.annotations.betaStorageClass]: 'slow' })).toBeUndefined();
  });

  it('sets nothing without a default class', async () => {
    addStorageClass('plain', '2025-01-01T00:00:00Z');
    expect(await admitClaim({})).toBeUndefined();
  });
});
