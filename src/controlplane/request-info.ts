/** Turns a request path and method into what it asks for: the resource, scope, name, subresource and verb. */
import type { ResourceRegistry, ResourceType, Verb } from '../api/registry.ts';
import type { UserInfo } from './admission.ts';
import { badRequest } from './errors.ts';
import { queryBool } from './options.ts';
import { isValidPathSegmentName } from './validation/common.ts';

export interface ResourceRequest {
  kind: 'resource';
  verb: Verb;
  rt: ResourceType;
  namespace?: string;
  name?: string;
  subresource?: string;
  /** The legacy `/watch/` path form was used. */
  watchPath: boolean;
}

export interface NonResourceRequest {
  kind: 'nonresource';
  path: string;
}

/**
 * A resource path that names nothing served (`/api/v1/namespaces/x/frobnicators`): what the reference's request
 * resolver reads from it, for authorization only. The reference authorizes before it routes, so such a path is
 * 403 to a user who may not make that request and 404 to one who may.
 */
export interface UnservedRequest {
  kind: 'unserved';
  verb: Verb;
  group: string;
  resource: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

export type RequestInfo = ResourceRequest | NonResourceRequest | UnservedRequest;

const SLASH = 0x2f;

const METHOD_VERBS: Record<string, Verb> = {
  POST: 'create',
  PUT: 'update',
  PATCH: 'patch',
  DELETE: 'delete',
};

/**
 * The path and query of a request target as sent: never normalised, so that `..` or `%2e%2e` reach the
 * router as the segments they are and are refused there, rather than silently climbing to a parent path.
 */
export function requestTarget(target: string): { path: string; query: URLSearchParams } {
  if (!target.startsWith('/')) throw badRequest(`the request target must be a path: ${JSON.stringify(target)}`);
  const end = target.search(/[?#]/);
  if (end < 0) return { path: target, query: new URLSearchParams() };
  const query = target[end] === '?' ? target.slice(end + 1).replace(/#.*$/, '') : '';
  return { path: target.slice(0, end), query: new URLSearchParams(query) };
}

/**
 * Parses `/api/v1/...` and `/apis/<group>/<version>/...` paths, as sent (see {@link requestTarget}).
 * Returns a non-resource request for anything that is not a resource path (discovery, health, version),
 * and an unserved one for a resource path naming no known resource or holding an empty segment. Nothing
 * here refuses a path: the reference authorizes before it routes, so what a path names is told only to a
 * user allowed to ask (see {@link checkSegments}).
 */
export function parseRequest(
  registry: ResourceRegistry,
  method: string,
  path: string,
  query: URLSearchParams,
): RequestInfo {
  // One trailing slash is tolerated; an empty segment anywhere else names nothing.
  let start = 0;
  while (path.charCodeAt(start) === SLASH) start++;
  const end = path.length > start && path.endsWith('/') ? path.length - 1 : path.length;
  const trimmed = path.slice(start, end);
  const parts = trimmed.includes('%') ? trimmed.split('/').map(decodeSegment) : trimmed.split('/');
  // `at` walks the parts: group and version, then an optional `watch`, `namespaces/<ns>`, and what is left.
  let group: string;
  let at: number;
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    at = 1;
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1];
    at = 2;
  } else {
    return { kind: 'nonresource', path };
  }
  const version = parts[at++];
  const afterVersion = at;
  const watchPath = parts[at] === 'watch';
  if (watchPath) at++;
  let namespace: string | undefined;
  // `/namespaces/<ns>/<plural>/...` addresses a namespaced resource; `/namespaces/<name>[/<sub>]`
  // addresses the Namespace object itself.
  let rt =
    parts[at] === 'namespaces' && parts.length - at >= 3 ? registry.resource(group, version, parts[at + 2]) : undefined;
  if (rt) {
    namespace = parts[at + 1];
    at += 2;
  }
  const plural = parts[at];
  const name = parts[at + 1];
  const subresource = parts[at + 2];
  rt ??= plural ? registry.resource(group, version, plural) : undefined;
  const watch = watchPath || queryBool(query.get('watch')) === true;
  if (
    !rt ||
    // An empty segment anywhere (`/namespaces//secrets`) names nothing: it must not read as "all namespaces".
    parts.includes('') ||
    parts.length - at > 3 ||
    (namespace !== undefined && !rt.namespaced) ||
    (subresource !== undefined && !(rt.subresources as string[]).includes(subresource))
  ) {
    return unserved(group, parts.slice(afterVersion), method, watch);
  }
  return {
    kind: 'resource',
    verb: verbOf(method, name !== undefined, watch),
    rt,
    namespace,
    name,
    subresource,
    watchPath,
  };
}

/**
 * The reference's reading of a resource path after its version (`watch/`, `namespaces/<ns>/`, then resource, name
 * and subresource) for a path this server does not serve. A namespace's own subresources (`status`, `finalize`)
 * stay the namespaces resource's.
 */
function unserved(group: string, rest: string[], method: string, watch: boolean): UnservedRequest {
  let parts = rest[0] === 'watch' ? rest.slice(1) : rest;
  let namespace: string | undefined;
  if (parts[0] === 'namespaces' && parts.length > 1) {
    namespace = parts[1];
    if (parts.length > 2 && parts[2] !== 'status' && parts[2] !== 'finalize') parts = parts.slice(2);
  }
  const [resource = '', name, subresource] = parts;
  const info: UnservedRequest = { kind: 'unserved', verb: verbOf(method, name !== undefined, watch), group, resource };
  if (namespace !== undefined) info.namespace = namespace;
  if (name !== undefined) info.name = name;
  if (subresource !== undefined) info.subresource = subresource;
  return info;
}

export function verbOf(method: string, hasName: boolean, watch: boolean): Verb {
  if (method === 'GET' || method === 'HEAD') {
    if (watch) return 'watch';
    return hasName ? 'get' : 'list';
  }
  if (method === 'DELETE' && !hasName) return 'deletecollection';
  return METHOD_VERBS[method] ?? 'get';
}

/**
 * Refuses (400, naming it) a namespace or name that is not a path segment name (`.`, `..`, or containing `/` or
 * `%` once decoded), as the reference's handlers do once the request is authorized. (A subresource is one the
 * resource serves, or the path is unserved.)
 */
export function checkSegments(info: ResourceRequest): void {
  checkSegment('Namespace', info.namespace);
  checkSegment('Name', info.name);
}

function checkSegment(what: string, value: string | undefined): void {
  if (value === undefined) return;
  const problems = isValidPathSegmentName(value);
  if (problems.length) throw badRequest(`${what} parameter invalid: ${JSON.stringify(value)}: ${problems.join(';')}`);
}

/** Percent-decodes one path segment (names such as `system:node` arrive as `system%3Anode`). */
export function decodeSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest(`malformed percent-encoding in path segment "${segment}"`);
  }
}

/** Decides whether a user may make a request; throws a 403 ApiError when not. */
export type RequestAuthorizer = (user: UserInfo, info: RequestInfo, method: string) => Promise<void>;
