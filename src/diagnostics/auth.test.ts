import { describe, expect, it } from 'vitest';
import { naming } from '../api/naming.ts';
import { FakeClock } from '../util/clock.ts';
import {
  type AccessReviewer,
  apiAccessReviewer,
  apiTokenReviewer,
  bearerToken,
  cachedAccessReviewer,
  cachedTokenReviewer,
  pathMatcher,
  type TokenReviewer,
  TtlCache,
} from './auth.ts';

describe('pathMatcher', () => {
  it('matches exact paths, and prefixes only with a trailing *', () => {
    const allowed = pathMatcher(['/healthz', '/readyz', '/livez', '/debug/*', '/metrics*']);
    expect(allowed('/healthz')).toBe(true);
    expect(allowed('/healthz/ping')).toBe(false);
    expect(allowed('/healthz/')).toBe(false);
    expect(allowed('/readyz')).toBe(true);
    expect(allowed('/debug/pprof')).toBe(true);
    expect(allowed('/debug')).toBe(false);
    expect(allowed('/metrics')).toBe(true);
    expect(allowed('/metrics/slis')).toBe(true);
    expect(allowed('/statusz')).toBe(false);
    expect(allowed('/')).toBe(false);
  });

  it('treats "/" as the root only and rejects inner stars', () => {
    expect(pathMatcher(['/'])('/')).toBe(true);
    expect(pathMatcher(['/'])('/healthz')).toBe(false);
    expect(() => pathMatcher(['/a*/b'])).toThrow('only trailing * allowed in "/a*/b"');
  });
});

describe('bearerToken', () => {
  it('reads the token as the reference does', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer abc')).toBe('abc');
    expect(bearerToken('  Bearer abc  ')).toBe('abc');
    expect(bearerToken('Bearer abc def')).toBe('abc');
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken('Bearer')).toBeUndefined();
    expect(bearerToken('Bearer  abc')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});

describe('TtlCache', () => {
  it('expires entries after their TTL and evicts the oldest when full', () => {
    const clock = new FakeClock();
    const cache = new TtlCache<number>(clock, 2);
    cache.set('a', 1, 100);
    cache.set('b', 2, 1000);
    clock.step(99);
    expect(cache.get('a')).toBe(1);
    clock.step(1);
    expect(cache.get('a')).toBeUndefined();
    cache.set('c', 3, 1000);
    cache.set('d', 4, 1000);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('c')).toBe(3);
    expect(cache.get('d')).toBe(4);
    cache.set('d', 5, 0);
    expect(cache.get('d')).toBeUndefined();
    expect(cache.size).toBe(1);
  });
});

