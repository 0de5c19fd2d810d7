import { describe, expect, it } from 'vitest';
import type { PolicyRule } from '../../api/types/index.ts';
import { breakdown, compact, compactString, describeMissing, ruleCovers, uncovered } from './covers.ts';

const r = (verbs: string[], apiGroups: string[], resources: string[], resourceNames?: string[]): PolicyRule => ({
  verbs,
  apiGroups,
  resources,
  ...(resourceNames ? { resourceNames } : {}),
});
const url = (verbs: string[], ...nonResourceURLs: string[]): PolicyRule => ({ verbs, nonResourceURLs });

describe('breakdown', () => {
  it('expands a rule into one atom per group, resource, verb and name', () => {
    expect(breakdown(r(['get', 'list'], ['', 'apps'], ['pods'], ['a', 'b']))).toEqual([
      r(['get'], [''], ['pods'], ['a']),
      r(['get'], [''], ['pods'], ['b']),
      r(['list'], [''], ['pods'], ['a']),
      r(['list'], [''], ['pods'], ['b']),
      r(['get'], ['apps'], ['pods'], ['a']),
      r(['get'], ['apps'], ['pods'], ['b']),
      r(['list'], ['apps'], ['pods'], ['a']),
      r(['list'], ['apps'], ['pods'], ['b']),
    ]);
  });

  it('expands non-resource URLs by verb only', () => {
    expect(breakdown(url(['get', 'post'], '/healthz', '/metrics'))).toEqual([
      url(['get'], '/healthz'),
      url(['post'], '/healthz'),
      url(['get'], '/metrics'),
      url(['post'], '/metrics'),
    ]);
  });

  it('yields nothing for a rule that grants nothing (no verbs, or resources without groups)', () => {
    expect(breakdown(r([], [''], ['pods']))).toEqual([]);
    expect(breakdown({ verbs: ['get'], resources: ['pods'] })).toEqual([]);
  });

  it('keeps malformed entries as text, so that they are never covered by accident', () => {
    const bad = { verbs: [7], apiGroups: [''], resources: ['pods'] } as unknown as PolicyRule;
    expect(breakdown(bad)).toEqual([r(['7'], [''], ['pods'])]);
    expect(uncovered([r(['get'], [''], ['pods'])], [bad])).toHaveLength(1);
  });
});

describe('ruleCovers (one held rule against one atom)', () => {
  it.each<[string, PolicyRule, PolicyRule, boolean]>([
    ['same verb, group, resource', r(['get'], [''], ['pods']), r(['get'], [''], ['pods']), true],
    ['another verb', r(['get'], [''], ['pods']), r(['delete'], [''], ['pods']), false],
    ['another group', r(['get'], [''], ['pods']), r(['get'], ['apps'], ['pods']), false],
    ['another resource', r(['get'], [''], ['pods']), r(['get'], [''], ['secrets']), false],
    ['held * verb', r(['*'], [''], ['secrets']), r(['escalate'], [''], ['secrets']), true],
    ['held * group', r(['get'], ['*'], ['pods']), r(['get'], ['apps'], ['pods']), true],
    ['held * resource', r(['get'], [''], ['*']), r(['get'], [''], ['secrets']), true],
    ['requested * verb needs a held *', r(['get', 'list', 'watch'], [''], ['pods']), r(['*'], [''], ['pods']), false],
    ['requested * resource needs a held *', r(['get'], [''], ['pods']), r(['get'], [''], ['*']), false],
    ['requested * group needs a held *', r(['get'], [''], ['pods']), r(['get'], ['*'], ['pods']), false],
    ['subresource held exactly', r(['get'], [''], ['pods/log']), r(['get'], [''], ['pods/log']), true],
    ['a resource does not cover its subresources', r(['get'], [''], ['pods']), r(['get'], [''], ['pods/log']), false],
    ['a subresource does not cover its resource', r(['get'], [''], ['pods/log']), r(['get'], [''], ['pods']), false],
    [
      '*/sub covers that subresource of any resource',
      r(['get'], [''], ['*/scale']),
      r(['get'], [''], ['deployments/scale']),
      true,
    ],
    ['*/sub covers no other subresource', r(['get'], [''], ['*/scale']), r(['get'], [''], ['pods/log']), false],
    ['*/sub covers no plain resource', r(['get'], [''], ['*/scale']), r(['get'], [''], ['pods']), false],
    ['pods/* is no wildcard over subresources', r(['get'], [''], ['pods/*']), r(['get'], [''], ['pods/log']), false],
    [
      'held names cover a named atom among them',
      r(['get'], [''], ['secrets'], ['a', 'b']),
      r(['get'], [''], ['secrets'], ['b']),
      true,
    ],
    [
      'held names cover no other name',
      r(['get'], [''], ['secrets'], ['a']),
      r(['get'], [''], ['secrets'], ['c']),
      false,
    ],
    [
      'held names never cover an unnamed atom',
      r(['get'], [''], ['secrets'], ['a']),
      r(['get'], [''], ['secrets']),
      false,
    ],
    ['no held names cover any name', r(['get'], [''], ['secrets']), r(['get'], [''], ['secrets'], ['x']), true],
    ['URL exactly', url(['get'], '/healthz'), url(['get'], '/healthz'), true],
    ['URL with another verb', url(['get'], '/healthz'), url(['post'], '/healthz'), false],
    ['URL * covers every path', url(['get'], '*'), url(['get'], '/metrics'), true],
    ['URL prefix* covers longer paths', url(['get'], '/apis/*'), url(['get'], '/apis/apps/v1'), true],
    ['URL prefix* covers the requested prefix* itself', url(['get'], '/apis/*'), url(['get'], '/apis/*'), true],
    ['a URL without * is no prefix', url(['get'], '/apis'), url(['get'], '/apis/apps'), false],
    ['a narrower prefix* does not cover a wider one', url(['get'], '/apis/apps*'), url(['get'], '/apis/*'), false],
    ['URL rules cover no resources', url(['*'], '*'), r(['get'], [''], ['pods']), false],
    ['resource rules cover no URLs', r(['*'], ['*'], ['*']), url(['get'], '/healthz'), false],
  ])('%s', (_why, held, atom, expected) => {
    expect(ruleCovers(held, atom)).toBe(expected);
  });
});

