/** API errors as the reference server writes them: a `Status` body with code, reason, message and details. */
import type { Status, StatusCause, StatusDetails } from '../api/meta.ts';

export type StatusReason =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Invalid'
  | 'BadRequest'
  | 'Expired'
  | 'Gone'
  | 'MethodNotAllowed'
  | 'UnsupportedMediaType'
  | 'NotAcceptable'
  | 'Forbidden'
  | 'Unauthorized'
  | 'TooManyRequests'
  | 'InternalError'
  | 'Timeout'
  | 'ServiceUnavailable'
  | 'RequestEntityTooLarge';

/** Identifies the resource an error is about: `pods`, `statefulsets.apps`, `Pod` kind for Invalid. */
export interface ResourceRef {
  group: string;
  plural: string;
  kind: string;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
    /** List metadata to carry, e.g. the fresh continue token of an expired list. */
    readonly listContinue?: string,
  ) {
    super(message);
  }

  toStatus(): Status {
    const status: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: this.listContinue ? { continue: this.listContinue } : {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    if (this.details) status.details = this.details;
    return status;
  }
}

/** `pods`, `statefulsets.apps`, `certificatesigningrequests.certificates.orch.io`. */
export function qualifiedResource(r: Pick<ResourceRef, 'group' | 'plural'>): string {
  return r.group ? `${r.plural}.${r.group}` : r.plural;
}

function qualifiedKind(r: ResourceRef): string {
  return r.group ? `${r.kind}.${r.group}` : r.kind;
}

/**
 * Status details of one object; an empty name, kind and the core group are left out, as the reference's omitempty
 * does. `kind` is what the reference puts there: the resource (plural) of most answers, the kind of an Invalid one.
 */
export function objectDetails(group: string, kind: string, name: string): StatusDetails {
  return { ...(name ? { name } : {}), ...(group ? { group } : {}), ...(kind ? { kind } : {}) };
}

export function notFound(r: Pick<ResourceRef, 'group' | 'plural'>, name: string): ApiError {
  return new ApiError(
    404,
    'NotFound',
    `${qualifiedResource(r)} "${name}" not found`,
    objectDetails(r.group, r.plural, name),
  );
}

export function alreadyExists(r: Pick<ResourceRef, 'group' | 'plural'>, name: string): ApiError {
  return new ApiError(
    409,
    'AlreadyExists',
    `${qualifiedResource(r)} "${name}" already exists`,
    objectDetails(r.group, r.plural, name),
  );
}

export function conflict(r: Pick<ResourceRef, 'group' | 'plural'>, name: string, detail: string): ApiError {
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(r)} "${name}": ${detail}`,
    objectDetails(r.group, r.plural, name),
  );
}

export const STALE_OBJECT =
  'the object has been modified; please apply your changes to the latest version and try again';

/** A field-level validation problem; `message` is the full rendered `field: Type: detail` text. */
export interface FieldProblem {
  type: string;
  field: string;
  message: string;
}

/** 422 Invalid listing every cause, as `<Kind>.<group> "<name>" is invalid: [a, b]`. */
export function invalid(r: ResourceRef, name: string, problems: FieldProblem[]): ApiError {
  const texts = problems.map((p) => p.message);
  const summary = texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`;
  const causes: StatusCause[] = problems.map((p) => ({
    reason: p.type,
    message: p.message.startsWith(`${p.field}: `) ? p.message.slice(p.field.length + 2) : p.message,
    field: p.field,
  }));
  return new ApiError(422, 'Invalid', `${qualifiedKind(r)} "${name}" is invalid: ${summary}`, {
    ...objectDetails(r.group, r.kind, name),
    causes,
  });
}

export function badRequest(message: string, causes?: StatusCause[]): ApiError {
  return new ApiError(400, 'BadRequest', message, causes ? { causes } : undefined);
}

export function forbidden(
  r: Pick<ResourceRef, 'group' | 'plural'>,
  name: string,
  why: string,
  causes?: StatusCause[],
): ApiError {
  const subject = name ? `${qualifiedResource(r)} "${name}"` : qualifiedResource(r);
  const details = objectDetails(r.group, r.plural, name);
  return new ApiError(403, 'Forbidden', `${subject} is forbidden: ${why}`, causes ? { ...details, causes } : details);
}

/** 410 Expired: a watch or list from a resourceVersion older than the retained history. */
export function tooOldResourceVersion(requested: number, oldest: number): ApiError {
  return new ApiError(410, 'Expired', `too old resource version: ${requested} (${oldest})`);
}

/** 504 Timeout: the cache did not reach a resourceVersion in time (the client may retry after a second). */
export function tooLargeResourceVersion(requested: number | bigint, current: number): ApiError {
  return new ApiError(504, 'Timeout', `Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
}

export const CONTINUE_EXPIRED_MESSAGE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

// The reference's 405, 406 and 415 (and its 404 for a path it does not serve) carry empty details: no causes.
export function methodNotAllowed(): ApiError {
  return new ApiError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`, {});
}

/** A create or update body of a media type the server does not decode, in the reference's words (no details). */
export function unsupportedMediaType(accepted: readonly string[]): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  );
}

/** A patch of a type the server does not know: the reference answers with the bare status text, empty details. */
export function unsupportedPatchType(): ApiError {
  return new ApiError(415, 'UnsupportedMediaType', '415: Unsupported Media Type', {});
}

export function notAcceptable(offered: readonly string[]): ApiError {
  return new ApiError(
    406,
    'NotAcceptable',
    `406: Not Acceptable\n\nAvailable representations: ${offered.join(', ')}`,
    {},
  );
}

export function internalError(message: string): ApiError {
  return new ApiError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
}

export function tooManyRequests(message: string, retryAfterSeconds: number): ApiError {
  return new ApiError(429, 'TooManyRequests', message, { retryAfterSeconds });
}

export function unauthorized(): ApiError {
  return new ApiError(401, 'Unauthorized', 'Unauthorized');
}

/** The reference validates list and watch options as an `Invalid` ListOptions of the meta group. */
export function invalidOptions(metaGroup: string, kind: string, problems: FieldProblem[]): ApiError {
  return invalid({ group: metaGroup, plural: '', kind }, '', problems);
}
