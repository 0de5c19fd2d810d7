/** Bootstrap-token authentication (src/controlplane/authn.ts), the credential of a joining node agent. */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../src/api/meta.ts';
import { naming } from '../src/api/naming.ts';
import { bootstrapTokenSource } from '../src/controlplane/authn.ts';
import { bootstrapTokenSecret } from '../src/simulation/bootstrap-token.ts';

const n = naming();
const now = new Date('2026-06-01T00:00:00Z');

function sourceWith(secret: KubeObject | undefined) {
  return bootstrapTokenSource(
    (ns, name) => (secret && ns === secret.metadata.namespace && name === secret.metadata.name ? secret : undefined),
    n,
    () => now,
  );
}

const data = (s: KubeObject) => s.data as Record<string, string>;
const b64 = (v: string) => Buffer.from(v).toString('base64');

describe('bootstrap tokens', () => {
  it('authenticates <id>.<secret> as system:bootstrap:<id> in system:bootstrappers', () => {
    const t = bootstrapTokenSecret(n, { ttlMs: 3600_000 }, now);
    expect(t.object.metadata).toEqual({ name: `bootstrap-token-${t.id}`, namespace: n.systemNamespace });
    expect(t.object.type).toBe(`bootstrap.${n.domain}/token`);
    expect(sourceWith(t.object)(t.token)).toEqual({
      username: `system:bootstrap:${t.id}`,
      groups: ['system:bootstrappers'],
    });
  });

  it('adds valid extra groups', () => {
    const t = bootstrapTokenSecret(
      n,
      { extraGroups: ['system:bootstrappers:rack-7', 'system:bootstrappers:gpu'] },
      now,
    );
    expect(sourceWith(t.object)(t.token)?.groups).toEqual([
      'system:bootstrappers',
      'system:bootstrappers:rack-7',
      'system:bootstrappers:gpu',
    ]);
  });

  const refusals: [string, (s: KubeObject, token: string) => string][] = [
    ['a malformed token', (_s, token) => `${token}x`],
    ['an upper-case token', (_s, token) => token.toUpperCase()],
    ['a wrong secret', (_s, token) => `${token.slice(0, 7)}${'0'.repeat(16)}`],
    ['an unknown id', (_s, token) => `zzzzzz.${token.slice(7)}`],
    [
      'another Secret type',
      (s, token) => {
        s.type = 'Opaque';
        return token;
      },
    ],
    [
      'an expired token',
      (s, token) => {
        data(s).expiration = b64('2026-05-31T23:59:59Z');
        return token;
      },
    ],
    [
      'an unparseable expiration',
      (s, token) => {
        data(s).expiration = b64('tomorrow');
        return token;
      },
    ],
    [
      'no authentication usage',
      (s, token) => {
        delete data(s)['usage-bootstrap-authentication'];
        return token;
      },
    ],
    [
      'an extra group outside system:bootstrappers:',
      (s, token) => {
        data(s)['auth-extra-groups'] = b64('system:masters');
        return token;
      },
    ],
    [
      'a Secret being deleted',
      (s, token) => {
        s.metadata.deletionTimestamp = '2026-05-31T00:00:00Z';
        return token;
      },
    ],
    [
      'a token-id that does not match the name',
      (s, token) => {
        data(s)['token-id'] = b64('qqqqqq');
        return token;
      },
    ],
  ];
  it.each(refusals)('refuses %s', (_name, spoil) => {
    const t = bootstrapTokenSecret(n, {}, now);
    const token = spoil(t.object, t.token);
    expect(sourceWith(t.object)(token)).toBeUndefined();
  });

  it('reads stringData too (this control plane keeps it as written)', () => {
    const t = bootstrapTokenSecret(n, {}, now);
    const decoded = Object.fromEntries(
      Object.entries(data(t.object)).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
    );
    const secret = { ...t.object, data: undefined, stringData: decoded };
    expect(sourceWith(secret)(t.token)?.username).toBe(`system:bootstrap:${t.id}`);
  });
});