describe('uncovered', () => {
  const held = [
    r(['get', 'list'], [''], ['pods', 'configmaps']),
    r(['get'], [''], ['secrets'], ['mine']),
    url(['get'], '/healthz'),
  ];

  it('is empty when every atom is covered by some held rule', () => {
    expect(uncovered(held, [r(['get'], [''], ['pods', 'configmaps']), r(['list'], [''], ['pods'])])).toEqual([]);
    expect(uncovered(held, [r(['get'], [''], ['secrets'], ['mine']), url(['get'], '/healthz')])).toEqual([]);
    expect(uncovered(held, [])).toEqual([]);
  });

  it('lists each atom nobody covers', () => {
    expect(uncovered(held, [r(['get', 'delete'], [''], ['pods', 'secrets'])])).toEqual([
      r(['delete'], [''], ['pods']),
      r(['get'], [''], ['secrets']),
      r(['delete'], [''], ['secrets']),
    ]);
  });

  it('nothing held covers nothing', () => {
    expect(uncovered([], [url(['get'], '/version')])).toEqual([url(['get'], '/version')]);
  });

  it('cluster-admin covers everything', () => {
    const admin = [r(['*'], ['*'], ['*']), url(['*'], '*')];
    expect(
      uncovered(admin, [
        r(['*'], ['*'], ['*'], ['x']),
        url(['*'], '/anything/*'),
        r(['escalate'], ['rbac'], ['roles']),
      ]),
    ).toEqual([]);
  });
});

describe('how missing rules are written', () => {
  it('folds atoms that differ only by verb, leaving named and URL atoms alone', () => {
    const atoms = [
      r(['get'], [''], ['secrets']),
      r(['list'], [''], ['secrets']),
      r(['get'], ['apps'], ['deployments']),
      r(['get'], [''], ['secrets'], ['a']),
      url(['get'], '/metrics'),
    ];
    expect(compact(atoms)).toEqual([
      r(['get'], [''], ['secrets'], ['a']),
      url(['get'], '/metrics'),
      r(['get', 'list'], [''], ['secrets']),
      r(['get'], ['apps'], ['deployments']),
    ]);
  });

  it('prints rules as the reference does', () => {
    expect(compactString(r(['get', 'list'], [''], ['secrets']))).toBe(
      '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}',
    );
    expect(compactString(r(['get'], ['apps'], ['deployments'], ['web']))).toBe(
      '{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["web"], Verbs:["get"]}',
    );
    expect(compactString(url(['get'], '/metrics'))).toBe('{NonResourceURLs:["/metrics"], Verbs:["get"]}');
  });

  it('lists distinct rules sorted, one a line', () => {
    const atoms = [r(['list'], [''], ['secrets']), url(['get'], '/metrics'), r(['get'], ['apps'], ['deployments'])];
    expect(describeMissing([...atoms, ...atoms])).toBe(
      [
        '{APIGroups:[""], Resources:["secrets"], Verbs:["list"]}',
        '{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}',
        '{NonResourceURLs:["/metrics"], Verbs:["get"]}',
      ].join('\n'),
    );
  });
});
