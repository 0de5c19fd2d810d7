import { describe, expect, it } from 'vitest';
import { CONTROLLER_ACCOUNTS, trustBundlePublisherAccount } from '../../api/controller-accounts.ts';
import type { KubeObject } from '../../api/meta.ts';
import { FLAVORS, group, naming } from '../../api/naming.ts';
import { ResourceRegistry } from '../../api/registry.ts';
import type { PolicyRule, Subject } from '../../api/types/index.ts';
import type { UserInfo } from '../admission.ts';
import { ApiError } from '../errors.ts';
import { allowedOnSigner } from '../plugins/authorize.ts';
import { parseRequest } from '../request-info.ts';
import { Storage } from '../storage.ts';
import {
  AlwaysAllowAuthorizer,
  type AuthorizationAttributes,
  accessChecker,
  aggregate,
  apiGroupMatches,
  defaultPolicy,
  forbiddenError,
  forbiddenMessage,
  nonResourceURLMatches,
  RbacAuthorizer,
  requestAttributes,
  requestAuthorizer,
  resourceMatches,
  resourceNameMatches,
  ruleAllows,
  subjectMatches,
  verbMatches,
} from './rbac.ts';

const rule = (r: Partial<PolicyRule>): PolicyRule => ({ verbs: [], ...r });
const user = (username: string, ...groups: string[]): UserInfo => ({ username, groups });

describe('rule matching', () => {
  it.each([
    [['get'], 'get', true],
    [['get'], 'list', false],
    [['get', 'list'], 'list', true],
    [['*'], 'deletecollection', true],
    [[], 'get', false],
    [['GET'], 'get', false],
  ])('verbs %j vs %s → %s', (verbs, verb, want) => {
    expect(verbMatches(rule({ verbs }), verb)).toBe(want);
  });

  it.each([
    [[''], '', true],
    [[''], 'apps', false],
    [['apps'], '', false],
    [['apps'], 'apps', true],
    [['*'], 'anything.example', true],
    [['*'], '', true],
    [[], '', false],
  ])('apiGroups %j vs %j → %s', (apiGroups, g, want) => {
    expect(apiGroupMatches(rule({ apiGroups }), g)).toBe(want);
  });

  it.each([
    // [rule resources, request resource, request subresource, allowed]
    [['pods'], 'pods', '', true],
    [['pods'], 'pods', 'status', false],
    [['pods/status'], 'pods', 'status', true],
    [['pods/status'], 'pods', '', false],
    [['pods/status'], 'pods', 'eviction', false],
    [['*'], 'pods', '', true],
    [['*'], 'pods', 'status', true],
    [['*/status'], 'pods', 'status', true],
    [['*/status'], 'deployments', 'status', true],
    [['*/status'], 'pods', '', false],
    [['*/scale'], 'pods', 'status', false],
    [['*/tatus'], 'pods', 'status', false],
    // the reference has no `resource/*` wildcard: it only matches the literal subresource `*`
    [['pods/*'], 'pods', 'status', false],
    [['pods/*'], 'pods', '', false],
    [['pods/*'], 'pods', '*', true],
    [['services', 'pods'], 'pods', '', true],
    [[], 'pods', '', false],
  ])('resources %j vs %s/%s → %s', (resources, resource, subresource, want) => {
    const combined = subresource ? `${resource}/${subresource}` : resource;
    expect(resourceMatches(rule({ resources }), combined, subresource)).toBe(want);
  });

  it.each([
    [[], 'web', true],
    [[], '', true],
    [['web'], 'web', true],
    [['web'], 'db', false],
    // a rule with names never covers a request without one (list, watch, create, deletecollection)
    [['web'], '', false],
  ])('resourceNames %j vs %j → %s', (resourceNames, name, want) => {
    expect(resourceNameMatches(rule({ resourceNames }), name)).toBe(want);
  });

  it.each([
    [['*'], '/anything/at/all', true],
    [['/healthz'], '/healthz', true],
    [['/healthz'], '/healthz/', false],
    [['/healthz'], '/healthz/etcd', false],
    [['/api/*'], '/api/v1', true],
    [['/api/*'], '/api/', true],
    [['/api/*'], '/api', false],
    [['/api/*'], '/apis', false],
    [['/api*'], '/apis/apps', true],
    [['/api**'], '/api', true],
    [['/metrics'], '/metrics/slis', false],
    [[], '/healthz', false],
  ])('nonResourceURLs %j vs %s → %s', (nonResourceURLs, path, want) => {
    expect(nonResourceURLMatches(rule({ nonResourceURLs }), path)).toBe(want);
  });

  const podReader = rule({ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] });
  const namedPods = rule({
    verbs: ['get', 'list', 'update'],
    apiGroups: [''],
    resources: ['pods'],
    resourceNames: ['web'],
  });
  it.each<[string, PolicyRule, AuthorizationAttributes, boolean]>([
    ['every part matches', podReader, { verb: 'list', group: '', resource: 'pods', namespace: 'a' }, true],
    ['verb differs', podReader, { verb: 'delete', group: '', resource: 'pods', name: 'x' }, false],
    ['group differs', podReader, { verb: 'list', group: 'apps', resource: 'pods' }, false],
    [
      'subresource not granted',
      podReader,
      { verb: 'get', group: '', resource: 'pods', subresource: 'status', name: 'x' },
      false,
    ],
    ['named get within resourceNames', namedPods, { verb: 'get', group: '', resource: 'pods', name: 'web' }, true],
    ['named get outside resourceNames', namedPods, { verb: 'get', group: '', resource: 'pods', name: 'db' }, false],
    ['list without a name', namedPods, { verb: 'list', group: '', resource: 'pods' }, false],
    ['resource rule vs a path', podReader, { verb: 'get', path: '/api' }, false],
    ['path rule vs a path', rule({ verbs: ['get'], nonResourceURLs: ['/api'] }), { verb: 'get', path: '/api' }, true],
    [
      'path rule, other verb',
      rule({ verbs: ['get'], nonResourceURLs: ['/api'] }),
      { verb: 'post', path: '/api' },
      false,
    ],
    [
      'path rule vs a resource',
      rule({ verbs: ['*'], nonResourceURLs: ['*'] }),
      { verb: 'get', group: '', resource: 'pods' },
      false,
    ],
  ])('ruleAllows: %s', (_name, r, attrs, want) => {
    expect(ruleAllows(attrs, r)).toBe(want);
  });

  it.each<[string, Subject, string, boolean]>([
    ['user by name', { kind: 'User', name: 'alice' }, '', true],
    ['other user', { kind: 'User', name: 'bob' }, '', false],
    ['group member', { kind: 'Group', name: 'devs' }, '', true],
    ['not a member', { kind: 'Group', name: 'ops' }, '', false],
    ['service account with namespace', { kind: 'ServiceAccount', name: 'builder', namespace: 'ci' }, '', true],
    ['service account, other namespace', { kind: 'ServiceAccount', name: 'builder', namespace: 'prod' }, '', false],
    ['service account, binding namespace', { kind: 'ServiceAccount', name: 'builder' }, 'ci', true],
    ['service account, no namespace at all', { kind: 'ServiceAccount', name: 'builder' }, '', false],
    ['unknown kind', { kind: 'Robot', name: 'alice' }, '', false],
  ])('subjectMatches: %s', (_name, subject, ns, want) => {
    const u = subject.kind === 'ServiceAccount' ? user('system:serviceaccount:ci:builder') : user('alice', 'devs');
    expect(subjectMatches(u, subject, ns)).toBe(want);
  });

  it('aggregates errors as the reference: one alone, distinct ones in brackets', () => {
    expect(aggregate(['a'])).toBe('a');
    expect(aggregate(['a', 'a'])).toBe('a');
    expect(aggregate(['a', 'b', 'a'])).toBe('[a, b]');
  });
});