describe('cachedTokenReviewer', () => {
  function counting(answer: (token: string) => Awaited<ReturnType<TokenReviewer>>) {
    const calls: string[] = [];
    const inner: TokenReviewer = async (token) => {
      calls.push(token);
      return answer(token);
    };
    return { calls, inner };
  }

  it('reuses accepted and rejected answers for their TTLs', async () => {
    const clock = new FakeClock();
    const { calls, inner } = counting((t) =>
      t === 'good' ? { authenticated: true, user: { username: 'u', groups: [] } } : { authenticated: false },
    );
    const review = cachedTokenReviewer(inner, { clock, successTtlMs: 10_000, failureTtlMs: 5_000 });
    expect((await review('good')).user?.username).toBe('u');
    expect(await review('bad')).toEqual({ authenticated: false });
    await review('good');
    await review('bad');
    expect(calls).toEqual(['good', 'bad']);
    clock.step(5_000);
    await review('good');
    await review('bad');
    expect(calls).toEqual(['good', 'bad', 'bad']);
    clock.step(5_000);
    await review('good');
    expect(calls).toEqual(['good', 'bad', 'bad', 'good']);
  });

  it('does not cache reviewer errors or failed reviews, and shares one call among concurrent callers', async () => {
    const clock = new FakeClock();
    let fail = true;
    let calls = 0;
    const inner: TokenReviewer = async () => {
      calls++;
      await new Promise((r) => setImmediate(r));
      if (fail) throw new Error('connection refused');
      return { authenticated: false, error: 'token expired' };
    };
    const review = cachedTokenReviewer(inner, { clock });
    const both = await Promise.allSettled([review('t'), review('t')]);
    expect(both.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    expect(calls).toBe(1);
    fail = false;
    expect(await review('t')).toEqual({ authenticated: false, error: 'token expired' });
    expect(await review('t')).toEqual({ authenticated: false, error: 'token expired' });
    expect(calls).toBe(3);
  });
});

describe('cachedAccessReviewer', () => {
  it('caches allowed and denied decisions per subject and attributes, with their own TTLs', async () => {
    const clock = new FakeClock();
    const calls: string[] = [];
    const inner: AccessReviewer = async (user, attrs) => {
      calls.push(`${user.username}:${attrs.verb}:${attrs.path}`);
      return user.username === 'ann' ? { allowed: true } : { allowed: false, reason: 'no' };
    };
    const review = cachedAccessReviewer(inner, { clock, allowTtlMs: 10_000, denyTtlMs: 2_000 });
    const ann = { username: 'ann', groups: ['a', 'b'] };
    await review(ann, { path: '/metrics', verb: 'get' });
    await review({ username: 'ann', groups: ['b', 'a'] }, { path: '/metrics', verb: 'get' });
    await review(ann, { path: '/metrics/slis', verb: 'get' });
    await review({ ...ann, groups: ['a'] }, { path: '/metrics', verb: 'get' });
    expect(await review({ username: 'bob', groups: [] }, { path: '/metrics', verb: 'get' })).toEqual({
      allowed: false,
      reason: 'no',
    });
    await review({ username: 'bob', groups: [] }, { path: '/metrics', verb: 'get' });
    expect(calls).toEqual(['ann:get:/metrics', 'ann:get:/metrics/slis', 'ann:get:/metrics', 'bob:get:/metrics']);
    clock.step(2_000);
    await review({ username: 'bob', groups: [] }, { path: '/metrics', verb: 'get' });
    await review(ann, { path: '/metrics', verb: 'get' });
    expect(calls).toHaveLength(5);
    clock.step(8_000);
    await review(ann, { path: '/metrics', verb: 'get' });
    expect(calls).toHaveLength(6);
  });
});

describe('reviews through the API', () => {
  const n = naming('orch');

  it('posts a TokenReview and reads the user from its status', async () => {
    const requests: { method: string; path: string; body: unknown }[] = [];
    const client = {
      request: async (method: string, path: string, opts?: { body?: unknown }) => {
        requests.push({ method, path, body: opts?.body });
        const token = (opts?.body as { spec: { token: string } } | undefined)?.spec.token;
        const status =
          token === 'good'
            ? { authenticated: true, user: { username: 'tina', uid: 'u1', groups: ['qa'], extra: { k: ['v'] } } }
            : { authenticated: false, error: 'unknown token' };
        return { status: 201, body: { status } as never, warnings: [] };
      },
    };
    const review = apiTokenReviewer(client, n);
    expect(await review('good')).toEqual({
      authenticated: true,
      user: { username: 'tina', uid: 'u1', groups: ['qa'], extra: { k: ['v'] } },
    });
    expect(await review('bad')).toEqual({ authenticated: false, error: 'unknown token' });
    expect(requests[0]).toEqual({
      method: 'POST',
      path: '/apis/authentication.orch.io/v1/tokenreviews',
      body: { apiVersion: 'authentication.orch.io/v1', kind: 'TokenReview', metadata: {}, spec: { token: 'good' } },
    });
  });

  it('posts a SubjectAccessReview for the non-resource path', async () => {
    const requests: unknown[] = [];
    const client = {
      request: async (_method: string, path: string, opts?: { body?: unknown }) => {
        requests.push({ path, body: opts?.body });
        return {
          status: 201,
          body: { status: { allowed: false, denied: true, reason: 'nope' } } as never,
          warnings: [],
        };
      },
    };
    const review = apiAccessReviewer(client, naming('kubernetes'));
    expect(await review({ username: 'x', uid: '7', groups: ['g'] }, { path: '/metrics', verb: 'get' })).toEqual({
      allowed: false,
      denied: true,
      reason: 'nope',
    });
    expect(requests).toEqual([
      {
        path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          metadata: {},
          spec: { nonResourceAttributes: { path: '/metrics', verb: 'get' }, user: 'x', groups: ['g'], uid: '7' },
        },
      },
    ]);
  });
});
