/**
 * Authentication: x509 client certificates signed by the control plane's client CA (CN is the user,
 * O entries the groups) and bearer tokens from a token file (`token,user,uid,"group1,group2"`).
 * Bootstrap tokens (`<id>.<secret>`, kept in Secrets of the system namespace) authenticate node agents
 * joining the cluster. Every authenticated user is also in `system:authenticated`, as in the reference.
 * A request that presents no credentials is, as the reference's `--anonymous-auth` (on by default), the user
 * `system:anonymous` in `system:unauthenticated`, left to the authorizer; refused credentials stay a 401.
 */
import { timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { KubeObject } from '../api/meta.ts';
import type { Naming } from '../api/naming.ts';
import type { UserInfo } from './admission.ts';

export const AUTHENTICATED_GROUP = 'system:authenticated';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';
export const ANONYMOUS_USER = 'system:anonymous';

/** Resolves a bearer token to its user, or undefined when it does not know the token. */
export type TokenSource = (token: string) => UserInfo | undefined;

export class TokenAuthenticator {
  private readonly tokens = new Map<string, UserInfo>();
  private readonly sources: TokenSource[] = [];

  add(token: string, user: UserInfo): void {
    this.tokens.set(token, user);
  }

  /** Adds a source asked, in order, for tokens not in the static table (e.g. bootstrap tokens). */
  addSource(source: TokenSource): void {
    this.sources.push(source);
  }

  lookup(token: string): UserInfo | undefined {
    const user = this.tokens.get(token);
    if (user) return user;
    for (const source of this.sources) {
      const found = source(token);
      if (found) return found;
    }
    return undefined;
  }

  /** Loads a static token file; throws with the file and line on malformed records. */
  loadFile(path: string): void {
    const lines = readFileSync(path, 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (!line.trim() || line.trimStart().startsWith('#')) return;
      const fields = parseCsvLine(line);
      if (fields.length < 3) {
        throw new Error(
          `${path}:${i + 1}: token file records need at least token,user,uid (got ${fields.length} fields)`,
        );
      }
      const [token, username, uid, groups = ''] = fields;
      if (!token || !username) throw new Error(`${path}:${i + 1}: token and user must not be empty`);
      this.add(token, { username, uid, groups: groups ? groups.split(',').map((g) => g.trim()) : [] });
    });
  }
}

/** One CSV record with double-quoted fields (`""` inside quotes is a literal quote). */
export function parseCsvLine(line: string): string[] {
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      fields.push(field);
      field = '';
    } else field += c;
  }
  fields.push(field.replace(/\r$/, ''));
  return fields;
}

/**
 * The user a request authenticates as, or undefined when it presented credentials that are refused (401). A
 * request that presents none is `system:anonymous` when `anonymous` is on, else refused too. As the reference's
 * authenticators, an `Authorization` header that is not a non-empty bearer token and a client certificate
 * without a common name are no credentials; an unknown token or a certificate the CA did not sign are refused.
 * `domain` names the extra key of a client certificate's credential id (`authentication.<domain>/credential-id`).
 */
export function authenticate(
  req: IncomingMessage,
  tokens: TokenAuthenticator,
  domain: string,
  anonymous: boolean,
): UserInfo | undefined {
  const token = bearerToken(req.headers.authorization);
  if (token) {
    const user = tokens.lookup(token);
    return user && withAuthenticated(user);
  }
  const socket = req.socket as TLSSocket;
  if (!certificateUsers.has(socket)) certificateUsers.set(socket, certificateUser(socket, domain));
  const user = certificateUsers.get(socket);
  if (user !== 'none') return user;
  return anonymous ? { username: ANONYMOUS_USER, groups: [UNAUTHENTICATED_GROUP] } : undefined;
}

/** The token of an `Authorization: Bearer <token>` header (the scheme in any case), as the reference reads it. */
function bearerToken(header: string | undefined): string | undefined {
  const [scheme, token] = (header ?? '').trim().split(' ');
  return scheme.toLowerCase() === 'bearer' && token ? token : undefined;
}

