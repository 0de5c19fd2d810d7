import { describe, expect, it } from 'vitest';
import { validateConfigMapCreate, validateConfigMapUpdate } from './config-map.ts';
import { validatePodCreate } from './pod.ts';
import { validateClusterRoleCreate, validateRoleCreate } from './role.ts';

const messages = (errs: { message: string }[]) => errs.map((e) => e.message);
const cm = (extra: Record<string, unknown>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', namespace: 'n' },
  ...extra,
});

describe('ConfigMap rules', () => {
  it.each([
    ['good keys', { data: { 'a.b_c-D': 'v' }, binaryData: { bin: 'AAE=' } }, []],
    [
      'a key with a slash',
      { data: { 'a/b': 'v' } },
      [
        `data[a/b]: Invalid value: "a/b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
      ],
    ],
    [
      'a key in both maps',
      { data: { k: 'v' }, binaryData: { k: 'AA==' } },
      ['data[k]: Invalid value: "k": duplicate of key present in binaryData'],
    ],
    [
      'more than 1 MiB',
      { data: { big: 'x'.repeat(1024 * 1024) } },
      ['[]: Too long: may not be more than 1048576 bytes'],
    ],
    ['1 MiB exactly', { data: { big: 'x'.repeat(1024 * 1024 - 3) } }, []],
  ])('%s', (_name, fields, expected) => {
    expect(messages(validateConfigMapCreate(cm(fields)))).toEqual(expected);
  });

  it('keeps an immutable ConfigMap’s data', () => {
    const old = {
      ...cm({ data: { k: 'v' }, immutable: true }),
      metadata: { name: 'c', namespace: 'n', resourceVersion: '1' },
    };
    const next = { ...old, data: { k: 'w' } };
    expect(messages(validateConfigMapUpdate(next, old))).toEqual([
      'data: Forbidden: field is immutable when `immutable` is set',
    ]);
    expect(validateConfigMapUpdate({ ...old, metadata: { ...old.metadata, labels: { a: 'b' } } }, old)).toEqual([]);
  });
});

describe('policy rules of roles', () => {
  const role = (rules: unknown[]) => ({ metadata: { name: 'r', namespace: 'n' }, rules });
  const clusterRole = (rules: unknown[]) => ({ metadata: { name: 'system:r' }, rules });
  it.each([
    ['a resource rule', [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }], []],
    ['a URL rule', [{ nonResourceURLs: ['/healthz'], verbs: ['get'] }], []],
    [
      'no groups or resources',
      [{ verbs: ['get'] }],
      [
        'rules[0].apiGroups: Required value: resource rules must supply at least one api group',
        'rules[0].resources: Required value: resource rules must supply at least one resource',
      ],
    ],
    [
      'no verbs',
      [{ apiGroups: [''], resources: ['pods'] }],
      ['rules[0].verbs: Required value: verbs must contain at least one value'],
    ],
  ])('ClusterRole: %s', (_name, rules, expected) => {
    expect(messages(validateClusterRoleCreate(clusterRole(rules)))).toEqual(expected);
  });

  it('refuses URLs in a Role, and URLs beside resources', () => {
    const [onlyOne] = validateRoleCreate(role([{ nonResourceURLs: ['/x'], verbs: ['get'] }]));
    expect(onlyOne.message).toContain('namespaced rules cannot apply to non-resource URLs');
    const [both] = validateClusterRoleCreate(
      clusterRole([{ nonResourceURLs: ['/x'], resources: ['pods'], verbs: ['get'] }]),
    );
    expect(both.message).toContain('rules cannot apply to both regular resources and non-resource URLs');
  });
});

describe('pod rules', () => {
  it('requires a container', () => {
    const pod = { metadata: { name: 'p', namespace: 'n' }, spec: {} };
    expect(messages(validatePodCreate(pod))).toEqual(['spec.containers: Required value']);
    expect(validatePodCreate({ ...pod, spec: { containers: [{ name: 'c', image: 'i' }] } })).toEqual([]);
  });
});
