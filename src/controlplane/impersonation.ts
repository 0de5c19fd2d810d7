/**
 * Impersonation, as the reference's filter: `Impersonate-User`, `Impersonate-Group` (repeatable),
 * `Impersonate-Uid` and `Impersonate-Extra-<key>` headers make a request act as another identity. The requester
 * needs the `impersonate` verb on each thing asked for: `users`, `groups` and `serviceaccounts` (a
 * `system:serviceaccount:<ns>:<name>` user) in the core group, `uids` and `userextras/<key>` in the
 * authentication group. The first refusal answers 403 naming it; otherwise the request continues as the
 * impersonated user, who is what authorization, admission and the reviews see.
 */

import { serviceAccountGroups, serviceAccountUsername } from '../api/service-accounts.ts';
import type { UserInfo } from './admission.ts';
import { ANONYMOUS_USER, AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP } from './authn.ts';
import { type Authorizer, forbiddenError, type ResourceRequestAttributes } from './authz/rbac.ts';
import { badRequest } from './errors.ts';
import { splitServiceAccountUsername } from './service-accounts.ts';

/** Names are matched as sent, in any case, so that the other headers of a request are not lower-cased. */
const IMPERSONATION_HEADER = /^impersonate-/i;
const USER_HEADER = 'impersonate-user';
const GROUP_HEADER = 'impersonate-group';
const UID_HEADER = 'impersonate-uid';
const EXTRA_PREFIX = 'impersonate-extra-';

/** One thing a request asks to act as, and the `impersonate` check it needs. */
type ImpersonationRequest =
  | { kind: 'User'; name: string }
  | { kind: 'ServiceAccount'; namespace: string; name: string }
  | { kind: 'Group'; name: string }
  | { kind: 'UID'; name: string }
  | { kind: 'UserExtra'; key: string; value: string };

/**
 * The identity a request acts as: the authenticated `requester` when it carries no impersonation headers,
 * else the impersonated user once the authorizer allowed every check.
 */
export function impersonate(
  requester: UserInfo,
  rawHeaders: readonly string[],
  authenticationGroup: string,
  authorizer: Pick<Authorizer, 'authorize'>,
): UserInfo {
  const headers = headerMap(rawHeaders);
  const requests = impersonationRequests(headers);
  if (requests.length === 0) return requester;
  const groupsSpecified = headers.has(GROUP_HEADER);
  let username = '';
  let uid: string | undefined;
  let groups: string[] = [];
  const extra: Record<string, string[]> = {};
  for (const r of requests) {
    const attrs: ResourceRequestAttributes = { verb: 'impersonate', group: '', resource: '' };
    switch (r.kind) {
      case 'ServiceAccount':
        Object.assign(attrs, { resource: 'serviceaccounts', namespace: r.namespace, name: r.name });
        username = serviceAccountUsername(r.namespace, r.name);
        if (!groupsSpecified) groups = serviceAccountGroups(r.namespace);
        break;
      case 'User':
        Object.assign(attrs, { resource: 'users', name: r.name });
        username = r.name;
        break;
      case 'Group':
        Object.assign(attrs, { resource: 'groups', name: r.name });
        groups.push(r.name);
        break;
      case 'UID':
        Object.assign(attrs, { group: authenticationGroup, resource: 'uids', name: r.name });
        uid = r.name;
        break;
      case 'UserExtra':
        Object.assign(attrs, { group: authenticationGroup, resource: 'userextras', subresource: r.key, name: r.value });
        extra[r.key] = [...(extra[r.key] ?? []), r.value];
        break;
    }
    const decision = authorizer.authorize(requester, attrs);
    if (!decision.allowed) throw forbiddenError(requester, attrs, decision.reason);
  }
  // As the reference: a named user is also in system:authenticated unless the groups asked say otherwise;
  // the anonymous user is in system:unauthenticated.
  if (username !== ANONYMOUS_USER) {
    if (!groups.includes(AUTHENTICATED_GROUP) && !groups.includes(UNAUTHENTICATED_GROUP)) {
      groups.push(AUTHENTICATED_GROUP);
    }
  } else if (!groups.includes(UNAUTHENTICATED_GROUP)) groups.push(UNAUTHENTICATED_GROUP);
  const user: UserInfo = { username, groups };
  if (uid !== undefined) user.uid = uid;
  if (Object.keys(extra).length) user.extra = extra;
  return user;
}

/**
 * What the headers ask to act as, in the reference's order (user, groups, extras, uid). Groups, extras or a
 * uid without a user are refused; the reference answers that with a 500, here it is the client's 400.
 */
function impersonationRequests(headers: Map<string, string[]>): ImpersonationRequest[] {
  const requests: ImpersonationRequest[] = [];
  const user = headers.get(USER_HEADER)?.[0] ?? '';
  if (user) {
    const sa = splitServiceAccountUsername(user);
    requests.push(sa ? { kind: 'ServiceAccount', ...sa } : { kind: 'User', name: user });
  }
  for (const name of headers.get(GROUP_HEADER) ?? []) requests.push({ kind: 'Group', name });
  for (const [header, values] of headers) {
    if (!header.startsWith(EXTRA_PREFIX)) continue;
    const key = unescapeExtraKey(header.slice(EXTRA_PREFIX.length));
    for (const value of values) requests.push({ kind: 'UserExtra', key, value });
  }
  const uid = headers.get(UID_HEADER)?.[0] ?? '';
  if (uid) requests.push({ kind: 'UID', name: uid });
  if (requests.length > 0 && !user) {
    throw badRequest(`requested ${describe(requests)} without impersonating a user`);
  }
  return requests;
}

/** Extra keys travel percent-encoded in header names; a malformed encoding is kept as written. */
function unescapeExtraKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

/**
 * The impersonation headers by lower-case name, every value apart: Node joins repeated headers with `, `, but a group
 * name may itself contain a comma, so the raw list (`name, value, name, value, ...`) is read instead.
 */
function headerMap(raw: readonly string[]): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (!IMPERSONATION_HEADER.test(raw[i])) continue;
    const name = raw[i].toLowerCase();
    map.set(name, [...(map.get(name) ?? []), raw[i + 1]]);
  }
  return map;
}

function describe(requests: ImpersonationRequest[]): string {
  return `[${requests.map((r) => ('value' in r ? `${r.kind} ${r.key}=${r.value}` : `${r.kind} ${r.name}`)).join(' ')}]`;
}
