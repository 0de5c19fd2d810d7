/**
 * The official Python client (Debian's python3-kubernetes 22.6, run by /usr/bin/python3) against the embedded
 * plane with the daemon's controllers, in both flavors: test/clients/python_client.py makes the calls and
 * prints what it saw as JSON lines; the assertions are here. In the orch flavor the CSR calls go through
 * api_client.call_api on certificates.orch.io (the typed methods' paths are fixed to certificates.k8s.io);
 * DynamicClient's discovery is checked in both.
 */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLAVORS, type FlavorName } from '../../src/api/naming.ts';
import { type ClientPlane, startClientPlane } from './plane.ts';

const PYTHON = '/usr/bin/python3';
const SCRIPT = join(import.meta.dirname, 'python_client.py');
const present = spawnSync(PYTHON, ['-c', 'import kubernetes, cryptography'], { stdio: 'ignore' }).status === 0;
if (!present) {
  console.log(
    'python client: suite skipped, /usr/bin/python3 lacks kubernetes or cryptography (Debian packages python3-kubernetes, python3-cryptography)',
  );
}

type Facts = Record<string, any>;

/** Runs the script to its end (at most `ms`) and gives each check's facts by name. */
function runScript(args: string[], ms: number): Promise<{ checks: Map<string, Facts>; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(PYTHON, [SCRIPT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('close', () => {
      clearTimeout(timer);
      const checks = new Map<string, Facts>();
      for (const line of out.split('\n')) {
        if (!line.startsWith('{')) continue;
        const { check, ...facts } = JSON.parse(line);
        checks.set(check, facts);
      }
      resolve({ checks, out });
    });
  });
}

describe.skipIf(!present).each(FLAVORS)('the Python client, %s flavor', (flavor: FlavorName) => {
  let plane: ClientPlane;
  let result: { checks: Map<string, Facts>; out: string };
  const ns = `py-${flavor}`;
  /** One check's facts; a check that raised fails here with what it raised. */
  const facts = (name: string): Facts => {
    const f = result.checks.get(name);
    expect(f, `no line for ${name}:\n${result.out}`).toBeDefined();
    expect(f?.error, f?.trace).toBeUndefined();
    return f as Facts;
  };

  beforeAll(async () => {
    plane = await startClientPlane(flavor);
    const n = plane.c.cp.registry.naming;
    result = await runScript([plane.c.kubeconfig, flavor, ns, n.signers.apiServerClient, plane.c.dir], 45_000);
  }, 60_000);

  afterAll(() => plane?.stop());

  it('creates, lists and reads a namespace', () => {
    const f = facts('namespaces');
    expect(f.created).toBe(ns);
    expect(f.listed).toEqual(expect.arrayContaining(['default', ns]));
    expect(f.phase).toBe('Active');
    expect(f.labels).toEqual({ [plane.c.cp.registry.naming.labels.metadataName]: ns });
  });

  it('ConfigMap create, replace, strategic / JSON / merge patches, list and delete', () => {
    const f = facts('configmaps');
    expect(f.created).toBe(true);
    expect(f.replaced).toEqual({ a: '1', b: '2' });
    expect(f.strategic).toEqual({ a: '1', b: '2', c: '3' });
    expect(f.jsonPatch).toEqual({ a: '10', b: '2', c: '3' });
    expect(f.merge).toEqual({ status: 200, data: { a: '10', c: '3', d: '4' } });
    expect(f.listed).toEqual(['cm']);
    expect(f.afterDelete).toBe(404);
  });

  it('a pod watch from a resourceVersion, with timeout_seconds and bookmarks allowed, sees every change', () => {
    const f = facts('pod-watch');
    expect(f.events[0]).toEqual(['ADDED', 'watched', null]);
    expect(f.events).toContainEqual(['MODIFIED', 'watched', 'two']);
    expect(f.events.at(-1)).toEqual(['DELETED', 'watched', 'two']);
    // It stopped on the DELETED event, not at the server's timeout.
    expect(f.seconds).toBeLessThan(10);
  });

  it('a CSR made by cryptography is approved through /approval, issued, and verifies against the cluster CA', () => {
    const f = facts('csr');
    expect(f.conditions).toEqual([['Approved', 'True', 'PythonClient']]);
    expect(f.pemHeader).toBe('-----BEGIN CERTIFICATE-----');
    expect(f.verify).toBe(`${join(plane.c.dir, 'py-leaf.pem')}: OK`);
  });

  it('an eviction is admitted while the budget allows it, then refused with 429', () => {
    const f = facts('eviction');
    expect(f.first).toBe(201);
    expect(f.second).toBe(429);
    expect(f.message).toBe("Cannot evict pod as it would violate the pod's disruption budget.");
  });

  it('server-side apply: a second manager conflicts (409), then takes the field with force', () => {
    const f = facts('server-side-apply');
    expect(f.first).toBe('1');
    expect(f.conflict.code).toBe(409);
    expect(f.conflict.message).toMatch(/conflict with "py-a"/);
    expect(f.forced).toBe('2');
    expect(f.managers).toEqual(['py-b']);
  });

  it("DynamicClient's discovery finds the flavor's certificates group and its subresources", () => {
    const f = facts('dynamic-discovery');
    expect(f.csr).toEqual(['certificatesigningrequests', false, ['approval', 'status']]);
    expect(f.statefulset).toEqual(['statefulsets', true, ['scale', 'status']]);
    expect(f.listed).toEqual([`py-${ns}`]);
  });

  it('VersionApi().get_code() reads every field it shows', () => {
    const f = facts('version');
    expect(f.major).toMatch(/^\d+$/);
    expect(f.minor).toMatch(/^\d+\+?$/);
    expect(f.gitVersion).toMatch(/^v\d+\.\d+\.\d+/);
    expect(f.platform).toMatch(/^linux\//);
  });

  it("list_namespaced_event (core/v1) sees the StatefulSet controller's SuccessfulCreate", () => {
    const f = facts('statefulset-events');
    expect(f).toMatchObject({ kind: 'StatefulSet', reason: 'SuccessfulCreate', type: 'Normal' });
    expect(f.message).toMatch(/Create Pod web-0 in StatefulSet web successful/);
  });
});