/**
 * The user of each connection's client certificate, worked out once per connection rather than per request
 * (`getPeerCertificate` decodes the whole certificate and hashes it three times): the certificate cannot change
 * after the handshake, as the server refuses renegotiation. `none` when the client sent no certificate (or one
 * without a common name), undefined when its certificate is refused.
 */
const certificateUsers = new WeakMap<TLSSocket, UserInfo | 'none' | undefined>();

function certificateUser(socket: TLSSocket, domain: string): UserInfo | 'none' | undefined {
  const peer = socket.getPeerCertificate();
  if (!peer || Object.keys(peer).length === 0) return 'none';
  if (!socket.authorized) return undefined;
  const subject = peer.subject as unknown as Record<string, string | string[]> | undefined;
  const cn = subject?.CN;
  if (typeof cn !== 'string' || !cn) return 'none';
  const o = subject?.O;
  const groups = o === undefined ? [] : Array.isArray(o) ? o : [o];
  // As the reference: the certificate's SHA-256 names the credential, for audit and the users' extra.
  const credentialId = `X509SHA256=${peer.fingerprint256.replaceAll(':', '').toLowerCase()}`;
  return withAuthenticated({
    username: cn,
    groups,
    extra: { [`authentication.${domain}/credential-id`]: [credentialId] },
  });
}

function withAuthenticated(user: UserInfo): UserInfo {
  return user.groups.includes(AUTHENTICATED_GROUP) ? user : { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] };
}

// ---------------------------------------------------------------------------------------------
// bootstrap tokens

export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers';
const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:';
const BOOTSTRAP_TOKEN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const EXTRA_GROUP = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;

/** The Secret type of bootstrap tokens: `bootstrap.<domain>/token`. */
export const bootstrapTokenSecretType = (n: Pick<Naming, 'domain'>): string => `bootstrap.${n.domain}/token`;

/**
 * Bootstrap-token authentication, as the reference's: a token `<id>.<secret>` is valid while Secret
 * `bootstrap-token-<id>` of type `bootstrap.<domain>/token` in the system namespace has that `token-id` and
 * `token-secret`, `usage-bootstrap-authentication: "true"`, no `expiration` in the past and no deletion
 * pending. The user is `system:bootstrap:<id>` in `system:bootstrappers` and the groups listed in
 * `auth-extra-groups` (each `system:bootstrappers:...`). Data is read from `data` (base64) and, since this
 * control plane keeps `stringData` as written, from `stringData`.
 */
export function bootstrapTokenSource(
  getSecret: (namespace: string, name: string) => KubeObject | undefined,
  n: Pick<Naming, 'domain' | 'systemNamespace'>,
  now: () => Date = () => new Date(),
): TokenSource {
  const type = bootstrapTokenSecretType(n);
  return (token) => {
    const m = BOOTSTRAP_TOKEN.exec(token);
    if (!m) return undefined;
    const [, id, secret] = m;
    const s = getSecret(n.systemNamespace, `bootstrap-token-${id}`) as
      | (KubeObject & { type?: string; data?: Record<string, string>; stringData?: Record<string, string> })
      | undefined;
    if (!s || s.type !== type || s.metadata.deletionTimestamp) return undefined;
    const field = (key: string): string | undefined => {
      const b64 = s.data?.[key];
      return b64 !== undefined ? Buffer.from(b64, 'base64').toString('utf8') : s.stringData?.[key];
    };
    const stored = field('token-secret') ?? '';
    if (field('token-id') !== id || stored.length !== secret.length) return undefined;
    if (!timingSafeEqual(Buffer.from(stored), Buffer.from(secret))) return undefined;
    if (field('usage-bootstrap-authentication') !== 'true') return undefined;
    const expiration = field('expiration');
    if (expiration !== undefined) {
      const at = Date.parse(expiration);
      if (!Number.isFinite(at) || at <= now().getTime()) return undefined;
    }
    const extra = (field('auth-extra-groups') ?? '')
      .split(',')
      .map((g) => g.trim())
      .filter(Boolean);
    if (extra.some((g) => !EXTRA_GROUP.test(g))) return undefined;
    return { username: `${BOOTSTRAP_USER_PREFIX}${id}`, groups: [BOOTSTRAPPERS_GROUP, ...extra] };
  };
}
