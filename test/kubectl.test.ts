/**
 * The real kubectl, unchanged, against the embedded control plane: discovery, `apply`/`delete` of the
 * manifests in `examples/`, paging, the three patch types, server-side apply, server dry runs, field
 * validation, watches, `wait` and the CSR table. kubectl runs as a child process with KUBECONFIG set to
 * the test cluster's admin kubeconfig and a temporary discovery cache.
 *
 * Objects are written from manifests (`create -f` / `apply -f`): kubectl's typed generators
 * (`kubectl create namespace|configmap ...`) send protobuf bodies, which this server does not decode.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { hasKubectl, Kubectl, parseTable } from './support/kubectl.ts';

const EXAMPLES_DIR = join(import.meta.dirname, '..', 'examples');
/** Where the objects of this suite (other than the examples) live. */
const NS = 'kubectl-suite';

if (!hasKubectl) {
  console.warn('test/kubectl.test.ts: no kubectl binary (PATH or $KUBECTL); the kubectl suite is skipped');
}

/** A documented resource (spec §2 and §4.3) as `kubectl api-resources -o wide` must list it. */
interface DocumentedResource {
  name: string;
  apiVersion: string;
  namespaced: boolean;
  kind: string;
  /** The documented operations as API verbs, plus `get` and `list`, which every kubectl read needs. */
  verbs: string[];
}

const READ = ['get', 'list'];
const WRITE = ['create', 'patch', 'update'];
const FULL = [...READ, ...WRITE, 'delete', 'deletecollection'];

const DOCUMENTED: DocumentedResource[] = [
  {
    name: 'certificatesigningrequests',
    apiVersion: 'certificates.orch.io/v1',
    namespaced: false,
    kind: 'CertificateSigningRequest',
    verbs: [...READ, ...WRITE],
  },
  {
    name: 'clusterroles',
    apiVersion: 'rbac.authorization.orch.io/v1',
    namespaced: false,
    kind: 'ClusterRole',
    verbs: FULL,
  },
  { name: 'ingressclasses', apiVersion: 'networking.orch.io/v1', namespaced: false, kind: 'IngressClass', verbs: FULL },
  { name: 'runtimeclasses', apiVersion: 'node.orch.io/v1', namespaced: false, kind: 'RuntimeClass', verbs: FULL },
  {
    name: 'clustertrustbundles',
    apiVersion: 'certificates.orch.io/v1',
    namespaced: false,
    kind: 'ClusterTrustBundle',
    verbs: FULL,
  },
  { name: 'limitranges', apiVersion: 'v1', namespaced: true, kind: 'LimitRange', verbs: FULL },
  { name: 'apiservices', apiVersion: 'apiregistration.orch.io/v1', namespaced: false, kind: 'APIService', verbs: FULL },
  {
    name: 'poddisruptionbudgets',
    apiVersion: 'policy/v1',
    namespaced: true,
    kind: 'PodDisruptionBudget',
    verbs: [...READ, ...WRITE, 'delete', 'watch'],
  },
  { name: 'controllerrevisions', apiVersion: 'apps/v1', namespaced: true, kind: 'ControllerRevision', verbs: FULL },
  { name: 'leases', apiVersion: 'coordination.orch.io/v1', namespaced: true, kind: 'Lease', verbs: [...FULL, 'watch'] },
  {
    name: 'leasecandidates',
    apiVersion: 'coordination.orch.io/v1beta1',
    namespaced: true,
    kind: 'LeaseCandidate',
    verbs: [...READ, ...WRITE, 'watch'],
  },
  {
    name: 'statefulsets',
    apiVersion: 'apps/v1',
    namespaced: true,
    kind: 'StatefulSet',
    verbs: [...READ, 'create', 'patch', 'watch'],
  },
  {
    name: 'validatingadmissionpolicies',
    apiVersion: 'admissionregistration.orch.io/v1',
    namespaced: false,
    kind: 'ValidatingAdmissionPolicy',
    verbs: [...READ, 'create'],
  },
];

interface Manifest {
  file: string;
  object: any;
}

/** Every document of every `examples/*.yaml`, in the order `kubectl apply -f examples/` reads them. */
async function loadExamples(): Promise<Manifest[]> {
  const files = (await readdir(EXAMPLES_DIR)).filter((f) => f.endsWith('.yaml')).sort();
  const out: Manifest[] = [];
  for (const file of files) {
    for (const doc of parseAllDocuments(await readFile(join(EXAMPLES_DIR, file), 'utf8'))) {
      if (doc.errors.length) throw new Error(`${file}: ${doc.errors[0].message}`);
      const object = doc.toJS();
      if (object) out.push({ file, object });
    }
  }
  return out;
}

