/**
 * `/openapi/v2` and `/openapi/v3[/<group version>]` as the reference serves them, so that kubectl caches
 * them: an ETag on every document (a matching `If-None-Match` answers 304); the group-version documents
 * are immutable under their `?hash=` URL (a stale hash is redirected to the current one) and revalidated
 * otherwise.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ResourceRegistry } from '../../api/registry.ts';
import { notAcceptable } from '../errors.ts';
import { documentsFor, type Published } from './documents.ts';
import { SWAGGER_PROTOBUF_MEDIA_TYPE } from './v2-protobuf.ts';

export interface OpenApiAnswer {
  status: number;
  headers: Record<string, string>;
  body: string | Uint8Array;
}

const JSON_TYPE = 'application/json';
/** The media type the reference labels its v2 protobuf answer with. */
const SWAGGER_PROTOBUF_CONTENT_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
const REVALIDATE = 'no-cache, private';
const YEAR_MS = 365 * 24 * 3600 * 1000;

/** Whether a path is one of the OpenAPI endpoints. */
export function isOpenApiPath(path: string): boolean {
  return path === '/openapi/v2' || path === '/openapi/v3' || path.startsWith('/openapi/v3/');
}

/** The answer to a GET of an OpenAPI path; undefined for a group version that is not served. */
export function openApiAnswer(
  registry: ResourceRegistry,
  path: string,
  query: URLSearchParams,
  headers: IncomingHttpHeaders,
  now: Date,
): OpenApiAnswer | undefined {
  const documents = documentsFor(registry);
  const accept = headers.accept ?? '';
  if (path === '/openapi/v2') {
    const format = v2Format(accept);
    const { protobuf, ...json } = documents.v2;
    if (format === 'protobuf') return answer(json.etag, protobuf, SWAGGER_PROTOBUF_CONTENT_TYPE, REVALIDATE, headers);
    return answer(json.etag, json.json, JSON_TYPE, REVALIDATE, headers);
  }
  if (!acceptsJson(accept)) throw notAcceptable([JSON_TYPE]);
  // The reference writes the index without naming its type, so Go's sniffing labels it plain text.
  if (path === '/openapi/v3')
    return answer(documents.v3Root.etag, documents.v3Root.json, V3_INDEX_TYPE, REVALIDATE, headers);
  const document = documents.v3.get(path.slice('/openapi/v3/'.length));
  if (!document) return undefined;
  const hash = query.get('hash');
  if (hash === null) return published(document, REVALIDATE, headers);
  if (hash !== document.etag) {
    return {
      status: 301,
      headers: { Location: `${path}?hash=${document.etag}`, 'Cache-Control': REVALIDATE },
      body: '',
    };
  }
  const answered = published(document, 'public, immutable', headers);
  answered.headers.Expires = new Date(now.getTime() + YEAR_MS).toUTCString();
  return answered;
}

const V3_INDEX_TYPE = 'text/plain; charset=utf-8';

function published(document: Published, cacheControl: string, headers: IncomingHttpHeaders): OpenApiAnswer {
  return answer(document.etag, document.json, JSON_TYPE, cacheControl, headers);
}

function answer(
  etag: string,
  body: string | Uint8Array,
  contentType: string,
  cacheControl: string,
  request: IncomingHttpHeaders,
): OpenApiAnswer {
  const quoted = `"${etag}"`;
  const headers = { ETag: quoted, 'Cache-Control': cacheControl, Vary: 'Accept' };
  const ifNoneMatch = request['if-none-match'];
  if (ifNoneMatch?.split(',').some((tag) => tag.trim() === quoted || tag.trim() === '*')) {
    return { status: 304, headers, body: '' };
  }
  return { status: 200, headers: { ...headers, 'Content-Type': contentType }, body };
}

function mediaTypes(accept: string): string[] {
  return accept.split(',').map((part) => part.split(';')[0].trim().toLowerCase());
}

function acceptsJson(accept: string): boolean {
  return !accept || mediaTypes(accept).some((t) => t === JSON_TYPE || t === '*/*' || t === 'application/*');
}

/** kubectl asks for the protobuf form only; JSON for JSON and wildcards; 406 otherwise. */
function v2Format(accept: string): 'protobuf' | 'json' {
  const types = mediaTypes(accept);
  const protobuf = types.indexOf(SWAGGER_PROTOBUF_MEDIA_TYPE);
  const json = types.findIndex((t) => t === JSON_TYPE || t === '*/*' || t === 'application/*');
  if (protobuf >= 0 && (json < 0 || protobuf < json)) return 'protobuf';
  if (json >= 0 || !accept) return 'json';
  throw notAcceptable([JSON_TYPE, SWAGGER_PROTOBUF_MEDIA_TYPE]);
}