describe.each(FLAVORS)('RbacAuthorizer (%s flavor)', (flavor) => {
  const registry = new ResourceRegistry(flavor);
  const rbac = group(registry.naming, 'rbac.authorization');
  const certificates = group(registry.naming, 'certificates');

  function setup() {
    const storage = new Storage();
    const put = (kind: string, obj: Record<string, unknown>) => {
      const rt = registry.kind(`${rbac}/v1`, kind)!;
      return storage.create(rt, { apiVersion: `${rbac}/v1`, kind, ...obj } as KubeObject);
    };
    const remove = (kind: string, key: string) => storage.remove(registry.kind(`${rbac}/v1`, kind)!, key);
    const authz = new RbacAuthorizer(storage, registry);
    return { storage, put, remove, authz };
  }
  const ref = (kind: string, name: string) => ({ apiGroup: rbac, kind, name });
  const pods = (verb: string, namespace?: string, name?: string): AuthorizationAttributes => ({
    verb,
    group: '',
    resource: 'pods',
    ...(namespace ? { namespace } : {}),
    ...(name ? { name } : {}),
  });

  it('allows system:masters everything without consulting RBAC', () => {
    const { authz } = setup();
    expect(authz.authorize(user('root', 'system:masters'), { verb: 'delete', group: 'x', resource: 'y' })).toEqual({
      allowed: true,
      reason: '',
    });
    expect(authz.authorize(user('root', 'system:masters'), { verb: 'get', path: '/metrics' }).allowed).toBe(true);
  });

  it('denies with an empty reason when nothing is bound', () => {
    const { authz } = setup();
    expect(authz.authorize(user('alice'), pods('list', 'a'))).toEqual({ allowed: false, reason: '' });
  });

  it('grants a Role through a RoleBinding in its namespace only, naming the binding', () => {
    const { put, authz } = setup();
    put('Role', {
      metadata: { name: 'pod-reader', namespace: 'team-a' },
      rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }],
    });
    put('RoleBinding', {
      metadata: { name: 'alice-pods', namespace: 'team-a' },
      roleRef: ref('Role', 'pod-reader'),
      subjects: [{ kind: 'User', apiGroup: rbac, name: 'alice' }],
    });
    expect(authz.authorize(user('alice'), pods('list', 'team-a'))).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "alice-pods/team-a" of Role "pod-reader" to User "alice"',
    });
    expect(authz.authorize(user('alice'), pods('list', 'team-b')).allowed).toBe(false);
    expect(authz.authorize(user('alice'), pods('list')).allowed).toBe(false);
    expect(authz.authorize(user('alice'), pods('delete', 'team-a', 'x')).allowed).toBe(false);
    expect(authz.authorize(user('bob'), pods('list', 'team-a')).allowed).toBe(false);
  });

  it('scopes a ClusterRole referenced by a RoleBinding to the binding namespace', () => {
    const { put, authz } = setup();
    put('ClusterRole', {
      metadata: { name: 'csr-reader' },
      rules: [{ verbs: ['get'], apiGroups: [certificates], resources: ['certificatesigningrequests'] }],
    });
    put('ClusterRole', {
      metadata: { name: 'pod-editor' },
      rules: [{ verbs: ['*'], apiGroups: [''], resources: ['pods', 'pods/status'] }],
    });
    put('RoleBinding', {
      metadata: { name: 'devs-edit', namespace: 'team-a' },
      roleRef: ref('ClusterRole', 'pod-editor'),
      subjects: [{ kind: 'Group', apiGroup: rbac, name: 'devs' }],
    });
    const dev = user('carol', 'devs');
    expect(authz.authorize(dev, { ...pods('update', 'team-a', 'web'), subresource: 'status' })).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "devs-edit/team-a" of ClusterRole "pod-editor" to Group "devs"',
    });
    expect(authz.authorize(dev, pods('create', 'team-b')).allowed).toBe(false);
    expect(authz.authorize(dev, pods('list')).allowed).toBe(false);
    put('ClusterRoleBinding', {
      metadata: { name: 'devs-read-csrs' },
      roleRef: ref('ClusterRole', 'csr-reader'),
      subjects: [{ kind: 'Group', apiGroup: rbac, name: 'devs' }],
    });
    const csr = { verb: 'get', group: certificates, resource: 'certificatesigningrequests', name: 'csr-1' };
    expect(authz.authorize(dev, csr)).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by ClusterRoleBinding "devs-read-csrs" of ClusterRole "csr-reader" to Group "devs"',
    });
  });

  it('takes writes into account on the very next call', () => {
    const { put, remove, authz } = setup();
    const bob = user('bob');
    expect(authz.authorize(bob, pods('list', 'team-b')).allowed).toBe(false);
    put('ClusterRole', {
      metadata: { name: 'view-pods' },
      rules: [{ verbs: ['list'], apiGroups: [''], resources: ['pods'] }],
    });
    expect(authz.authorize(bob, pods('list', 'team-b')).allowed).toBe(false);
    put('RoleBinding', {
      metadata: { name: 'bob', namespace: 'team-b' },
      roleRef: ref('ClusterRole', 'view-pods'),
      subjects: [{ kind: 'User', apiGroup: rbac, name: 'bob' }],
    });
    expect(authz.authorize(bob, pods('list', 'team-b')).allowed).toBe(true);
    remove('ClusterRole', 'view-pods');
    expect(authz.authorize(bob, pods('list', 'team-b'))).toEqual({
      allowed: false,
      reason: `RBAC: clusterrole.${rbac} "view-pods" not found`,
    });
    remove('RoleBinding', 'team-b/bob');
    expect(authz.authorize(bob, pods('list', 'team-b'))).toEqual({ allowed: false, reason: '' });
  });

  it('matches service accounts, defaulting the namespace of RoleBinding subjects', () => {
    const { put, authz } = setup();
    put('ClusterRole', {
      metadata: { name: 'lister' },
      rules: [{ verbs: ['list'], apiGroups: ['*'], resources: ['*'] }],
    });
    put('RoleBinding', {
      metadata: { name: 'sa', namespace: 'ci' },
      roleRef: ref('ClusterRole', 'lister'),
      subjects: [{ kind: 'ServiceAccount', name: 'builder' }],
    });
    const sa = user('system:serviceaccount:ci:builder', 'system:serviceaccounts');
    expect(authz.authorize(sa, pods('list', 'ci'))).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "sa/ci" of ClusterRole "lister" to ServiceAccount "builder/ci"',
    });
    expect(authz.authorize(user('system:serviceaccount:other:builder'), pods('list', 'ci')).allowed).toBe(false);
  });

  it('reports every role that cannot be resolved, and still allows by the ones that can', () => {
    const { put, authz } = setup();
    const subjects = [{ kind: 'User', apiGroup: rbac, name: 'alice' }];
    put('RoleBinding', { metadata: { name: 'a', namespace: 'ns' }, roleRef: ref('Role', 'missing'), subjects });
    put('ClusterRoleBinding', { metadata: { name: 'b' }, roleRef: ref('ClusterRole', 'gone'), subjects });
    put('ClusterRoleBinding', { metadata: { name: 'c' }, roleRef: ref('Robot', 'x'), subjects });
    expect(authz.authorize(user('alice'), pods('get', 'ns', 'p'))).toEqual({
      allowed: false,
      reason: `RBAC: [clusterrole.${rbac} "gone" not found, unsupported role reference kind: "Robot", role.${rbac} "missing" not found]`,
    });
    put('Role', {
      metadata: { name: 'missing', namespace: 'ns' },
      rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
    });
    expect(authz.authorize(user('alice'), pods('get', 'ns', 'p')).allowed).toBe(true);
  });

  it('reads rules as stored, including those an aggregation filled in', () => {
    const { put, authz } = setup();
    put('ClusterRole', {
      metadata: { name: 'aggregate' },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { x: 'y' } }] },
      rules: [{ verbs: ['watch'], apiGroups: ['apps'], resources: ['deployments'] }],
    });
    put('ClusterRoleBinding', {
      metadata: { name: 'agg' },
      roleRef: ref('ClusterRole', 'aggregate'),
      subjects: [{ kind: 'User', apiGroup: rbac, name: 'alice' }],
    });
    expect(authz.authorize(user('alice'), { verb: 'watch', group: 'apps', resource: 'deployments' }).allowed).toBe(
      true,
    );
  });

  it('lists the rules of a user in a namespace, for SelfSubjectRulesReview', () => {
    const { put, authz } = setup();
    for (const obj of defaultPolicy(registry.naming)) put(obj.kind!, obj as never);
    put('Role', {
      metadata: { name: 'pod-reader', namespace: 'team-a' },
      rules: [
        { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] },
        { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['settings'] },
      ],
    });
    put('RoleBinding', {
      metadata: { name: 'alice', namespace: 'team-a' },
      roleRef: ref('Role', 'pod-reader'),
      subjects: [{ kind: 'User', apiGroup: rbac, name: 'alice' }],
    });
    put('RoleBinding', {
      metadata: { name: 'broken', namespace: 'team-a' },
      roleRef: ref('Role', 'nope'),
      subjects: [{ kind: 'User', apiGroup: rbac, name: 'alice' }],
    });
    const alice = user('alice', 'system:authenticated');
    const inA = authz.rulesFor(alice, 'team-a');
    expect(inA.incomplete).toBe(false);
    expect(inA.evaluationError).toBe(`role.${rbac} "nope" not found`);
    expect(inA.resourceRules).toContainEqual({ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] });
    expect(inA.resourceRules).toContainEqual({
      verbs: ['get'],
      apiGroups: [''],
      resources: ['configmaps'],
      resourceNames: ['settings'],
    });
    expect(inA.resourceRules).toContainEqual({
      verbs: ['create'],
      apiGroups: [group(registry.naming, 'authorization')],
      resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
    });
    expect(inA.nonResourceRules).toContainEqual({
      verbs: ['get'],
      nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'],
    });
    const inB = authz.rulesFor(alice, 'team-b');
    expect(inB.evaluationError).toBeUndefined();
    expect(inB.resourceRules.some((r) => r.resources?.includes('pods'))).toBe(false);
    expect(authz.rulesFor(user('nobody'), 'team-a')).toEqual({
      resourceRules: [],
      nonResourceRules: [],
      incomplete: false,
    });
  });

  describe('the rules a user holds and a binding grants (for the escalation check)', () => {
    const secrets: PolicyRule = { verbs: ['get'], apiGroups: [''], resources: ['secrets'] };
    const pods: PolicyRule = { verbs: ['list'], apiGroups: [''], resources: ['pods'] };
    const labelled = (name: string, label: string, rules: PolicyRule[], selects?: string) =>
      ({
        metadata: { name, labels: { [label]: 'true' } },
        rules,
        ...(selects ? { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [selects]: 'true' } }] } } : {}),
      }) as Record<string, unknown>;

    it('rulesOf: cluster bindings everywhere, role bindings in their namespace, and what failed to resolve', () => {
      const { put, authz } = setup();
      put('ClusterRole', { metadata: { name: 'pods' }, rules: [pods] });
      put('Role', { metadata: { name: 'secrets', namespace: 'a' }, rules: [secrets] });
      const subjects = [{ kind: 'User', apiGroup: rbac, name: 'alice' }];
      put('ClusterRoleBinding', { metadata: { name: 'c' }, roleRef: ref('ClusterRole', 'pods'), subjects });
      put('RoleBinding', { metadata: { name: 'r', namespace: 'a' }, roleRef: ref('Role', 'secrets'), subjects });
      put('RoleBinding', { metadata: { name: 'gone', namespace: 'a' }, roleRef: ref('Role', 'gone'), subjects });
      expect(authz.rulesOf(user('alice'), 'a')).toEqual({
        rules: [pods, secrets],
        errors: [`role.${rbac} "gone" not found`],
      });
      expect(authz.rulesOf(user('alice'), '')).toEqual({ rules: [pods], errors: [] });
      expect(authz.rulesOf(user('bob'), 'a')).toEqual({ rules: [], errors: [] });
    });

    it('grantedRules: a Role or a plain ClusterRole gives its rules; a missing one an error', () => {
      const { put, authz } = setup();
      put('Role', { metadata: { name: 'r', namespace: 'a' }, rules: [secrets] });
      put('ClusterRole', { metadata: { name: 'c' }, rules: [pods] });
      expect(authz.grantedRules(ref('Role', 'r'), 'a')).toEqual({ rules: [secrets] });
      expect(authz.grantedRules(ref('Role', 'r'), 'b')).toEqual({ error: `role.${rbac} "r" not found` });
      expect(authz.grantedRules(ref('ClusterRole', 'c'), 'b')).toEqual({ rules: [pods] });
      expect(authz.grantedRules(ref('ClusterRole', 'x'), '')).toEqual({ error: `clusterrole.${rbac} "x" not found` });
    });

    it('grantedRules: an aggregating ClusterRole gives what it gathers now, through other aggregating roles, once each', () => {
      const { put, authz } = setup();
      // top gathers mid (empty so far), mid gathers leaf, leaf gathers other, and other gathers leaf back.
      put('ClusterRole', labelled('top', 'x/none', [], 'x/top'));
      put('ClusterRole', labelled('mid', 'x/top', [], 'x/mid'));
      put('ClusterRole', labelled('leaf', 'x/mid', [secrets], 'x/leaf'));
      put('ClusterRole', labelled('other', 'x/leaf', [pods], 'x/mid'));
      put('ClusterRole', labelled('unrelated', 'x/else', [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]));
      const granted = authz.grantedRules(ref('ClusterRole', 'top'), '');
      expect(granted).toEqual({ rules: [secrets, pods] });
    });
  });

  describe('default policy', () => {
    const { put, authz } = setup();
    const policy = defaultPolicy(registry.naming);
    for (const obj of policy) put(obj.kind!, obj as never);
    const authed = (name: string, ...groups: string[]) => user(name, ...groups, 'system:authenticated');
    const csrRole = (sub: string) => `system:${certificates}:certificatesigningrequests:${sub}`;
    const controllerAccount = (name: string) => `system:serviceaccount:${registry.naming.systemNamespace}:${name}`;

    it('has the reference role names, labels and annotations, each binding bound to its role', () => {
      const names = (kind: string) => policy.filter((o) => o.kind === kind).map((o) => o.metadata.name);
      const roles = [
        'cluster-admin',
        'system:discovery',
        'system:basic-user',
        'system:public-info-viewer',
        'system:node-bootstrapper',
        csrRole('nodeclient'),
        csrRole('selfnodeclient'),
      ];
      // The user-facing roles are bound by users, not by the policy; `aggregate-to-*` labels feed them.
      const userFacing = ['admin', 'edit', 'view'];
      const aggregateTo = userFacing.map((r) => `system:aggregate-to-${r}`);
      // The controllers' roles, each bound to its service account (--use-service-account-credentials).
      const controllers = [...Object.values(CONTROLLER_ACCOUNTS), trustBundlePublisherAccount(registry.naming)].map(
        (a) => `system:controller:${a}`,
      );
      expect(names('ClusterRole').sort()).toEqual([...roles, ...userFacing, ...aggregateTo, ...controllers].sort());
      expect(names('ClusterRoleBinding').sort()).toEqual([...roles, ...controllers].sort());
      const domain = registry.naming.domain;
      for (const obj of policy) {
        expect(obj.apiVersion).toBe(`${rbac}/v1`);
        expect(obj.metadata.labels).toMatchObject({ [`${domain}/bootstrapping`]: 'rbac-defaults' });
        expect(obj.metadata.annotations).toEqual({ [`rbac.authorization.${domain}/autoupdate`]: 'true' });
      }
    });

    it.each<[string, UserInfo, AuthorizationAttributes, boolean]>([
      ['admin does anything', user('admin', 'system:masters'), { verb: 'escalate', group: 'x', resource: 'y' }, true],
      ['discovery /api', authed('u'), { verb: 'get', path: '/api' }, true],
      ['discovery /apis/apps/v1', authed('u'), { verb: 'get', path: '/apis/apps/v1' }, true],
      ['discovery /openapi/v3', authed('u'), { verb: 'get', path: '/openapi/v3' }, true],
      ['version', authed('u'), { verb: 'get', path: '/version' }, true],
      ['healthz', authed('u'), { verb: 'get', path: '/healthz' }, true],
      ['healthz checks are not public', authed('u'), { verb: 'get', path: '/healthz/etcd' }, false],
      ['no metrics', authed('u'), { verb: 'get', path: '/metrics' }, false],
      ['no POST to discovery', authed('u'), { verb: 'post', path: '/api' }, false],
      [
        'unauthenticated health',
        user('system:anonymous', 'system:unauthenticated'),
        { verb: 'get', path: '/readyz' },
        true,
      ],
      [
        'unauthenticated discovery',
        user('system:anonymous', 'system:unauthenticated'),
        { verb: 'get', path: '/api' },
        false,
      ],
      ['no pods', authed('u'), { verb: 'list', group: '', resource: 'pods' }, false],
      [
        'self access review',
        authed('u'),
        { verb: 'create', group: group(registry.naming, 'authorization'), resource: 'selfsubjectaccessreviews' },
        true,
      ],
      [
        'self rules review',
        authed('u'),
        { verb: 'create', group: group(registry.naming, 'authorization'), resource: 'selfsubjectrulesreviews' },
        true,
      ],
      [
        'self subject review',
        authed('u'),
        { verb: 'create', group: group(registry.naming, 'authentication'), resource: 'selfsubjectreviews' },
        true,
      ],
      [
        'no subject access review',
        authed('u'),
        { verb: 'create', group: group(registry.naming, 'authorization'), resource: 'subjectaccessreviews' },
        false,
      ],
      [
        'bootstrapper creates CSRs',
        authed('b', 'system:bootstrappers'),
        { verb: 'create', group: certificates, resource: 'certificatesigningrequests' },
        true,
      ],
      [
        'bootstrapper watches CSRs',
        authed('b', 'system:bootstrappers'),
        { verb: 'watch', group: certificates, resource: 'certificatesigningrequests' },
        true,
      ],
      [
        'bootstrapper cannot delete CSRs',
        authed('b', 'system:bootstrappers'),
        { verb: 'delete', group: certificates, resource: 'certificatesigningrequests', name: 'c' },
        false,
      ],
      [
        'bootstrapper: nodeclient',
        authed('b', 'system:bootstrappers'),
        { verb: 'create', group: certificates, resource: 'certificatesigningrequests', subresource: 'nodeclient' },
        true,
      ],
      [
        'bootstrapper: not selfnodeclient',
        authed('b', 'system:bootstrappers'),
        { verb: 'create', group: certificates, resource: 'certificatesigningrequests', subresource: 'selfnodeclient' },
        false,
      ],
      [
        'node: selfnodeclient',
        authed('system:node:n1', 'system:nodes'),
        { verb: 'create', group: certificates, resource: 'certificatesigningrequests', subresource: 'selfnodeclient' },
        true,
      ],
      [
        'node: not nodeclient',
        authed('system:node:n1', 'system:nodes'),
        { verb: 'create', group: certificates, resource: 'certificatesigningrequests', subresource: 'nodeclient' },
        false,
      ],
      [
        'certificate controller: approves node client CSRs',
        authed(controllerAccount('certificate-controller')),
        {
          verb: 'approve',
          group: certificates,
          resource: 'signers',
          name: registry.naming.signers.apiServerClientNodeAgent,
        },
        true,
      ],
      [
        'certificate controller: not serving ones',
        authed(controllerAccount('certificate-controller')),
        { verb: 'approve', group: certificates, resource: 'signers', name: registry.naming.signers.nodeAgentServing },
        false,
      ],
      [
        'certificate controller: writes CSR status',
        authed(controllerAccount('certificate-controller')),
        { verb: 'update', group: certificates, resource: 'certificatesigningrequests', subresource: 'status' },
        true,
      ],
      [
        'statefulset controller: creates pods',
        authed(controllerAccount('statefulset-controller')),
        { verb: 'create', group: '', resource: 'pods', namespace: 'ns' },
        true,
      ],
      [
        'an account of that name in another namespace: nothing',
        authed('system:serviceaccount:default:statefulset-controller'),
        { verb: 'create', group: '', resource: 'pods', namespace: 'ns' },
        false,
      ],
    ])('%s', (_name, u, attrs, want) => {
      expect(authz.authorize(u, attrs).allowed).toBe(want);
    });

    it('explains a default grant by its binding', () => {
      expect(authz.authorize(authed('u'), { verb: 'get', path: '/apis' }).reason).toBe(
        'RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole "system:discovery" to Group "system:authenticated"',
      );
    });
  });
});

