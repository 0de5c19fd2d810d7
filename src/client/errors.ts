/** One error type for every failed API call: the server's Status, flattened, with predicates. */
import type { Status, StatusCause } from '../api/meta.ts';

export class StatusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly causes: StatusCause[] = [],
    /** Seconds the server asked us to wait (Retry-After header or details.retryAfterSeconds). */
    readonly retryAfter?: number,
    readonly status?: Status,
  ) {
    super(message);
    this.name = 'StatusError';
  }

  /** Builds the error from a response: a Status body when there is one, the bare HTTP code otherwise. */
  static fromResponse(code: number, bodyText: string, retryAfterHeader?: string): StatusError {
    let status: Status | undefined;
    try {
      const parsed = JSON.parse(bodyText);
      if (parsed?.kind === 'Status') status = parsed;
    } catch {
      // not JSON: keep the text as the message
    }
    const headerRetry = retryAfterHeader !== undefined ? Number(retryAfterHeader) : undefined;
    const retryAfter = Number.isFinite(headerRetry) ? headerRetry : status?.details?.retryAfterSeconds;
    const message = status?.message ?? (bodyText.trim() || `HTTP ${code}`);
    return new StatusError(
      status?.code ?? code,
      status?.reason ?? reasonForCode(code),
      message,
      status?.details?.causes ?? [],
      retryAfter,
      status,
    );
  }
}

function reasonForCode(code: number): string {
  const reasons: Record<number, string> = {
    400: 'BadRequest',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'NotFound',
    405: 'MethodNotAllowed',
    406: 'NotAcceptable',
    409: 'Conflict',
    410: 'Expired',
    413: 'RequestEntityTooLarge',
    415: 'UnsupportedMediaType',
    422: 'Invalid',
    429: 'TooManyRequests',
    500: 'InternalError',
    503: 'ServiceUnavailable',
    504: 'Timeout',
  };
  return reasons[code] ?? 'Unknown';
}

const is = (code: number, reason?: string) => (err: unknown) =>
  err instanceof StatusError && (err.code === code || (reason !== undefined && err.reason === reason));

export const isNotFound = is(404, 'NotFound');
export const isConflict = (err: unknown) => err instanceof StatusError && err.code === 409 && err.reason === 'Conflict';
export const isAlreadyExists = (err: unknown) => err instanceof StatusError && err.reason === 'AlreadyExists';
export const isGone = is(410, 'Gone');
export const isExpired = (err: unknown) => err instanceof StatusError && (err.code === 410 || err.reason === 'Expired');
export const isInvalid = is(422, 'Invalid');
export const isForbidden = is(403, 'Forbidden');
export const isUnauthorized = is(401, 'Unauthorized');
export const isTooManyRequests = is(429, 'TooManyRequests');
/** A create refused because its namespace is being deleted (the reference's `NamespaceTerminating` cause). */
export const isNamespaceTerminating = (err: unknown) =>
  err instanceof StatusError && err.causes.some((c) => c.reason === 'NamespaceTerminating');
export const isServerError = (err: unknown) => err instanceof StatusError && err.code >= 500;
