import { describe, expect, it } from 'vitest';
import {
  isAlreadyExists,
  isConflict,
  isExpired,
  isForbidden,
  isGone,
  isInvalid,
  isNotFound,
  isServerError,
  isTooManyRequests,
  isUnauthorized,
  StatusError,
} from './errors.ts';

const status = (code: number, reason: string, message: string, details: object = {}) =>
  JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message, details });

describe('StatusError.fromResponse', () => {
  it('takes code, reason, message and causes from a Status body', () => {
    const causes = [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.replicas' }];
    const err = StatusError.fromResponse(
      422,
      status(422, 'Invalid', 'Deployment.apps "web" is invalid: spec.replicas: Required value', { causes }),
    );
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('StatusError');
    expect(err.code).toBe(422);
    expect(err.reason).toBe('Invalid');
    expect(err.message).toBe('Deployment.apps "web" is invalid: spec.replicas: Required value');
    expect(err.causes).toEqual(causes);
    expect(err.retryAfter).toBeUndefined();
    expect(err.status?.kind).toBe('Status');
  });

  it('reads retryAfter from the header first, then from details.retryAfterSeconds', () => {
    const body = status(429, 'TooManyRequests', 'slow down', { retryAfterSeconds: 7 });
    expect(StatusError.fromResponse(429, body).retryAfter).toBe(7);
    expect(StatusError.fromResponse(429, body, '3').retryAfter).toBe(3);
    expect(StatusError.fromResponse(429, body, '0').retryAfter).toBe(0);
    // A header that is not a number of seconds falls back to the body.
    expect(StatusError.fromResponse(429, body, 'soon').retryAfter).toBe(7);
  });

  it('keeps a non-Status body as the message and derives the reason from the code', () => {
    const err = StatusError.fromResponse(503, 'upstream overloaded\n', '2');
    expect({ code: err.code, reason: err.reason, message: err.message, retryAfter: err.retryAfter }).toEqual({
      code: 503,
      reason: 'ServiceUnavailable',
      message: 'upstream overloaded',
      retryAfter: 2,
    });
    expect(err.causes).toEqual([]);
    expect(err.status).toBeUndefined();
    expect(StatusError.fromResponse(418, '').message).toBe('HTTP 418');
    expect(StatusError.fromResponse(418, '').reason).toBe('Unknown');
    // JSON that is not a Status is not mistaken for one.
    expect(StatusError.fromResponse(404, '{"kind":"Pod"}').reason).toBe('NotFound');
  });
});

describe('predicates', () => {
  const e = (code: number, reason: string) => new StatusError(code, reason, 'x');
  const cases: [string, (err: unknown) => boolean, StatusError[], StatusError[]][] = [
    ['isNotFound', isNotFound, [e(404, 'NotFound')], [e(410, 'Gone'), e(409, 'Conflict')]],
    ['isConflict', isConflict, [e(409, 'Conflict')], [e(409, 'AlreadyExists'), e(422, 'Invalid')]],
    ['isAlreadyExists', isAlreadyExists, [e(409, 'AlreadyExists')], [e(409, 'Conflict')]],
    ['isGone', isGone, [e(410, 'Gone')], [e(404, 'NotFound')]],
    ['isExpired', isExpired, [e(410, 'Expired'), e(410, 'Gone'), e(500, 'Expired')], [e(404, 'NotFound')]],
    ['isInvalid', isInvalid, [e(422, 'Invalid')], [e(400, 'BadRequest')]],
    ['isForbidden', isForbidden, [e(403, 'Forbidden')], [e(401, 'Unauthorized')]],
    ['isUnauthorized', isUnauthorized, [e(401, 'Unauthorized')], [e(403, 'Forbidden')]],
    ['isTooManyRequests', isTooManyRequests, [e(429, 'TooManyRequests'), e(429, 'Unknown')], [e(503, 'Unknown')]],
    [
      'isServerError',
      isServerError,
      [e(500, 'InternalError'), e(503, 'ServiceUnavailable'), e(504, 'Timeout')],
      [e(429, 'TooManyRequests')],
    ],
  ];

  it.each(cases)('%s', (_name, predicate, yes, no) => {
    for (const err of yes) expect(predicate(err), `${err.code} ${err.reason}`).toBe(true);
    for (const err of no) expect(predicate(err), `${err.code} ${err.reason}`).toBe(false);
    // Only StatusErrors qualify.
    expect(predicate(new Error('404 NotFound'))).toBe(false);
    expect(predicate(undefined)).toBe(false);
  });
});