describe.each(FLAVORS)('denial messages (%s flavor)', (flavor) => {
  const n = naming(flavor);
  const certificates = group(n, 'certificates');
  const bob = user('bob');

  it.each<[AuthorizationAttributes, string]>([
    [
      { verb: 'get', group: '', resource: 'pods', namespace: 'team-b', name: 'web' },
      'pods "web" is forbidden: User "bob" cannot get resource "pods" in API group "" in the namespace "team-b"',
    ],
    [
      { verb: 'list', group: '', resource: 'pods', namespace: 'team-b' },
      'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "team-b"',
    ],
    [
      { verb: 'list', group: '', resource: 'pods' },
      'pods is forbidden: User "bob" cannot list resource "pods" in API group "" at the cluster scope',
    ],
    [
      { verb: 'create', group: 'apps', resource: 'deployments', namespace: 'x' },
      'deployments.apps is forbidden: User "bob" cannot create resource "deployments" in API group "apps" in the namespace "x"',
    ],
    [
      {
        verb: 'update',
        group: certificates,
        resource: 'certificatesigningrequests',
        subresource: 'approval',
        name: 'csr-1',
      },
      `certificatesigningrequests.${certificates} "csr-1" is forbidden: User "bob" cannot update resource "certificatesigningrequests/approval" in API group "${certificates}" at the cluster scope`,
    ],
    [
      { verb: 'get', group: '', resource: 'namespaces', namespace: 'team-a', name: 'team-a' },
      'namespaces "team-a" is forbidden: User "bob" cannot get resource "namespaces" in API group "" in the namespace "team-a"',
    ],
    [{ verb: 'get', path: '/metrics' }, 'forbidden: User "bob" cannot get path "/metrics"'],
    [
      { verb: 'get', group: '', resource: '' },
      'forbidden: User "bob" cannot get resource "" in API group "" at the cluster scope',
    ],
  ])('%j', (attrs, message) => {
    const err = forbiddenError(bob, attrs, '');
    expect(err).toBeInstanceOf(ApiError);
    expect(err.code).toBe(403);
    expect(err.reason).toBe('Forbidden');
    expect(err.message).toBe(message);
  });

  it('appends the reason, and reports details as the reference (empty ones left out)', () => {
    const attrs = { verb: 'get', group: certificates, resource: 'certificatesigningrequests', name: 'c' };
    const err = forbiddenError(bob, attrs, 'RBAC: clusterrole.x "y" not found');
    expect(err.message).toMatch(/at the cluster scope: RBAC: clusterrole\.x "y" not found$/);
    expect(err.toStatus()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: err.message,
      reason: 'Forbidden',
      details: { name: 'c', group: certificates, kind: 'certificatesigningrequests' },
      code: 403,
    });
    expect(forbiddenError(bob, { verb: 'list', group: '', resource: 'pods' }, '').toStatus().details).toEqual({
      kind: 'pods',
    });
    expect(forbiddenError(bob, { verb: 'get', path: '/x' }, '').toStatus().details).toEqual({});
  });

  it('escapes &, < and > in the message', () => {
    expect(forbiddenMessage(user('<script>&'), { verb: 'get', path: '/a>b' })).toBe(
      'User "&lt;script&gt;&amp;" cannot get path "/a&gt;b"',
    );
  });
});

