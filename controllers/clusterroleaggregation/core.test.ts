import { describe, expect, it } from 'vitest';
import { selects } from '../../src/api/aggregation.ts';
import type { LabelSelector } from '../../src/api/meta.ts';
import type { ClusterRole, PolicyRule } from '../../src/api/types/rbac.ts';
import { aggregateRules, sameRules } from './core.ts';

const role = (name: string, labels: Record<string, string>, rules: PolicyRule[]): ClusterRole => ({
  metadata: { name, labels },
  rules,
});
const aggregator = (name: string, selectors: LabelSelector[], rules: PolicyRule[] = [], labels = {}): ClusterRole => ({
  metadata: { name, labels },
  aggregationRule: { clusterRoleSelectors: selectors },
  rules,
});
const get = (resource: string): PolicyRule => ({ verbs: ['get'], apiGroups: [''], resources: [resource] });

describe('aggregateRules', () => {
  const a = role('a', { view: 'true' }, [get('pods'), get('services')]);
  const b = role('b', { view: 'true', edit: 'true' }, [get('services'), get('secrets')]);
  const c = role('c', { edit: 'true' }, [get('configmaps')]);
  const unlabelled = role('d', {}, [get('nodes')]);

  it('takes the union over matching roles, by name within a selector, selectors in order, duplicates once', () => {
    const view = aggregator('view', [{ matchLabels: { edit: 'true' } }, { matchLabels: { view: 'true' } }]);
    expect(aggregateRules(view, [c, unlabelled, b, a, view])).toEqual([
      get('services'), // b (edit)
      get('secrets'), // b
      get('configmaps'), // c
      get('pods'), // a (view), then b again: nothing new
    ]);
  });

  it('never includes the role itself, even when its own labels match', () => {
    const self = aggregator('self', [{ matchLabels: { view: 'true' } }], [get('stale')], { view: 'true' });
    expect(aggregateRules(self, [self, a])).toEqual([get('pods'), get('services')]);
  });

  it('drops hand-written rules and gives nothing when no role matches', () => {
    const lonely = aggregator('lonely', [{ matchLabels: { nothing: 'here' } }], [get('pods')]);
    expect(aggregateRules(lonely, [a, b])).toEqual([]);
  });

  it('supports expressions; an empty selector matches every other role', () => {
    const expr = aggregator('expr', [{ matchExpressions: [{ key: 'edit', operator: 'Exists' }] }]);
    expect(aggregateRules(expr, [a, b, c])).toEqual([get('services'), get('secrets'), get('configmaps')]);
    const all = aggregator('all', [{}]);
    expect(aggregateRules(all, [all, unlabelled])).toEqual([get('nodes')]);
  });

  it('keeps rules that differ only in order (no normalization) and treats empty and missing lists alike', () => {
    const x = role('x', { v: '1' }, [
      { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] },
      { verbs: ['list', 'get'], apiGroups: [''], resources: ['pods'] },
      { verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: [] },
      { verbs: ['get'], apiGroups: [''], resources: ['pods'] },
    ]);
    const rules = aggregateRules(aggregator('agg', [{ matchLabels: { v: '1' } }]), [x]);
    expect(rules).toHaveLength(3);
  });

  it('reads other aggregated roles with their current rules (chains)', () => {
    const edit = aggregator('edit', [{ matchLabels: { edit: 'true' } }], [get('configmaps')], { admin: 'true' });
    const admin = aggregator('admin', [{ matchLabels: { admin: 'true' } }]);
    expect(aggregateRules(admin, [admin, edit, c])).toEqual([get('configmaps')]);
  });

  it('throws on a malformed selector', () => {
    const bad = aggregator('bad', [{ matchExpressions: [{ key: 'x', operator: 'Sometimes' as 'In' }] }]);
    expect(() => aggregateRules(bad, [a])).toThrow(/not a valid label selector operator/);
    expect(selects(bad, a)).toBe(false);
  });
});

describe('sameRules and selects', () => {
  it('compares rules semantically: nil and empty equal, order within lists significant', () => {
    expect(sameRules(undefined, [])).toBe(true);
    expect(sameRules([{ verbs: ['get'], resourceNames: [] }], [{ verbs: ['get'] }])).toBe(true);
    expect(sameRules([{ verbs: ['get', 'list'] }], [{ verbs: ['list', 'get'] }])).toBe(false);
  });

  it('tells which roles an aggregator picks up, never itself', () => {
    const view = aggregator('view', [{ matchLabels: { view: 'true' } }], [], { view: 'true' });
    expect(selects(view, role('r', { view: 'true' }, []))).toBe(true);
    expect(selects(view, role('r', { view: 'false' }, []))).toBe(false);
    expect(selects(view, view)).toBe(false);
  });
});
