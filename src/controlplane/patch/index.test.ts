import { describe, expect, it } from 'vitest';
import { deepFreeze } from './deep-freeze.ts';
import { applyPatch, PATCH_CONTENT_TYPES, PatchError } from './index.ts';
import type { JsonObject } from './merge-patch.ts';

const pod: JsonObject = deepFreeze({
  kind: 'Pod',
  metadata: { name: 'web', labels: { app: 'web' } },
  spec: { containers: [{ name: 'app', image: 'app:1' }] },
});

function failure(contentType: string, body: unknown): PatchError {
  try {
    applyPatch(contentType, pod, deepFreeze(body), 'Pod');
  } catch (error) {
    if (error instanceof PatchError) return error;
    throw error;
  }
  throw new Error('the patch applied');
}

describe('applyPatch', () => {
  const addSidecar = { spec: { containers: [{ name: 'log', image: 'log:1' }] } };

  it.each<[string, unknown, JsonObject]>([
    [
      'application/json-patch+json',
      [{ op: 'replace', path: '/metadata/labels/app', value: 'api' }],
      { ...pod, metadata: { name: 'web', labels: { app: 'api' } } },
    ],
    ['application/merge-patch+json', addSidecar, { ...pod, spec: { containers: [{ name: 'log', image: 'log:1' }] } }],
    [
      'application/strategic-merge-patch+json',
      addSidecar,
      {
        ...pod,
        spec: {
          containers: [
            { name: 'log', image: 'log:1' },
            { name: 'app', image: 'app:1' },
          ],
        },
      },
    ],
    [
      'application/apply-patch+yaml',
      addSidecar,
      {
        ...pod,
        spec: {
          containers: [
            { name: 'app', image: 'app:1' },
            { name: 'log', image: 'log:1' },
          ],
        },
      },
    ],
    [
      'Application/Merge-Patch+JSON; charset=utf-8',
      { metadata: { labels: null } },
      { ...pod, metadata: { name: 'web' } },
    ],
  ])('applies %s', (contentType, body, expected) => {
    expect(applyPatch(contentType, pod, deepFreeze(body), 'Pod')).toEqual(expected);
  });

  it('lists the accepted content types', () => {
    expect(PATCH_CONTENT_TYPES).toEqual([
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/strategic-merge-patch+json',
      'application/apply-patch+yaml',
    ]);
  });

  it.each(['application/json', 'application/apply-patch+cbor', ''])('rejects the content type %j', (contentType) => {
    const error = failure(contentType, {});
    expect(error.reason).toBe('UnsupportedMediaType');
    expect(error.message).toBe(
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml',
    );
  });

  it.each([
    ['application/merge-patch+json', ['a']],
    ['application/strategic-merge-patch+json', 'a'],
  ])('rejects a %s body that is not an object', (contentType, body) => {
    const error = failure(contentType, body);
    expect(error.reason).toBe('BadRequest');
    expect(error.message).toBe('invalid JSON document: the patch must be a JSON object');
  });

  it('rejects a JSON patch that leaves something other than an object', () => {
    const error = failure('application/json-patch+json', [{ op: 'replace', path: '', value: [] }]);
    expect(error.reason).toBe('Invalid');
    expect(error.message).toBe('the patched document is not a JSON object');
  });
});