describe('request attributes and the request authorizer', () => {
  const registry = new ResourceRegistry('orch');
  const info = (method: string, path: string, query = '') =>
    parseRequest(registry, method, path, new URLSearchParams(query));

  it.each<[string, string, string, AuthorizationAttributes]>([
    ['GET', '/api/v1/namespaces/a/pods', '', { verb: 'list', group: '', resource: 'pods', namespace: 'a' }],
    ['GET', '/api/v1/namespaces/a/pods', 'watch=true', { verb: 'watch', group: '', resource: 'pods', namespace: 'a' }],
    ['GET', '/api/v1/pods', '', { verb: 'list', group: '', resource: 'pods' }],
    ['POST', '/api/v1/namespaces/a/pods', '', { verb: 'create', group: '', resource: 'pods', namespace: 'a' }],
    [
      'PUT',
      '/api/v1/namespaces/a/pods/p/status',
      '',
      { verb: 'update', group: '', resource: 'pods', subresource: 'status', namespace: 'a', name: 'p' },
    ],
    [
      'DELETE',
      '/apis/apps/v1/namespaces/a/deployments',
      '',
      { verb: 'deletecollection', group: 'apps', resource: 'deployments', namespace: 'a' },
    ],
    [
      'HEAD',
      '/api/v1/namespaces/a/pods/p',
      '',
      { verb: 'get', group: '', resource: 'pods', namespace: 'a', name: 'p' },
    ],
    // a request for one Namespace object is a request inside that namespace
    ['GET', '/api/v1/namespaces/a', '', { verb: 'get', group: '', resource: 'namespaces', namespace: 'a', name: 'a' }],
    ['GET', '/api/v1/namespaces', '', { verb: 'list', group: '', resource: 'namespaces' }],
    ['GET', '/healthz', '', { verb: 'get', path: '/healthz' }],
    ['HEAD', '/healthz', '', { verb: 'head', path: '/healthz' }],
    ['POST', '/api', '', { verb: 'post', path: '/api' }],
    ['GET', '/apis/apps/v1', '', { verb: 'get', path: '/apis/apps/v1' }],
  ])('%s %s?%s', (method, path, query, want) => {
    expect(requestAttributes(info(method, path, query), method)).toEqual(want);
  });

  it('resolves when allowed and throws the 403 otherwise', async () => {
    const storage = new Storage();
    const hook = requestAuthorizer(new RbacAuthorizer(storage, registry));
    await expect(hook(user('root', 'system:masters'), info('GET', '/api/v1/pods'), 'GET')).resolves.toBeUndefined();
    await expect(hook(user('bob'), info('GET', '/api/v1/namespaces/a/pods/p'), 'GET')).rejects.toMatchObject({
      code: 403,
      message: 'pods "p" is forbidden: User "bob" cannot get resource "pods" in API group "" in the namespace "a"',
    });
    await expect(hook(user('bob'), info('GET', '/metrics'), 'GET')).rejects.toMatchObject({
      code: 403,
      message: 'forbidden: User "bob" cannot get path "/metrics"',
    });
    const open = requestAuthorizer(new AlwaysAllowAuthorizer());
    await expect(open(user('bob'), info('GET', '/metrics'), 'GET')).resolves.toBeUndefined();
  });
});

