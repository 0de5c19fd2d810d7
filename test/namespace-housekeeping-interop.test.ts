/**
 * Two publishers of the root CA ConfigMap and two service account controllers at once, as this daemon beside a
 * kube-controller-manager on a real cluster: with the same CA they converge on one result and then write nothing
 * more; with different CAs (a misconfiguration) each keeps undoing the other, but ever more slowly, not as fast
 * as the server allows. `--root-ca-file` chooses the CA published.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controllerDefinitions } from '../controllers/index.ts';
import type { ConfigMap, Namespace } from '../src/api/types/core.ts';
import { isNamespaceTerminating, StatusError } from '../src/client/errors.ts';
import { selectControllers } from '../src/controller/controller.ts';
import { createSelfSignedCa } from '../src/pki/certs.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { type RunningControllers, runControllers } from './support/controllers.ts';
import { sleep } from './support/daemons.ts';
import { eventually } from './support/eventually.ts';

const housekeeping = selectControllers(controllerDefinitions, ['serviceaccount', 'root-ca-cert-publisher']);

describe('namespace housekeeping beside another controller manager (kubernetes flavor)', () => {
  let c: TestCluster;
  const running: RunningControllers[] = [];
  const n = () => c.cp.registry.naming;
  const run = async (rootCaFile?: string) => {
    const r = await runControllers(c.client, c.cp.registry, housekeeping, {
      config: { certificates: { rootCaFile } },
    });
    running.push(r);
    return r;
  };
  const configMap = (ns: string) => c.client.kind<ConfigMap>('ConfigMap').get(ns, n().rootCAConfigMap);
  /** Counts the writes of one namespace's root CA ConfigMap for `ms`. */
  async function writesDuring(ns: string, ms: number): Promise<number> {
    const abort = new AbortController();
    let writes = 0;
    const from = (await configMap(ns)).metadata.resourceVersion;
    const watching = c.client
      .kind<ConfigMap>('ConfigMap')
      .watch(
        ns,
        { resourceVersion: from, fieldSelector: `metadata.name=${n().rootCAConfigMap}` },
        (e) => {
          if (e.type === 'MODIFIED' || e.type === 'ADDED') writes++;
        },
        abort.signal,
      )
      .catch(() => undefined);
    await sleep(ms);
    abort.abort();
    await watching;
    return writes;
  }

  beforeAll(async () => {
    c = await startTestCluster({ flavor: 'kubernetes' });
  });

  afterAll(async () => {
    for (const r of running) await r.stop();
    await c?.stop();
  });

  it('the housekeeping controllers are on by default', () => {
    const byDefault = selectControllers(controllerDefinitions, ['*'], { apiServerControllers: true }).map(
      (d) => d.name,
    );
    expect(byDefault).toEqual(expect.arrayContaining(housekeeping.map((d) => d.name)));
    expect(housekeeping.map((d) => d.name)).toEqual([
      'serviceaccount-controller',
      'root-ca-certificate-publisher-controller',
    ]);
  });

  it('with the same CA, two of each converge and then write nothing', async () => {
    await run();
    await run();
    await c.client.kind('Namespace').create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'same-ca' } });
    const cm = await eventually(() => configMap('same-ca').catch(() => undefined), 10_000, 'the root CA ConfigMap');
    expect(cm.data).toEqual({ 'ca.crt': c.cp.caPem });
    await eventually(
      () =>
        c.client
          .kind('ServiceAccount')
          .get('same-ca', 'default')
          .catch(() => undefined),
      10_000,
    );
    expect(await writesDuring('same-ca', 2_000)).toBe(0);
    for (const r of running) expect(r.events).toEqual([]);
  });

  it('--root-ca-file chooses the CA; with two different CAs the tussle slows down instead of spinning', async () => {
    const other = await createSelfSignedCa({ commonName: 'another-root-ca' });
    const file = join(c.dir, 'other-ca.crt');
    await writeFile(file, other.certPem);
    for (const r of running.splice(0)) await r.stop();
    await run(file);
    await c.client.kind('Namespace').create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other-ca' } });
    const cm = await eventually(() => configMap('other-ca').catch(() => undefined), 10_000, 'the root CA ConfigMap');
    expect(cm.data).toEqual({ 'ca.crt': other.certPem });

    // Now a second publisher with the kubeconfig's CA: each undoes the other's writes.
    await run();
    const writes = await writesDuring('other-ca', 6_000);
    console.log(`two publishers with different CAs: ${writes} writes in 6 s`);
    // Each publisher restores at once, then after 1 s, 2 s, 4 s: a handful of writes, not thousands.
    expect(writes).toBeGreaterThan(0);
    expect(writes).toBeLessThanOrEqual(12);
  });

  it('leaves a namespace being deleted alone: its creates are refused with the NamespaceTerminating cause', async () => {
    const hold = 'example.com/hold';
    for (const r of running.splice(0)) await r.stop();
    await run();
    await c.client.kind('Namespace').create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'going' } });
    await c.client.kind('ConfigMap').create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'held', namespace: 'going', finalizers: [hold] },
    });
    await eventually(
      () =>
        c.client
          .kind('ServiceAccount')
          .get('going', 'default')
          .catch(() => undefined),
      10_000,
    );
    await eventually(() => configMap('going').catch(() => undefined), 10_000);
    await c.client.kind('Namespace').delete(undefined, 'going');
    // The namespace empties but for the held ConfigMap, and stays Terminating: nothing of ours comes back.
    await eventually(async () => {
      const sa = await c.client
        .kind('ServiceAccount')
        .get('going', 'default')
        .catch(() => undefined);
      const cm = await configMap('going').catch(() => undefined);
      return !sa && !cm;
    }, 10_000);
    const ns = await c.client.kind<Namespace>('Namespace').get(undefined, 'going');
    expect(ns.status?.phase).toBe('Terminating');
    const refused = await c.client
      .kind('ConfigMap')
      .create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late', namespace: 'going' } })
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(StatusError);
    expect((refused as StatusError).code).toBe(403);
    expect((refused as StatusError).message).toBe(
      'configmaps "late" is forbidden: unable to create new content in namespace going because it is being terminated',
    );
    expect(isNamespaceTerminating(refused)).toBe(true);
    await sleep(500);
    expect(
      await c.client
        .kind('ServiceAccount')
        .get('going', 'default')
        .catch(() => undefined),
    ).toBeUndefined();
    expect(await configMap('going').catch(() => undefined)).toBeUndefined();
    await c.client.kind('ConfigMap').patch('going', 'held', { metadata: { finalizers: null } }, 'merge');
    await eventually(
      async () =>
        !(await c.client
          .kind('Namespace')
          .get(undefined, 'going')
          .catch(() => undefined)),
      10_000,
    );
  });
});
