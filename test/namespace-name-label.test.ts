/**
 * Every namespace carries its own name in the flavor's `metadata.name` label (`kubernetes.io/metadata.name`
 * in the reference), as the reference's namespace strategy sets it: on create (also with generateName), back
 * on every update that removes or changes it, on the namespaces the control plane starts with, and on
 * namespaces a persistent store kept from a version that did not set it. A ValidatingAdmissionPolicy bound
 * with a namespaceSelector on that label applies to writes in the namespace it names.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../src/api/meta.ts';
import { FLAVORS, type FlavorName, group } from '../src/api/naming.ts';
import { ControlPlane } from '../src/controlplane/control-plane.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { RawClient, type RawResponse } from './support/raw-https.ts';

describe.each(FLAVORS)('the namespace name label (%s flavor)', (flavor: FlavorName) => {
  let c: TestCluster;
  let admin: RawClient;
  let label: string;

  const send = async (method: string, path: string, body?: unknown, contentType = 'application/json') => {
    const r = await admin.send({
      method,
      path,
      headers: { 'Content-Type': contentType },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    expect(r.code, `${method} ${path}: ${r.body}`).toBeLessThan(300);
    return r.json as KubeObject;
  };
  const labelsOf = (ns: KubeObject) => ns.metadata.labels ?? {};

  beforeAll(async () => {
    c = await startTestCluster({ flavor });
    admin = await RawClient.fromKubeconfig(c.kubeconfig);
    label = `${flavor === 'orch' ? 'orch.io' : 'kubernetes.io'}/metadata.name`;
  });

  afterAll(async () => {
    admin?.close();
    await c?.stop();
  });

  it('is set on create, also from generateName, next to the labels the user gave', async () => {
    const named = await send('POST', '/api/v1/namespaces', { metadata: { name: 'blue', labels: { team: 'x' } } });
    expect(labelsOf(named)).toEqual({ team: 'x', [label]: 'blue' });
    const generated = await send('POST', '/api/v1/namespaces', { metadata: { generateName: 'gen-' } });
    expect(generated.metadata.name).toMatch(/^gen-/);
    expect(labelsOf(generated)).toEqual({ [label]: generated.metadata.name });
    // A label naming another namespace is corrected, not refused.
    const lying = await send('POST', '/api/v1/namespaces', { metadata: { name: 'liar', labels: { [label]: 'blue' } } });
    expect(labelsOf(lying)[label]).toBe('liar');
    const stored = await send('GET', '/api/v1/namespaces/blue');
    expect(labelsOf(stored)[label]).toBe('blue');
  });

  it('is on the namespaces the control plane starts with', async () => {
    const list = (await send('GET', '/api/v1/namespaces')) as unknown as { items: KubeObject[] };
    const initial = c.cp.registry.naming.initialNamespaces;
    for (const name of initial) {
      const ns = list.items.find((i) => i.metadata.name === name);
      expect(ns && labelsOf(ns)[label], name).toBe(name);
    }
    const selected = (await send(
      'GET',
      `/api/v1/namespaces?labelSelector=${encodeURIComponent(`${label}=default`)}`,
    )) as unknown as {
      items: KubeObject[];
    };
    expect(selected.items.map((i) => i.metadata.name)).toEqual(['default']);
  });

  it('comes back after an update removes or changes it', async () => {
    const ns = await send('POST', '/api/v1/namespaces', { metadata: { name: 'green', labels: { keep: 'me' } } });
    const put = await send('PUT', '/api/v1/namespaces/green', { ...ns, metadata: { ...ns.metadata, labels: {} } });
    expect(labelsOf(put)).toEqual({ [label]: 'green' });
    const merged = await send(
      'PATCH',
      '/api/v1/namespaces/green',
      { metadata: { labels: { [label]: 'other', extra: 'y' } } },
      'application/merge-patch+json',
    );
    expect(labelsOf(merged)).toEqual({ [label]: 'green', extra: 'y' });
    const escaped = label.replace('/', '~1');
    const removed = await send(
      'PATCH',
      '/api/v1/namespaces/green',
      [{ op: 'remove', path: `/metadata/labels/${escaped}` }],
      'application/json-patch+json',
    );
    expect(labelsOf(removed)).toEqual({ [label]: 'green', extra: 'y' });
  });

  it('lets a policy bound with a namespaceSelector on it deny writes in that namespace', async () => {
    const admission = `/apis/${group(c.cp.registry.naming, 'admissionregistration')}/v1`;
    await send('POST', '/api/v1/namespaces', { metadata: { name: 'locked' } });
    await send('POST', `${admission}/validatingadmissionpolicies`, {
      metadata: { name: 'no-configmaps' },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
        },
        validations: [{ expression: 'false', message: 'this namespace is locked' }],
      },
    });
    await send('POST', `${admission}/validatingadmissionpolicybindings`, {
      metadata: { name: 'no-configmaps-in-locked' },
      spec: {
        policyName: 'no-configmaps',
        validationActions: ['Deny'],
        matchResources: { namespaceSelector: { matchLabels: { [label]: 'locked' } } },
      },
    });
    const cm = { metadata: { name: 'cm' } };
    let denied: RawResponse | undefined;
    for (let i = 0; i < 50; i++) {
      denied = await admin.send({
        method: 'POST',
        path: '/api/v1/namespaces/locked/configmaps',
        body: JSON.stringify(cm),
      });
      if (denied.code !== 201) break;
      await admin.send({ method: 'DELETE', path: '/api/v1/namespaces/locked/configmaps/cm' });
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(denied?.code, denied?.body).toBe(422);
    expect(denied?.json.message).toContain('this namespace is locked');
    const elsewhere = await admin.send({
      method: 'POST',
      path: '/api/v1/namespaces/default/configmaps',
      body: JSON.stringify(cm),
    });
    expect(elsewhere.code, elsewhere.body).toBe(201);
  });
});

describe('namespaces kept from a version that did not label them', () => {
  it('get the label when the control plane starts', async () => {
    const first = await startTestCluster({ storage: 'embedded' });
    const { cp } = first;
    const label = cp.registry.naming.labels.metadataName;
    let second: ControlPlane | undefined;
    try {
      const rt = cp.registry.kind('v1', 'Namespace')!;
      await cp.seed({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'old' }, status: { phase: 'Active' } });
      // What an older version stored: namespaces without the label.
      for (const name of ['old', 'default']) {
        const ns = cp.storage.get(rt, name)!;
        const labels = { ...ns.metadata.labels };
        delete labels[label];
        await cp.storage.backend.update(
          rt,
          { ...ns, metadata: { ...ns.metadata, labels } },
          ns.metadata.resourceVersion,
        );
        expect(cp.storage.get(rt, name)!.metadata.labels?.[label]).toBeUndefined();
      }
    } finally {
      await cp.stop();
    }
    try {
      second = new ControlPlane({ port: 0, dataDir: first.dir, storage: 'embedded' });
      await second.start();
      const rt = second.registry.kind('v1', 'Namespace')!;
      for (const name of ['old', 'default']) {
        expect(second.storage.get(rt, name)?.metadata.labels?.[label], name).toBe(name);
      }
    } finally {
      await second?.stop();
      await rm(first.dir, { recursive: true, force: true });
    }
  });
});
