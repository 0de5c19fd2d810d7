import { describe, expect, it } from 'vitest';
import { validateControllerRevisionCreate, validateControllerRevisionUpdate } from './controller-revision.ts';
import { ctx, fieldError } from './test-helpers.ts';

const rev = (extra: Record<string, unknown>) => ({
  metadata: { name: 'web-7b9c5d6f8', namespace: 'default', resourceVersion: '1' },
  ...extra,
});
const err = fieldError;
const data = { spec: { template: { metadata: { labels: { app: 'web' } } } } };

describe('ControllerRevision', () => {
  it('accepts data and a revision', () => {
    expect(validateControllerRevisionCreate(rev({ data, revision: 3 }), ctx)).toEqual([]);
  });

  it.each([
    ['no data', rev({ revision: 1 }), err('FieldValueRequired', 'data', 'Required value: data is mandatory')],
    [
      'a negative revision',
      rev({ data, revision: -1 }),
      err('FieldValueInvalid', 'revision', 'Invalid value: -1: must be greater than or equal to 0'),
    ],
    [
      'a revision of the wrong type',
      rev({ data, revision: '1' }),
      err('FieldValueInvalid', 'revision', 'Invalid value: "1": must be of type integer'),
    ],
  ])('rejects %s', (_n, o, expected) => {
    expect(validateControllerRevisionCreate(o, ctx)).toEqual([expected]);
  });

  it('allows metadata and revision-number updates only', () => {
    const old = rev({ data, revision: 3 });
    expect(
      validateControllerRevisionUpdate(
        rev({ data, revision: 3, metadata: { ...old.metadata, labels: { a: 'b' } } }),
        old,
        ctx,
      ),
    ).toEqual([]);
    expect(validateControllerRevisionUpdate(rev({ data: { x: 1 }, revision: 3 }), old, ctx)).toEqual([
      err('FieldValueInvalid', 'data', 'Invalid value: {"x":1}: field is immutable'),
    ]);
    // A rollback renumbers the revision it returns to (the reference checks only data).
    expect(validateControllerRevisionUpdate(rev({ data, revision: 4 }), old, ctx)).toEqual([]);
  });
});
