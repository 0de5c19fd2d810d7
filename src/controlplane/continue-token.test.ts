import { describe, expect, it } from 'vitest';
import {
  decodeContinue,
  encodeContinue,
  keyOfStart,
  listPrefix,
  listScope,
  newSnapshotId,
  startKeyValid,
  startOfKey,
} from './continue-token.ts';
import { ApiError } from './errors.ts';

const META = 'meta.k8s.io';
const PODS = listPrefix({ group: '', plural: 'pods' }, 'team-a');
const raw = (t: object) => Buffer.from(JSON.stringify(t)).toString('base64url');
const good = { v: `${META}/v1`, rv: 7, start: 'p1', prefix: PODS, snap: newSnapshotId() };

function refusal(token: string): string {
  try {
    decodeContinue(META, token, PODS);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe(400);
    return (err as ApiError).message;
  }
  throw new Error('the token was accepted');
}

describe('continue tokens', () => {
  it('prefixes name the resource and namespace', () => {
    expect(PODS).toBe('/core/pods/team-a/');
    expect(listPrefix({ group: '', plural: 'pods' }, undefined)).toBe('/core/pods/');
    expect(listPrefix({ group: 'apps', plural: 'deployments' }, 'x')).toBe('/apps/deployments/x/');
  });

  it('round-trips a token and maps start keys to stored keys', () => {
    expect(decodeContinue(META, encodeContinue(META, good), PODS)).toEqual({ ...good, v: undefined });
    expect(keyOfStart('team-a', 'p1')).toBe('team-a/p1');
    expect(keyOfStart(undefined, 'team-a/p1')).toBe('team-a/p1');
    expect(keyOfStart('team-a', '')).toBe('');
    expect(startOfKey('team-a', 'team-a/p1')).toBe('p1');
    expect(startOfKey(undefined, 'team-a/p1')).toBe('team-a/p1');
  });

  it.each([
    ['not base64', '%%%', /^invalid continue token: continue key is not valid: illegal base64 data at input byte 0$/],
    ['padded base64', `${raw(good)}==`, /^invalid continue token: continue key is not valid: illegal base64 data at /],
    [
      'base64 of no JSON',
      'not-a-token',
      /^invalid continue token: continue key is not valid: invalid character '\\u009e' looking for beginning of value$/,
    ],
    ['a JSON number', raw(5 as unknown as object), /not a JSON object/],
    ['another version', raw({ ...good, v: 'v2' }), /incorrect encoded version/],
    ['a negative revision', raw({ ...good, rv: -1 }), /start resourceVersion/],
    [
      'another resource',
      raw({ ...good, prefix: '/core/secrets/team-a/' }),
      /not this list of "\/core\/pods\/team-a\/"/,
    ],
    ['another namespace', raw({ ...good, prefix: '/core/pods/team-b/' }), /continues the list of/],
    ['no prefix', raw({ ...good, prefix: undefined }), /continues the list of undefined/],
    ['a counter for a snapshot id', raw({ ...good, snap: 12 }), /snapshot it names/],
    ['a short snapshot id', raw({ ...good, snap: 'abc' }), /snapshot it names/],
    ['a start climbing out', raw({ ...good, start: '../../secrets/x' }), /continue key is not valid/],
  ])('refuses %s with 400', (_what, token, message) => {
    expect(refusal(token)).toMatch(message);
  });

  it.each([
    ['', true],
    ['p1', true],
    ['team-a/p1', true],
    ['/p1', false],
    ['p1/', false],
    ['a//b', false],
    ['./p1', false],
    ['a/../b', false],
    ['..', false],
  ])('start key %j valid: %s', (start, valid) => {
    expect(startKeyValid(start)).toBe(valid);
  });

  it('scopes lists by prefix and every selector', () => {
    const scope = (q: string) => listScope(PODS, new URLSearchParams(q));
    expect(scope('limit=1&continue=x')).toBe(scope('limit=5'));
    const distinct = new Set(['', 'labelSelector=a', 'fieldSelector=a', 'shardSelector=a'].map(scope));
    expect(distinct.size).toBe(4);
    expect(listScope('/core/pods/', new URLSearchParams())).not.toBe(scope(''));
    expect(newSnapshotId()).not.toBe(newSnapshotId());
  });
});