describe('accessChecker', () => {
  it("answers admission's signer questions from the stored policy", async () => {
    const registry = new ResourceRegistry('orch');
    const rbac = group(registry.naming, 'rbac.authorization');
    const certificates = group(registry.naming, 'certificates');
    const domain = registry.naming.domain;
    const storage = new Storage();
    const put = (kind: string, obj: Record<string, unknown>) =>
      storage.create(registry.kind(`${rbac}/v1`, kind)!, { apiVersion: `${rbac}/v1`, kind, ...obj } as KubeObject);
    put('ClusterRole', {
      metadata: { name: 'approver' },
      rules: [
        { verbs: ['approve'], apiGroups: [certificates], resources: ['signers'], resourceNames: [`${domain}/*`] },
      ],
    });
    put('ClusterRoleBinding', {
      metadata: { name: 'approvers' },
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'approver' },
      subjects: [{ kind: 'Group', apiGroup: rbac, name: 'approvers' }],
    });
    const can = accessChecker(new RbacAuthorizer(storage, registry));
    const signer = `${domain}/legacy-unknown`;
    expect(
      await can(user('x', 'approvers'), { verb: 'approve', group: certificates, resource: 'signers', name: signer }),
    ).toBe(false);
    expect(await allowedOnSigner(can, user('x', 'approvers'), 'approve', certificates, signer)).toBe(true);
    expect(await allowedOnSigner(can, user('x', 'approvers'), 'sign', certificates, signer)).toBe(false);
    expect(await allowedOnSigner(can, user('y'), 'approve', certificates, signer)).toBe(false);
    expect(await allowedOnSigner(can, user('root', 'system:masters'), 'sign', certificates, 'example.com/x')).toBe(
      true,
    );
  });
});
