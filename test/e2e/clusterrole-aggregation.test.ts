/**
 * ClusterRole aggregation end to end on both substrates: our daemon (as its own ServiceAccount, with the shipped
 * RBAC: its writes pass the API server's escalation check) fills an aggregated role with the rules of the roles its
 * selectors match, follows labels coming and going, and keeps the default `view` role aggregated (on the real
 * cluster, kube-controller-manager's aggregation controller is off: ours is the only one).
 */
import { beforeAll, expect, it } from 'vitest';
import type { ClusterRole, PolicyRule } from '../../src/api/types/rbac.ts';
import { eventually } from '../support/eventually.ts';
import { describeOnSubstrate } from '../support/substrate.ts';

const WAIT_MS = 30_000;

/** A rule as text with its fields in one order (kube-apiserver answers in its struct's order, not the writer's). */
const key = (rule: PolicyRule) =>
  JSON.stringify([rule.apiGroups, rule.resources, rule.resourceNames, rule.nonResourceURLs, rule.verbs]);
const sameRules = (a: PolicyRule[] | undefined, b: PolicyRule[]) =>
  JSON.stringify((a ?? []).map(key).sort()) === JSON.stringify(b.map(key).sort());

describeOnSubstrate('aggregation', (s) => {
  const roles = () => s().admin.kind<ClusterRole>('ClusterRole');
  const label = () => `${s().name('aggregate')}.example.com/to-monitoring`;
  const readPods: PolicyRule = { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] };
  // A permission the daemon itself does not hold: writing it takes the `escalate` verb the shipped RBAC grants.
  const deleteSecrets: PolicyRule = { apiGroups: [''], resources: ['secrets'], verbs: ['delete'] };
  const viewWidgets: PolicyRule = { apiGroups: ['widgets.example.com'], resources: ['widgets'], verbs: ['get'] };

  /** Waits until the role's rules are exactly these (in any order); its last rules in the failure. */
  const rulesOf = async (name: string, want: PolicyRule[]) => {
    let last: PolicyRule[] | undefined;
    await eventually(
      async () => {
        last = (await roles().get(undefined, name)).rules;
        return sameRules(last, want);
      },
      WAIT_MS,
      () => `${name}'s rules ${JSON.stringify(want)}; last ${JSON.stringify(last)}`,
      100,
    );
  };
  const role = (name: string, labels: Record<string, string>, rules: PolicyRule[]) =>
    roles().create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name, labels },
      rules,
    });

  beforeAll(async () => {
    await s().startDaemon();
  });

  it('fills an aggregated role with the rules of the roles it selects, and follows their labels', async () => {
    const monitoring = s().name('monitoring');
    await roles().create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: monitoring },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [label()]: 'true' } }] },
    });
    await role(s().name('pods-reader'), { [label()]: 'true' }, [readPods]);
    await role(s().name('secrets-deleter'), { [label()]: 'true' }, [deleteSecrets]);
    await rulesOf(monitoring, [readPods, deleteSecrets]);

    // A label taken away takes the role's rules with it.
    const deleter = await roles().get(undefined, s().name('secrets-deleter'));
    await roles().replace({ ...deleter, metadata: { ...deleter.metadata, labels: {} } });
    await rulesOf(monitoring, [readPods]);
    // And a deleted role too: nothing is left.
    await roles().delete(undefined, s().name('pods-reader'));
    await rulesOf(monitoring, []);
  });

  it('aggregates a role labelled for the default view role into it, and takes it out again', async () => {
    const viewLabel = `rbac.authorization.k8s.io/aggregate-to-view`;
    const before = (await roles().get(undefined, 'view')).rules ?? [];
    expect(before.length).toBeGreaterThan(0);
    expect(before.map(key)).not.toContain(key(viewWidgets));
    await role(s().name('view-widgets'), { [viewLabel]: 'true' }, [viewWidgets]);
    await rulesOf('view', [...before, viewWidgets]);
    await roles().delete(undefined, s().name('view-widgets'));
    await rulesOf('view', before);
  });
});
