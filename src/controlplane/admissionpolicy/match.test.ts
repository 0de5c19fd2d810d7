import { describe, expect, it } from 'vitest';
import type { MatchResources, NamedRuleWithOperations } from '../../api/types/admission.ts';
import { matches, type RequestFacts, ruleMatches } from './match.ts';

const deployment: RequestFacts = {
  operation: 'CREATE',
  group: 'apps',
  version: 'v1',
  resource: 'deployments',
  subresource: '',
  name: 'web',
  namespaced: true,
  objectLabels: { app: 'web' },
  namespaceLabels: { env: 'prod' },
};
const rule = (r: Partial<NamedRuleWithOperations>): NamedRuleWithOperations => ({
  operations: ['*'],
  apiGroups: ['apps'],
  apiVersions: ['v1'],
  resources: ['deployments'],
  ...r,
});

describe('resource rules', () => {
  it.each<[string, Partial<NamedRuleWithOperations>, Partial<RequestFacts>, boolean]>([
    ['exact', {}, {}, true],
    ['operation listed', { operations: ['CREATE', 'UPDATE'] }, {}, true],
    ['operation not listed', { operations: ['UPDATE'] }, {}, false],
    ['other group', { apiGroups: [''] }, {}, false],
    ['wildcard group and version', { apiGroups: ['*'], apiVersions: ['*'] }, {}, true],
    ['other version', { apiVersions: ['v2'] }, {}, false],
    ['wildcard resource', { resources: ['*'] }, {}, true],
    ['a plain resource never matches a subresource', {}, { subresource: 'scale' }, false],
    ['resource/subresource', { resources: ['deployments/scale'] }, { subresource: 'scale' }, true],
    ['resource/*', { resources: ['deployments/*'] }, { subresource: 'status' }, true],
    ['*/subresource', { resources: ['*/status'] }, { subresource: 'status' }, true],
    ['*/* takes everything', { resources: ['*/*'] }, { subresource: 'status' }, true],
    ['*/* takes main resources too', { resources: ['*/*'] }, {}, true],
    ['scope Namespaced on a namespaced resource', { scope: 'Namespaced' }, {}, true],
    ['scope Cluster on a namespaced resource', { scope: 'Cluster' }, {}, false],
    [
      'a Namespace is cluster-scoped',
      { apiGroups: [''], resources: ['namespaces'], scope: 'Cluster' },
      { group: '', resource: 'namespaces', namespaced: false },
      true,
    ],
    ['resource names', { resourceNames: ['web', 'api'] }, {}, true],
    ['other resource names', { resourceNames: ['api'] }, {}, false],
  ])('%s', (_, r, req, want) => {
    expect(ruleMatches(rule(r), { ...deployment, ...req })).toBe(want);
  });
});

describe('match resources', () => {
  const base: MatchResources = { resourceRules: [rule({})], namespaceSelector: {}, objectSelector: {} };
  it.each<[string, Partial<MatchResources>, Partial<RequestFacts>, boolean]>([
    ['matching rule, empty selectors', {}, {}, true],
    ['no matching rule', { resourceRules: [rule({ resources: ['pods'] })] }, {}, false],
    ['excluded', { excludeResourceRules: [rule({ resourceNames: ['web'] })] }, {}, false],
    ['exclusion of another name', { excludeResourceRules: [rule({ resourceNames: ['api'] })] }, {}, true],
    ['namespace selector matches', { namespaceSelector: { matchLabels: { env: 'prod' } } }, {}, true],
    ['namespace selector does not match', { namespaceSelector: { matchLabels: { env: 'dev' } } }, {}, false],
    [
      'namespace selector ignores cluster-scoped objects',
      {
        namespaceSelector: { matchLabels: { env: 'dev' } },
        resourceRules: [rule({ resources: ['*'], apiGroups: ['*'] })],
      },
      { group: 'rbac', resource: 'clusterroles', namespaced: false },
      true,
    ],
    [
      'a Namespace is selected by its own labels',
      {
        namespaceSelector: { matchLabels: { env: 'dev' } },
        resourceRules: [rule({ apiGroups: [''], resources: ['namespaces'] })],
      },
      { group: '', resource: 'namespaces', namespaced: false, objectLabels: { env: 'dev' } },
      true,
    ],
    [
      'namespace selector expressions',
      { namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }] } },
      {},
      false,
    ],
    ['object selector matches the new object', { objectSelector: { matchLabels: { app: 'web' } } }, {}, true],
    [
      'object selector matches the old object',
      { objectSelector: { matchLabels: { app: 'old' } } },
      { operation: 'DELETE', objectLabels: undefined, oldObjectLabels: { app: 'old' } },
      true,
    ],
    ['object selector matches neither', { objectSelector: { matchLabels: { app: 'api' } } }, {}, false],
  ])('%s', (_, m, req, want) => {
    expect(matches({ ...base, ...m }, { ...deployment, ...req })).toBe(want);
  });

  it('lets a binding without resource rules narrow by selectors only', () => {
    expect(matches({ namespaceSelector: {}, objectSelector: {} }, deployment, true)).toBe(true);
    expect(matches({ namespaceSelector: {}, objectSelector: {} }, deployment, false)).toBe(false);
    expect(matches({ namespaceSelector: { matchLabels: { env: 'dev' } } }, deployment, true)).toBe(false);
  });
});