/** `kubectl get` arguments addressing one object: `<plural>[.<group>] <name> [-n <namespace>]`. */
function objectArgs(resources: Map<string, string>, obj: any): string[] {
  const resource = resources.get(`${obj.apiVersion}/${obj.kind}`);
  if (!resource) throw new Error(`kubectl api-resources does not list ${obj.apiVersion} ${obj.kind}`);
  const ns = obj.metadata.namespace ? ['-n', obj.metadata.namespace] : [];
  return [resource, obj.metadata.name, ...ns];
}

/** A ConfigMap manifest as JSON (valid YAML for `-f -`). */
function configMap(
  name: string,
  data: Record<string, string>,
  labels: Record<string, string> = {},
  extra = {},
): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: NS, labels, ...extra },
    data,
  });
}

/** Whether a promise has settled, without waiting for it. */
function settledFlag(p: Promise<unknown>): () => boolean {
  let settled = false;
  p.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  return () => settled;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!hasKubectl)(
  hasKubectl
    ? 'kubectl against the embedded control plane'
    : 'kubectl against the embedded control plane (skipped: kubectl not installed)',
  () => {
    let cluster: TestCluster;
    let cacheDir: string;
    let kubectl: Kubectl;
    /** `<apiVersion>/<kind>` → the resource argument kubectl takes (`leases.coordination.orch.io`). */
    let resources: Map<string, string>;

    beforeAll(async () => {
      cluster = await startTestCluster();
      cacheDir = await mkdtemp(join(tmpdir(), 'kubectl-cache-'));
      kubectl = new Kubectl(cluster.kubeconfig, cacheDir);
      await kubectl.ok(['create', '-f', '-'], {
        input: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }),
      });
      resources = new Map();
      for (const row of parseTable(await kubectl.ok(['api-resources'])).rows) {
        const group = row.APIVERSION.includes('/') ? row.APIVERSION.split('/')[0] : '';
        resources.set(`${row.APIVERSION}/${row.KIND}`, group ? `${row.NAME}.${group}` : row.NAME);
      }
    });

    afterAll(async () => {
      await cluster?.stop();
      if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
    });

    it('api-resources lists every documented resource with its version, scope, kind and verbs', async () => {
      const table = parseTable(await kubectl.ok(['api-resources', '-o', 'wide']));
      expect(table.columns).toEqual(['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND', 'VERBS', 'CATEGORIES']);
      for (const doc of DOCUMENTED) {
        const row = table.rows.find((r) => r.NAME === doc.name && r.APIVERSION === doc.apiVersion);
        expect(row, `${doc.name} in ${doc.apiVersion}`).toBeDefined();
        expect(row!.NAMESPACED).toBe(String(doc.namespaced));
        expect(row!.KIND).toBe(doc.kind);
        expect(row!.VERBS.split(','), `verbs of ${doc.name}`).toEqual(expect.arrayContaining(doc.verbs));
      }
      // The short names kubectl users rely on for the documented resources.
      const shortNames = (name: string) => table.rows.find((r) => r.NAME === name)?.SHORTNAMES;
      expect(shortNames('certificatesigningrequests')).toBe('csr');
      expect(shortNames('poddisruptionbudgets')).toBe('pdb');
      expect(shortNames('statefulsets')).toBe('sts');
      expect(shortNames('limitranges')).toBe('limits');
    });

    it('apply -f examples/ creates every example, namespace first', async () => {
      const examples = await loadExamples();
      const out = await kubectl.ok(['apply', '-f', EXAMPLES_DIR], { timeoutMs: 30_000 });
      const lines = out.trim().split('\n');
      expect(lines[0]).toBe('namespace/demo created');
      expect(lines).toHaveLength(examples.length);
      for (const line of lines) expect(line).toMatch(/ created$/);

      const kinds = new Set(examples.map((e) => e.object.kind));
      for (const doc of DOCUMENTED) expect(kinds, `an example of ${doc.kind}`).toContain(doc.kind);

      for (const { file, object } of examples) {
        const live = await kubectl.json(['get', ...objectArgs(resources, object)]);
        const expected = structuredClone(object);
        // An aggregated ClusterRole's rules belong to the aggregation controller.
        if (expected.kind === 'ClusterRole' && expected.aggregationRule) delete expected.rules;
        // Everything the manifest says is stored as written (the server may add defaults and status).
        expect(live, `${file}: ${object.kind} ${object.metadata.name}`).toMatchObject(expected);
        expect(live.metadata.uid).toBeTruthy();
        expect(live.metadata.resourceVersion).toBeTruthy();
      }
    });

    it('get csr prints the CSR columns, with CONDITION Pending for a new request', async () => {
      const example = (await loadExamples()).find((e) => e.object.kind === 'CertificateSigningRequest')!.object;
      const csr = { ...example, metadata: { name: 'kubectl-suite-csr' } };
      await kubectl.ok(['create', '-f', '-'], { input: JSON.stringify(csr) });

      const table = parseTable(await kubectl.ok(['get', 'csr', 'kubectl-suite-csr']));
      expect(table.columns).toEqual(
        expect.arrayContaining(['NAME', 'AGE', 'SIGNERNAME', 'REQUESTOR', 'REQUESTEDDURATION', 'CONDITION']),
      );
      const at = (c: string) => table.columns.indexOf(c);
      expect(at('NAME')).toBe(0);
      expect(at('SIGNERNAME')).toBeLessThan(at('REQUESTOR'));
      expect(at('REQUESTOR')).toBeLessThan(at('REQUESTEDDURATION'));
      expect(at('REQUESTEDDURATION')).toBeLessThan(at('CONDITION'));
      expect(table.rows).toHaveLength(1);
      expect(table.rows[0]).toMatchObject({
        NAME: 'kubectl-suite-csr',
        SIGNERNAME: 'orch.io/orch-apiserver-client-nodeagent',
        CONDITION: 'Pending',
      });
      expect(table.rows[0].AGE).toMatch(/^\d+s$/);
    });

    it('get --chunk-size=2 pages through more objects than a page and returns them all', async () => {
      const names = Array.from({ length: 7 }, (_, i) => `chunk-${i + 1}`);
      // A stream of JSON objects.
      const manifests = names.map((n, i) => configMap(n, { index: String(i + 1) }, { suite: 'chunks' }));
      await kubectl.ok(['create', '-f', '-'], { input: manifests.join('\n') });

      const r = await kubectl.run([
        'get',
        'configmaps',
        '-n',
        NS,
        '-l',
        'suite=chunks',
        '--chunk-size=2',
        '-o',
        'name',
        '-v=6',
      ]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.trim().split('\n')).toEqual(names.map((n) => `configmap/${n}`));
      // kubectl really paged: every list request asked for 2 items, the later ones with a continue token.
      const requests = r.stderr
        .split('\n')
        .filter((l) => l.includes(`GET `) && l.includes(`/namespaces/${NS}/configmaps?`));
      expect(requests.length).toBeGreaterThanOrEqual(4);
      for (const line of requests) expect(line).toContain('limit=2');
      expect(requests.filter((l) => l.includes('continue=')).length).toBe(requests.length - 1);

      // The table output of the same paged list.
      const table = parseTable(
        await kubectl.ok(['get', 'configmaps', '-n', NS, '-l', 'suite=chunks', '--chunk-size=2']),
      );
      expect(table.rows.map((row) => row.NAME)).toEqual(names);
    });

    it('patch --type=strategic merges a list by its merge key', async () => {
      await kubectl.ok(['create', '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'smp-target', namespace: NS },
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: 'smp-target' } },
            template: {
              metadata: { labels: { app: 'smp-target' } },
              spec: {
                containers: [{ name: 'app', image: 'nginx:1.27', resources: { limits: { cpu: '250m' } } }],
              },
            },
          },
        }),
      });
      const patch = {
        spec: {
          template: {
            spec: {
              containers: [
                { name: 'app', image: 'nginx:1.28' },
                { name: 'sidecar', image: 'busybox:1.36' },
              ],
            },
          },
        },
      };
      const out = await kubectl.ok([
        'patch',
        'deployment',
        'smp-target',
        '-n',
        NS,
        '--type=strategic',
        '-p',
        JSON.stringify(patch),
      ]);
      expect(out.trim()).toBe('deployment.apps/smp-target patched');

      const live = await kubectl.json(['get', 'deployment', 'smp-target', '-n', NS]);
      const containers: any[] = live.spec.template.spec.containers;
      expect(containers.map((c) => c.name).sort()).toEqual(['app', 'sidecar']);
      const app = containers.find((c) => c.name === 'app');
      // The existing element was merged, not replaced: the image changed, its resources stayed.
      expect(app.image).toBe('nginx:1.28');
      expect(app.resources).toEqual({ limits: { cpu: '250m' } });
      expect(containers.find((c) => c.name === 'sidecar').image).toBe('busybox:1.36');
      expect(live.metadata.generation).toBe(2);
    });

    it('patch --type=merge sets and (with null) removes keys', async () => {
      await kubectl.ok(['create', '-f', '-'], { input: configMap('merge-target', { keep: 'k', drop: 'd' }) });
      const out = await kubectl.ok([
        'patch',
        'configmap',
        'merge-target',
        '-n',
        NS,
        '--type=merge',
        '-p',
        JSON.stringify({ data: { added: 'a', drop: null }, metadata: { labels: { patched: 'merge' } } }),
      ]);
      expect(out.trim()).toBe('configmap/merge-target patched');
      const live = await kubectl.json(['get', 'configmap', 'merge-target', '-n', NS]);
      expect(live.data).toEqual({ keep: 'k', added: 'a' });
      expect(live.metadata.labels).toEqual({ patched: 'merge' });
    });

    it('patch --type=json applies the operations in order; a failing test operation changes nothing', async () => {
      await kubectl.ok(['create', '-f', '-'], {
        input: configMap('json-target', { keep: 'k', replace: 'old', remove: 'r' }),
      });
      const ops = [
        { op: 'test', path: '/data/replace', value: 'old' },
        { op: 'replace', path: '/data/replace', value: 'new' },
        { op: 'remove', path: '/data/remove' },
        { op: 'add', path: '/data/added', value: 'a' },
        { op: 'copy', from: '/data/keep', path: '/data/copied' },
      ];
      await kubectl.ok(['patch', 'configmap', 'json-target', '-n', NS, '--type=json', '-p', JSON.stringify(ops)]);
      const live = await kubectl.json(['get', 'configmap', 'json-target', '-n', NS]);
      expect(live.data).toEqual({ keep: 'k', replace: 'new', added: 'a', copied: 'k' });

      const failing = [
        { op: 'add', path: '/data/never', value: 'x' },
        { op: 'test', path: '/data/replace', value: 'old' },
      ];
      const r = await kubectl.run([
        'patch',
        'configmap',
        'json-target',
        '-n',
        NS,
        '--type=json',
        '-p',
        JSON.stringify(failing),
      ]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('/data/replace');
      const after = await kubectl.json(['get', 'configmap', 'json-target', '-n', NS]);
      expect(after.data).toEqual(live.data);
      expect(after.metadata.resourceVersion).toBe(live.metadata.resourceVersion);
    });

    it('apply --server-side creates, then updates, an object', async () => {
      const applied = (spec: Record<string, unknown>) =>
        JSON.stringify({
          apiVersion: 'coordination.orch.io/v1',
          kind: 'Lease',
          metadata: { name: 'ssa-lease', namespace: NS },
          spec,
        });
      const args = ['apply', '--server-side', '--field-manager=kubectl-suite', '-f', '-'];

      expect((await kubectl.ok(args, { input: applied({ holderIdentity: 'a' }) })).trim()).toBe(
        'lease.coordination.orch.io/ssa-lease serverside-applied',
      );
      let live = await kubectl.json(['get', 'lease', 'ssa-lease', '-n', NS]);
      expect(live.spec).toEqual({ holderIdentity: 'a' });

      await kubectl.ok(args, { input: applied({ holderIdentity: 'b', leaseDurationSeconds: 30 }) });
      live = await kubectl.json(['get', 'lease', 'ssa-lease', '-n', NS]);
      expect(live.spec).toEqual({ holderIdentity: 'b', leaseDurationSeconds: 30 });
      // Server-side apply leaves no client-side apply annotation behind.
      expect(live.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration']).toBeUndefined();
    });

    it('--dry-run=server creates, patches and deletes nothing', async () => {
      const lease = JSON.stringify({
        apiVersion: 'coordination.orch.io/v1',
        kind: 'Lease',
        metadata: { name: 'dry-lease', namespace: NS },
        spec: { holderIdentity: 'dry' },
      });
      const created = await kubectl.ok(['apply', '--dry-run=server', '-f', '-'], { input: lease });
      expect(created.trim()).toBe('lease.coordination.orch.io/dry-lease created (server dry run)');
      // The server processed the object (it was given a uid) but did not store it.
      const echoed = await kubectl.json(['create', '--dry-run=server', '-f', '-'], { input: lease });
      expect(echoed.metadata.uid).toBeTruthy();
      const missing = await kubectl.run(['get', 'lease', 'dry-lease', '-n', NS]);
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toContain('NotFound');

      await kubectl.ok(['create', '-f', '-'], { input: configMap('dry-target', { value: 'stored' }) });
      const before = await kubectl.json(['get', 'configmap', 'dry-target', '-n', NS]);
      const patched = await kubectl.json([
        'patch',
        'configmap',
        'dry-target',
        '-n',
        NS,
        '--dry-run=server',
        '--type=merge',
        '-p',
        JSON.stringify({ data: { value: 'dry' } }),
      ]);
      expect(patched.data.value).toBe('dry');
      const deleted = await kubectl.ok(['delete', 'configmap', 'dry-target', '-n', NS, '--dry-run=server']);
      expect(deleted.trim()).toBe('configmap "dry-target" deleted (server dry run)');
      const after = await kubectl.json(['get', 'configmap', 'dry-target', '-n', NS]);
      expect(after.data).toEqual({ value: 'stored' });
      expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    });

    describe('field validation of an unknown field', () => {
      const lease = (name: string) =>
        JSON.stringify({
          apiVersion: 'coordination.orch.io/v1',
          kind: 'Lease',
          metadata: { name, namespace: NS },
          spec: { holderIdentity: 'x', holder: 'misspelled' },
        });

      it('--validate=strict fails with a message naming the field, and stores nothing', async () => {
        const r = await kubectl.run(['apply', '--validate=strict', '-f', '-'], { input: lease('strict-lease') });
        expect(r.code).not.toBe(0);
        expect(r.stderr).toContain('strict decoding error');
        expect(r.stderr).toContain('unknown field "spec.holder"');
        const missing = await kubectl.run(['get', 'lease', 'strict-lease', '-n', NS]);
        expect(missing.stderr).toContain('NotFound');
      });

      it('--validate=warn succeeds, prints a warning naming the field, and drops the field', async () => {
        const r = await kubectl.run(['apply', '--validate=warn', '-f', '-'], { input: lease('warn-lease') });
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout.trim()).toBe('lease.coordination.orch.io/warn-lease created');
        expect(r.stderr).toContain('Warning: unknown field "spec.holder"');
        const live = await kubectl.json(['get', 'lease', 'warn-lease', '-n', NS]);
        expect(live.spec).toEqual({ holderIdentity: 'x' });
      });

      it("the server's default (a request without fieldValidation) warns and succeeds", async () => {
        // kubectl's own default is --validate=strict; `create --raw` sends the body without fieldValidation.
        const path = `/apis/coordination.orch.io/v1/namespaces/${NS}/leases`;
        const r = await kubectl.run(['create', '--raw', path, '-f', '-'], { input: lease('default-lease') });
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toContain('Warning: unknown field "spec.holder"');
        expect(JSON.parse(r.stdout).metadata.name).toBe('default-lease');
      });
    });

    it('get -w streams additions, modifications and deletions until killed', async () => {
      await kubectl.ok(['create', '-f', '-'], { input: configMap('watched-a', { v: '1' }, { watch: 'suite' }) });
      const watch = kubectl.stream(['get', 'configmaps', '-n', NS, '-l', 'watch=suite', '-w', '--output-watch-events']);
      try {
        // The initial list is printed first; events after it are streamed.
        await watch.waitForLine(/^ADDED\s+watched-a\s/);
        await kubectl.ok(['patch', 'configmap', 'watched-a', '-n', NS, '--type=merge', '-p', '{"data":{"v":"2"}}']);
        await watch.waitForLine(/^MODIFIED\s+watched-a\s/);
        await kubectl.ok(['create', '-f', '-'], { input: configMap('watched-b', { v: '1' }, { watch: 'suite' }) });
        await watch.waitForLine(/^ADDED\s+watched-b\s/);
        await kubectl.ok(['delete', 'configmap', 'watched-a', '-n', NS]);
        await watch.waitForLine(/^DELETED\s+watched-a\s/);
        // Leaving the label selection is a deletion for this watch.
        await kubectl.ok(['label', 'configmap', 'watched-b', '-n', NS, 'watch-']);
        await watch.waitForLine(/^DELETED\s+watched-b\s/);
      } finally {
        await watch.stop();
      }
      const table = parseTable(watch.lines.join('\n'));
      expect(table.columns).toEqual(['EVENT', 'NAME', 'DATA', 'AGE']);
      expect(table.rows.map((r) => `${r.EVENT} ${r.NAME}`)).toEqual([
        'ADDED watched-a',
        'MODIFIED watched-a',
        'ADDED watched-b',
        'DELETED watched-a',
        'DELETED watched-b',
      ]);
    });

    it('wait --for=jsonpath waits until the value matches, and times out when it never does', async () => {
      await kubectl.ok(['create', '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'coordination.orch.io/v1',
          kind: 'Lease',
          metadata: { name: 'wait-lease', namespace: NS },
          spec: { holderIdentity: 'first' },
        }),
      });
      const waiting = kubectl.run(
        ['wait', 'lease/wait-lease', '-n', NS, '--for=jsonpath={.spec.holderIdentity}=second', '--timeout=20s'],
        { timeoutMs: 25_000 },
      );
      const done = settledFlag(waiting);
      await sleep(1_000);
      expect(done()).toBe(false);
      await kubectl.ok([
        'patch',
        'lease',
        'wait-lease',
        '-n',
        NS,
        '--type=merge',
        '-p',
        '{"spec":{"holderIdentity":"second"}}',
      ]);
      const r = await waiting;
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.trim()).toBe('lease.coordination.orch.io/wait-lease condition met');

      const never = await kubectl.run([
        'wait',
        'lease/wait-lease',
        '-n',
        NS,
        '--for=jsonpath={.spec.holderIdentity}=third',
        '--timeout=1s',
      ]);
      expect(never.code).not.toBe(0);
      expect(never.stderr).toContain('timed out waiting for the condition');
    });

    it('wait --for=delete waits while a finalizer holds the object, and returns once it is gone', async () => {
      await kubectl.ok(['create', '-f', '-'], {
        input: configMap('held', { v: '1' }, {}, { finalizers: ['example.com/hold'] }),
      });
      await kubectl.ok(['delete', 'configmap', 'held', '-n', NS, '--wait=false']);
      const terminating = await kubectl.json(['get', 'configmap', 'held', '-n', NS]);
      expect(terminating.metadata.deletionTimestamp).toBeTruthy();

      const waiting = kubectl.run(['wait', 'configmap/held', '-n', NS, '--for=delete', '--timeout=20s'], {
        timeoutMs: 25_000,
      });
      const done = settledFlag(waiting);
      await sleep(1_000);
      expect(done()).toBe(false);
      await kubectl.ok([
        'patch',
        'configmap',
        'held',
        '-n',
        NS,
        '--type=json',
        '-p',
        '[{"op":"remove","path":"/metadata/finalizers"}]',
      ]);
      const r = await waiting;
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.trim()).toBe('configmap/held condition met');
      const gone = await kubectl.run(['get', 'configmap', 'held', '-n', NS]);
      expect(gone.stderr).toContain('NotFound');
    });

    it('delete -f examples/ removes every example', async () => {
      const examples = await loadExamples();
      // Self-contained: make sure the examples exist (unchanged when the apply test already ran).
      await kubectl.ok(['apply', '-f', EXAMPLES_DIR], { timeoutMs: 30_000 });

      // 00-namespace.yaml is deleted first, and the namespace controller may empty `demo` before kubectl
      // gets to the namespaced examples; those are then already gone, hence --ignore-not-found.
      const out = await kubectl.ok(['delete', '-f', EXAMPLES_DIR, '--ignore-not-found', '--timeout=30s'], {
        timeoutMs: 40_000,
      });
      expect(out).toContain('namespace "demo" deleted');
      // Cluster-scoped examples are deleted by kubectl itself.
      for (const { object } of examples.filter((e) => !e.object.metadata.namespace && e.object.kind !== 'Namespace')) {
        const group = object.apiVersion.split('/')[0];
        expect(out).toContain(`${object.kind.toLowerCase()}.${group} "${object.metadata.name}" deleted`);
      }

      const lookups = await Promise.all(
        examples.map(({ object }) => kubectl.run(['get', ...objectArgs(resources, object)])),
      );
      lookups.forEach((r, i) => {
        const { object } = examples[i];
        expect(r.code, `${object.kind} ${object.metadata.name} is gone`).not.toBe(0);
        expect(r.stderr).toContain('NotFound');
      });
    });
  },
);
