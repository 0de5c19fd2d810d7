/**
 * Authentication: x509 client certificates signed by the control plane's client CA (CN is the user,
 * O entries the groups) and bearer tokens from a token file (`token,user,uid,"group1,group2"`).
 * Every authenticated user is also in `system:authenticated`, as in the reference.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { UserInfo } from './admission.ts';

export const AUTHENTICATED_GROUP = 'system:authenticated';

export class TokenAuthenticator {
  private readonly tokens = new Map<string, UserInfo>();

  add(token: string, user: UserInfo): void {
    this.tokens.set(token, user);
  }

  lookup(token: string): UserInfo | undefined {
    return this.tokens.get(token);
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

/** The user a request authenticates as, or undefined for an anonymous request. */
export function authenticate(req: IncomingMessage, tokens: TokenAuthenticator): UserInfo | undefined {
  const auth = req.headers.authorization;
  if (auth?.startsWith('Bearer ')) {
    const user = tokens.lookup(auth.slice(7).trim());
    return user && withAuthenticated(user);
  }
  const socket = req.socket as TLSSocket;
  if (socket.authorized) {
    const cert = socket.getPeerCertificate();
    const subject = cert?.subject as unknown as Record<string, string | string[]> | undefined;
    const cn = subject?.CN;
    if (typeof cn === 'string' && cn) {
      const o = subject?.O;
      const groups = o === undefined ? [] : Array.isArray(o) ? o : [o];
      return withAuthenticated({ username: cn, groups });
    }
  }
  return undefined;
}

function withAuthenticated(user: UserInfo): UserInfo {
  return user.groups.includes(AUTHENTICATED_GROUP) ? user : { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] };
}
