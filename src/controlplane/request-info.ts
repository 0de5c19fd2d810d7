/** Turns a request path and method into what it asks for: the resource, scope, name, subresource and verb. */
import type { ResourceRegistry, ResourceType, Verb } from '../api/registry.ts';
import { badRequest } from './errors.ts';

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

export type RequestInfo = ResourceRequest | NonResourceRequest;

const METHOD_VERBS: Record<string, Verb> = {
  POST: 'create',
  PUT: 'update',
  PATCH: 'patch',
  DELETE: 'delete',
};

/**
 * Parses `/api/v1/...` and `/apis/<group>/<version>/...` paths. Returns a non-resource request for
 * anything that is not a resource path (discovery, health, version), and `undefined` for a resource
 * path naming no known resource.
 */
export function parseRequest(
  registry: ResourceRegistry,
  method: string,
  path: string,
  query: URLSearchParams,
): RequestInfo | undefined {
  const parts = path.split('/').filter(Boolean).map(decodeSegment);
  let group: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    rest = parts.slice(1);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1];
    rest = parts.slice(2);
  } else {
    return { kind: 'nonresource', path };
  }
  const version = rest[0];
  let segments = rest.slice(1);
  let watchPath = false;
  if (segments[0] === 'watch') {
    watchPath = true;
    segments = segments.slice(1);
  }
  let namespace: string | undefined;
  // `/namespaces/<ns>/<plural>/...` addresses a namespaced resource; `/namespaces/<name>[/<sub>]`
  // addresses the Namespace object itself.
  if (segments[0] === 'namespaces' && segments.length >= 3 && registry.resource(group, version, segments[2])) {
    namespace = segments[1];
    segments = segments.slice(2);
  }
  const [plural, name, subresource, ...extra] = segments;
  const rt = plural ? registry.resource(group, version, plural) : undefined;
  if (!rt || extra.length > 0) return undefined;
  if (namespace !== undefined && !rt.namespaced) return undefined;
  if (subresource !== undefined && !(rt.subresources as string[]).includes(subresource)) return undefined;
  return {
    kind: 'resource',
    verb: verbOf(method, name !== undefined, watchPath || query.get('watch') === 'true' || query.get('watch') === '1'),
    rt,
    namespace,
    name,
    subresource,
    watchPath,
  };
}

export function verbOf(method: string, hasName: boolean, watch: boolean): Verb {
  if (method === 'GET' || method === 'HEAD') {
    if (watch) return 'watch';
    return hasName ? 'get' : 'list';
  }
  if (method === 'DELETE' && !hasName) return 'deletecollection';
  return METHOD_VERBS[method] ?? 'get';
}

/** Percent-decodes one path segment (names such as `system:node` arrive as `system%3Anode`). */
export function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest(`malformed percent-encoding in path segment "${segment}"`);
  }
}
