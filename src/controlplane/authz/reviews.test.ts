import { beforeEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/meta.ts';
import { FLAVORS, group } from '../../api/naming.ts';
import { apiVersionOf, ResourceRegistry } from '../../api/registry.ts';
import type { UserInfo } from '../admission.ts';
import type { ApiError } from '../errors.ts';
import { Storage } from '../storage.ts';
import { AlwaysAllowAuthorizer, defaultPolicy, RbacAuthorizer } from './rbac.ts';
import { createReviewer, type Reviewer } from './reviews.ts';

describe.each(FLAVORS)('reviews (%s flavor)', (flavor) => {
  const registry = new ResourceRegistry(flavor);
  const n = registry.naming;
  const rbac = group(n, 'rbac.authorization');
  const authorization = group(n, 'authorization');
  const authentication = group(n, 'authentication');
  const rt = (kind: string) => registry.all.find((r) => r.kind === kind && r.virtual)!;
  const tokens = new Map<string, UserInfo>([['s3cret', { username: 'tok', uid: 'u-1', groups: ['qa'] }]]);
  const alice: UserInfo = { username: 'alice', groups: ['system:authenticated'] };

  let reviewer: Reviewer;
  beforeEach(() => {
    const storage = new Storage();
    const put = (obj: KubeObject) => storage.create(registry.kind(obj.apiVersion!, obj.kind!)!, obj);
    for (const obj of defaultPolicy(n)) put(obj);
    put({
      apiVersion: `${rbac}/v1`,
      kind: 'Role',
      metadata: { name: 'pod-reader', namespace: 'team-a' },
      rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }],
    } as KubeObject);
    put({
      apiVersion: `${rbac}/v1`,
      kind: 'RoleBinding',
      metadata: { name: 'alice-pods', namespace: 'team-a' },
      roleRef: { apiGroup: rbac, kind: 'Role', name: 'pod-reader' },
      subjects: [{ kind: 'User', apiGroup: rbac, name: 'alice' }],
    } as KubeObject);
    reviewer = createReviewer({
      authorizer: new RbacAuthorizer(storage, registry),
      naming: n,
      lookup: (t) => tokens.get(t),
      now: () => new Date('2030-01-02T03:04:05.678Z'),
    });
  });

  const review = (kind: string, body: Record<string, unknown>, namespace?: string): KubeObject => {
    const type = rt(kind);
    return { apiVersion: apiVersionOf(type), kind, metadata: namespace ? { namespace } : {}, ...body } as KubeObject;
  };
  const ask = (kind: string, body: Record<string, unknown>, user: UserInfo = alice, namespace?: string) =>
    reviewer(rt(kind), review(kind, body, namespace), user);
  const failure = async (p: Promise<unknown>) => {
    const err = (await p.then(
      () => undefined,
      (e) => e,
    )) as ApiError | undefined;
    if (!err) throw new Error('expected a failure');
    return { code: err.code, reason: err.reason, message: err.message };
  };

  describe('SubjectAccessReview', () => {
    it('answers allowed with the granting binding, echoing the request', async () => {
      const spec = { user: 'alice', resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'team-a' } };
      expect(await ask('SubjectAccessReview', { spec })).toEqual({
        apiVersion: `${authorization}/v1`,
        kind: 'SubjectAccessReview',
        metadata: {},
        spec,
        status: {
          allowed: true,
          reason: 'RBAC: allowed by RoleBinding "alice-pods/team-a" of Role "pod-reader" to User "alice"',
        },
      });
    });

    it('answers not allowed (without denied or reason) when no rule covers the request', async () => {
      const spec = { user: 'alice', resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'team-b' } };
      expect((await ask('SubjectAccessReview', { spec })).status).toEqual({ allowed: false });
    });

    it('evaluates the subject of the spec, not the caller', async () => {
      const spec = { user: 'bob', resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'team-a' } };
      const admin = { username: 'admin', groups: ['system:masters'] };
      expect((await ask('SubjectAccessReview', { spec }, admin)).status).toEqual({ allowed: false });
      const masters = {
        groups: ['system:masters'],
        resourceAttributes: { verb: 'delete', resource: 'nodes', name: 'n1' },
      };
      expect((await ask('SubjectAccessReview', { spec: masters })).status).toEqual({ allowed: true });
    });

    it('answers non-resource questions', async () => {
      const spec = { groups: ['system:authenticated'], nonResourceAttributes: { verb: 'get', path: '/version' } };
      expect((await ask('SubjectAccessReview', { spec })).status).toMatchObject({ allowed: true });
      const metrics = { user: 'x', nonResourceAttributes: { verb: 'get', path: '/metrics' } };
      expect((await ask('SubjectAccessReview', { spec: metrics })).status).toEqual({ allowed: false });
    });

    it('rejects a spec without attributes or subject, as the reference words it', async () => {
      expect(await failure(ask('SubjectAccessReview', { spec: {} }))).toEqual({
        code: 422,
        reason: 'Invalid',
        message:
          `.${authorization} "" is invalid: [` +
          'spec: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified, ' +
          'spec.user: Invalid value: "": at least one of user or group must be specified]',
      });
    });

    it('rejects both kinds of attributes, and metadata', async () => {
      const spec = {
        user: 'u',
        resourceAttributes: { verb: 'get' },
        nonResourceAttributes: { verb: 'get', path: '/x' },
      };
      expect((await failure(ask('SubjectAccessReview', { spec }))).message).toBe(
        `.${authorization} "" is invalid: spec.nonResourceAttributes: Invalid value: {"path":"/x","verb":"get"}: cannot be specified in combination with resourceAttributes`,
      );
      const named = {
        ...review('SubjectAccessReview', { spec: { user: 'u', resourceAttributes: {} } }),
        metadata: { name: 'x' },
      };
      expect((await failure(reviewer(rt('SubjectAccessReview'), named, alice))).message).toBe(
        `.${authorization} "" is invalid: metadata: Invalid value: {"name":"x"}: must be empty`,
      );
      const nullTimestamp = { ...review('SubjectAccessReview', { spec: { user: 'u', resourceAttributes: {} } }) };
      nullTimestamp.metadata = { creationTimestamp: null } as never;
      expect((await reviewer(rt('SubjectAccessReview'), nullTimestamp, alice)).status).toEqual({ allowed: false });
    });
  });

  describe('LocalSubjectAccessReview', () => {
    it('answers inside the namespace of the URL', async () => {
      const spec = {
        user: 'alice',
        resourceAttributes: { verb: 'get', resource: 'pods', name: 'p', namespace: 'team-a' },
      };
      const answer = await ask('LocalSubjectAccessReview', { spec }, alice, 'team-a');
      expect(answer.metadata).toEqual({ namespace: 'team-a' });
      expect(answer.status).toMatchObject({ allowed: true });
    });

    it('requires the attributes namespace to match, and refuses non-resource attributes', async () => {
      const spec = { user: 'alice', resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'team-b' } };
      expect((await failure(ask('LocalSubjectAccessReview', { spec }, alice, 'team-a'))).message).toBe(
        `.${authorization} "" is invalid: spec.resourceAttributes.namespace: Invalid value: "team-b": must match metadata.namespace`,
      );
      const nonResource = { user: 'alice', nonResourceAttributes: { verb: 'get', path: '/api' } };
      expect((await failure(ask('LocalSubjectAccessReview', { spec: nonResource }, alice, 'team-a'))).message).toBe(
        `.${authorization} "" is invalid: spec.nonResourceAttributes: Invalid value: {"path":"/api","verb":"get"}: disallowed on this kind of request`,
      );
    });
  });

  describe('SelfSubjectAccessReview', () => {
    it('evaluates the caller', async () => {
      const spec = { resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'team-a' } };
      expect((await ask('SelfSubjectAccessReview', { spec })).status).toMatchObject({ allowed: true });
      const bob = { username: 'bob', groups: ['system:authenticated'] };
      expect((await ask('SelfSubjectAccessReview', { spec }, bob)).status).toEqual({ allowed: false });
      const approval = {
        resourceAttributes: {
          verb: 'update',
          group: group(n, 'certificates'),
          resource: 'certificatesigningrequests',
          subresource: 'approval',
        },
      };
      expect((await ask('SelfSubjectAccessReview', { spec: approval })).status).toEqual({ allowed: false });
    });

    it('needs exactly one kind of attributes', async () => {
      expect((await failure(ask('SelfSubjectAccessReview', { spec: {} }))).message).toBe(
        `.${authorization} "" is invalid: spec: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified`,
      );
    });
  });

  describe('SelfSubjectRulesReview', () => {
    it("lists the caller's rules in the namespace", async () => {
      const answer = (await ask('SelfSubjectRulesReview', { spec: { namespace: 'team-a' } })) as KubeObject & {
        status: { resourceRules: unknown[]; nonResourceRules: unknown[]; incomplete: boolean };
      };
      expect(answer.apiVersion).toBe(`${authorization}/v1`);
      expect(answer.kind).toBe('SelfSubjectRulesReview');
      expect(answer.status.incomplete).toBe(false);
      expect(answer.status.resourceRules).toContainEqual({
        verbs: ['get', 'list'],
        apiGroups: [''],
        resources: ['pods'],
      });
      expect(answer.status.resourceRules).toContainEqual({
        verbs: ['create'],
        apiGroups: [authentication],
        resources: ['selfsubjectreviews'],
      });
      expect(answer.status.nonResourceRules).toContainEqual({
        verbs: ['get'],
        nonResourceURLs: [
          '/api',
          '/api/*',
          '/apis',
          '/apis/*',
          '/healthz',
          '/livez',
          '/openapi',
          '/openapi/*',
          '/readyz',
          '/version',
          '/version/',
        ],
      });
    });

    it('requires a namespace', async () => {
      expect(await failure(ask('SelfSubjectRulesReview', { spec: {} }))).toEqual({
        code: 400,
        reason: 'BadRequest',
        message: 'no namespace on request',
      });
    });
  });

  describe('TokenReview', () => {
    it('authenticates a known token, adding system:authenticated', async () => {
      const answer = await ask('TokenReview', { spec: { token: 's3cret' } });
      expect(answer.status).toEqual({
        authenticated: true,
        user: { username: 'tok', uid: 'u-1', groups: ['qa', 'system:authenticated'] },
      });
    });

    it('answers an unknown token with an empty user', async () => {
      expect((await ask('TokenReview', { spec: { token: 'nope' } })).status).toEqual({
        user: {},
        error: 'invalid bearer token',
      });
    });

    it('requires a token', async () => {
      expect(await failure(ask('TokenReview', { spec: {} }))).toEqual({
        code: 400,
        reason: 'BadRequest',
        message: 'token is required for TokenReview in authentication',
      });
    });

    it('returns the request unevaluated without a token lookup', async () => {
      const bare = createReviewer({ authorizer: new AlwaysAllowAuthorizer(), naming: n });
      const answer = await bare(rt('TokenReview'), review('TokenReview', { spec: { token: 's3cret' } }), alice);
      expect(answer.status).toBeUndefined();
    });
  });

  it('SelfSubjectReview reports the caller', async () => {
    const caller: UserInfo = {
      username: 'tok',
      uid: 'u-1',
      groups: ['qa', 'system:authenticated'],
      extra: { scopes: ['a'] },
    };
    expect(await ask('SelfSubjectReview', {}, caller)).toEqual({
      apiVersion: `${authentication}/v1`,
      kind: 'SelfSubjectReview',
      metadata: { creationTimestamp: '2030-01-02T03:04:05Z' },
      status: {
        userInfo: { username: 'tok', uid: 'u-1', groups: ['qa', 'system:authenticated'], extra: { scopes: ['a'] } },
      },
    });
  });

  it('AlwaysAllow answers every access review with allowed', async () => {
    const open = createReviewer({ authorizer: new AlwaysAllowAuthorizer(), naming: n });
    const spec = { resourceAttributes: { verb: 'delete', resource: 'nodes' } };
    const answer = await open(rt('SelfSubjectAccessReview'), review('SelfSubjectAccessReview', { spec }), alice);
    expect(answer.status).toEqual({ allowed: true });
  });

  it('refuses resources that are not reviews', async () => {
    const pods = registry.resource('', 'v1', 'pods')!;
    expect((await failure(reviewer(pods, { metadata: {} }, alice))).code).toBe(405);
  });
});
