/**
 * The API server's own controllers, on both substrates: against a cluster of the kubernetes flavor reached through a
 * kubeconfig, the daemon's default controllers leave out those kube-apiserver runs itself (APIService availability,
 * ValidatingAdmissionPolicy type checking, the coordinated election), so two writers never fight over one status.
 * On the real cluster kube-apiserver writes those statuses, and none of the writes is the daemon's.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/meta.ts';
import { eventually } from '../support/eventually.ts';
import { describeOnSubstrate, type SubstrateDaemon } from '../support/substrate.ts';

const API_SERVER_OWN = [
  'apiservice-availability-controller',
  'validatingadmissionpolicy-status-controller',
  'leader-election-controller',
];
/** How long the embedded substrate, where nobody writes these statuses, is watched for a write of the daemon's. */
const QUIET_MS = 3_000;

interface Managed {
  manager?: string;
  subresource?: string;
}

describeOnSubstrate('apiserver-own', (s) => {
  let daemon: SubstrateDaemon;
  /** The managers that wrote the object's status. */
  const statusWriters = (obj: KubeObject) =>
    ((obj.metadata.managedFields ?? []) as Managed[]).filter((m) => m.subresource === 'status').map((m) => m.manager);

  beforeAll(async () => {
    daemon = await s().startDaemon();
  });

  // An APIService whose server is missing fails discovery of its group, and kube-apiserver's namespace deletion
  // waits for all of discovery: left behind, it would keep every namespace of the shared cluster from going.
  afterAll(async () => {
    await s()
      .admin.kind('APIService')
      .delete(undefined, `v1alpha1.${s().name('metrics')}.example.com`)
      .catch(() => undefined);
  });

  it("leaves the API server's own controllers out of its defaults", () => {
    const started = daemon.proc.lines.find((l) => l.msg === 'controllers started');
    const names = started?.controllers as string[];
    expect(names).toEqual(expect.arrayContaining(['disruption-controller', 'clusterrole-aggregation-controller']));
    for (const name of API_SERVER_OWN) expect(names).not.toContain(name);
  });

  it('writes no APIService availability and no policy type checking; kube-apiserver does, where it runs', async () => {
    const ns = await s().namespace('apis');
    const group = `${s().name('metrics')}.example.com`;
    const apiServices = s().admin.kind('APIService');
    await apiServices.create({
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: `v1alpha1.${group}` },
      spec: {
        group,
        version: 'v1alpha1',
        service: { namespace: ns, name: 'metrics-server', port: 443 },
        groupPriorityMinimum: 1000,
        versionPriority: 15,
      },
    });
    const policies = s().admin.kind('ValidatingAdmissionPolicy');
    await policies.create({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: s().name('replicas') },
      spec: {
        matchConstraints: {
          resourceRules: [
            { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] },
          ],
        },
        // An int compared with a string: a type checker warns.
        validations: [{ expression: "object.spec.replicas == 'three'" }],
      },
    });
    const read = async () => ({
      apiService: await apiServices.get(undefined, `v1alpha1.${group}`),
      policy: await policies.get(undefined, s().name('replicas')),
    });
    let now = await read();
    if (s().kind === 'real') {
      now = await eventually(
        async () => {
          const r = await read();
          const available = (r.apiService.status as any)?.conditions?.find((c: any) => c.type === 'Available');
          const warnings = (r.policy.status as any)?.typeChecking?.expressionWarnings;
          return available && warnings?.length ? r : undefined;
        },
        30_000,
        'kube-apiserver writing the APIService Available condition and the policy type checking',
        200,
      );
      expect((now.apiService.status as any).conditions).toContainEqual(
        expect.objectContaining({ type: 'Available', status: 'False', reason: 'ServiceNotFound' }),
      );
      expect((now.policy.status as any).typeChecking.expressionWarnings).toEqual([
        expect.objectContaining({ fieldRef: 'spec.validations[0].expression' }),
      ]);
    } else {
      await new Promise((r) => setTimeout(r, QUIET_MS));
      now = await read();
      expect((now.apiService.status as any)?.conditions ?? []).toEqual([]);
      expect((now.policy.status as any)?.typeChecking).toBeUndefined();
    }
    for (const obj of [now.apiService, now.policy]) {
      expect(statusWriters(obj)).not.toContain(s().naming.controllerManager);
    }
    // What a status write of the daemon's looks like: a budget's, which only the daemon computes.
    const budgets = s().admin.kind('PodDisruptionBudget');
    await budgets.create({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { namespace: ns, name: 'any' },
      spec: { minAvailable: 1, selector: { matchLabels: { app: 'none' } } },
    });
    const budget = await eventually(
      async () => {
        const b = await budgets.get(ns, 'any');
        return (b.status as any)?.observedGeneration ? b : undefined;
      },
      30_000,
      "the daemon's budget status",
      100,
    );
    expect(statusWriters(budget)).toEqual([s().naming.controllerManager]);
    expect(daemon.proc.lines.filter((l) => /apiservice|admission ?policy/i.test(JSON.stringify(l)))).toEqual([]);
  });
});
