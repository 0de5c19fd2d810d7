import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../api/meta.ts';
import { naming } from '../api/naming.ts';
import { ServiceAccountTokens } from './service-account-tokens.ts';

const ISSUER = 'https://issuer.example';
const n = naming('kubernetes');

function setUp() {
  const objects = new Map<string, KubeObject>();
  let now = new Date('2026-01-01T00:00:00Z');
  const put = (kind: string, namespace: string, name: string, uid: string) =>
    objects.set(`${kind}/${namespace}/${name}`, { metadata: { name, namespace, uid } });
  const tokens = new ServiceAccountTokens({
    key: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
    issuer: ISSUER,
    apiAudiences: [ISSUER],
    naming: n,
    read: (kind, namespace, name) => objects.get(`${kind}/${namespace}/${name}`),
    now: () => now,
  });
  put('ServiceAccount', 'ns', 'bot', 'sa-uid-1');
  const sa = objects.get('ServiceAccount/ns/bot')!;
  return {
    tokens,
    sa,
    objects,
    put,
    advance: (seconds: number) => {
      now = new Date(now.getTime() + seconds * 1000);
    },
  };
}

describe('bound service account tokens', () => {
  it('authenticates as the service account, in its namespace groups, with the token id', () => {
    const { tokens, sa } = setUp();
    const { token, expires } = tokens.issue(sa, [ISSUER], 3600);
    expect(expires.toISOString()).toBe('2026-01-01T01:00:00.000Z');
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({
      iss: ISSUER,
      sub: 'system:serviceaccount:ns:bot',
      aud: [ISSUER],
      exp: claims.iat + 3600,
      'kubernetes.io': { namespace: 'ns', serviceaccount: { name: 'bot', uid: 'sa-uid-1' } },
    });
    expect(tokens.authenticate(token)).toEqual({
      user: {
        username: 'system:serviceaccount:ns:bot',
        uid: 'sa-uid-1',
        groups: ['system:serviceaccounts', 'system:serviceaccounts:ns'],
        extra: { 'authentication.kubernetes.io/credential-id': [`JTI=${claims.jti}`] },
      },
      audiences: [ISSUER],
    });
  });

  it('is valid only for its audiences', () => {
    const { tokens, sa } = setUp();
    const { token } = tokens.issue(sa, ['vault', 'nats'], 3600);
    expect(tokens.authenticate(token)).toBeUndefined();
    expect(tokens.authenticate(token, ['other'])).toBeUndefined();
    expect(tokens.authenticate(token, ['nats', 'other'])?.audiences).toEqual(['nats']);
  });

  it('expires', () => {
    const { tokens, sa, advance } = setUp();
    const { token } = tokens.issue(sa, [ISSUER], 600);
    advance(599);
    expect(tokens.authenticate(token)).toBeDefined();
    advance(1);
    expect(tokens.authenticate(token)).toBeUndefined();
  });

  it('is refused once tampered with, or signed by another key', () => {
    const { tokens, sa } = setUp();
    const { token } = tokens.issue(sa, [ISSUER], 3600);
    const [h, p, s] = token.split('.');
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    claims.sub = 'system:serviceaccount:kube-system:admin';
    expect(
      tokens.authenticate(`${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`),
    ).toBeUndefined();
    const other = setUp().tokens.issue(sa, [ISSUER], 3600).token;
    expect(tokens.authenticate(other)).toBeUndefined();
    for (const junk of ['', 'a.b.c', 'not-a-jwt', `${h}.${p}`, `${h}.${p}.${s}.x`]) {
      expect(tokens.authenticate(junk)).toBeUndefined();
    }
  });

  it('dies with its service account, also when one of the same name is created again', () => {
    const { tokens, sa, objects, put } = setUp();
    const { token } = tokens.issue(sa, [ISSUER], 3600);
    objects.delete('ServiceAccount/ns/bot');
    expect(tokens.authenticate(token)).toBeUndefined();
    put('ServiceAccount', 'ns', 'bot', 'sa-uid-2');
    expect(tokens.authenticate(token)).toBeUndefined();
  });

  it('bound to a pod, names the pod and dies with it', () => {
    const { tokens, sa, objects, put } = setUp();
    put('Pod', 'ns', 'web-0', 'pod-uid');
    const { token } = tokens.issue(sa, [ISSUER], 3600, { kind: 'Pod', name: 'web-0', uid: 'pod-uid' });
    expect(tokens.authenticate(token)?.user.extra).toMatchObject({
      'authentication.kubernetes.io/pod-name': ['web-0'],
      'authentication.kubernetes.io/pod-uid': ['pod-uid'],
    });
    objects.delete('Pod/ns/web-0');
    expect(tokens.authenticate(token)).toBeUndefined();
  });
});
