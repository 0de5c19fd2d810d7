import { describe, expect, it } from 'vitest';
import { deepFreeze } from './deep-freeze.ts';
import { PatchError } from './errors.ts';
import { applyJsonPatch } from './json-patch.ts';
import type { JsonValue } from './merge-patch.ts';

function apply(document: JsonValue, patch: unknown): JsonValue {
  return applyJsonPatch(deepFreeze(document), deepFreeze(patch));
}

function failure(document: JsonValue, patch: unknown): PatchError {
  try {
    apply(document, patch);
  } catch (error) {
    if (error instanceof PatchError) return error;
    throw error;
  }
  throw new Error('the patch applied');
}

describe('applyJsonPatch: RFC 6902 appendix A', () => {
  it.each<[string, JsonValue, JsonValue[], JsonValue]>([
    [
      'A.1 adding an object member',
      { foo: 'bar' },
      [{ op: 'add', path: '/baz', value: 'qux' }],
      { baz: 'qux', foo: 'bar' },
    ],
    [
      'A.2 adding an array element',
      { foo: ['bar', 'baz'] },
      [{ op: 'add', path: '/foo/1', value: 'qux' }],
      { foo: ['bar', 'qux', 'baz'] },
    ],
    ['A.3 removing an object member', { baz: 'qux', foo: 'bar' }, [{ op: 'remove', path: '/baz' }], { foo: 'bar' }],
    [
      'A.4 removing an array element',
      { foo: ['bar', 'qux', 'baz'] },
      [{ op: 'remove', path: '/foo/1' }],
      { foo: ['bar', 'baz'] },
    ],
    [
      'A.5 replacing a value',
      { baz: 'qux', foo: 'bar' },
      [{ op: 'replace', path: '/baz', value: 'boo' }],
      { baz: 'boo', foo: 'bar' },
    ],
    [
      'A.6 moving a value',
      { foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } },
      [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }],
      { foo: { bar: 'baz' }, qux: { corge: 'grault', thud: 'fred' } },
    ],
    [
      'A.7 moving an array element',
      { foo: ['all', 'grass', 'cows', 'eat'] },
      [{ op: 'move', from: '/foo/1', path: '/foo/3' }],
      { foo: ['all', 'cows', 'eat', 'grass'] },
    ],
    [
      'A.8 testing a value: success',
      { baz: 'qux', foo: ['a', 2, 'c'] },
      [
        { op: 'test', path: '/baz', value: 'qux' },
        { op: 'test', path: '/foo/1', value: 2 },
      ],
      { baz: 'qux', foo: ['a', 2, 'c'] },
    ],
    [
      'A.10 adding a nested member object',
      { foo: 'bar' },
      [{ op: 'add', path: '/child', value: { grandchild: {} } }],
      { foo: 'bar', child: { grandchild: {} } },
    ],
    [
      'A.11 ignoring unrecognized elements',
      { foo: 'bar' },
      [{ op: 'add', path: '/baz', value: 'qux', xyz: 123 }],
      { foo: 'bar', baz: 'qux' },
    ],
    ['A.14 ~ escape ordering', { '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: 10 }], { '/': 9, '~1': 10 }],
    [
      'A.16 adding an array value',
      { foo: ['bar'] },
      [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }],
      { foo: ['bar', ['abc', 'def']] },
    ],
  ])('%s', (_name, document, patch, expected) => {
    expect(apply(document, patch)).toEqual(expected);
  });

  it.each<[string, JsonValue, unknown, string]>([
    [
      'A.9 testing a value: error',
      { baz: 'qux' },
      [{ op: 'test', path: '/baz', value: 'bar' }],
      'testing value /baz failed',
    ],
    [
      'A.12 adding to a nonexistent target',
      { foo: 'bar' },
      [{ op: 'add', path: '/baz/bat', value: 'qux' }],
      'doc is missing path: "/baz/bat": missing value',
    ],
    [
      // JSON.parse keeps the last duplicate member, so this is a remove of a missing member.
      'A.13 invalid JSON Patch document',
      { foo: 'bar' },
      JSON.parse('[{ "op": "add", "path": "/baz", "value": "qux", "op": "remove" }]'),
      'doc is missing path: "/baz": missing value',
    ],
    [
      'A.15 comparing strings and numbers',
      { '/': 9, '~1': 10 },
      [{ op: 'test', path: '/~01', value: '10' }],
      'testing value /~01 failed',
    ],
  ])('%s', (_name, document, patch, message) => {
    const error = failure(document, patch);
    expect(error.reason).toBe('Invalid');
    expect(error.message).toBe(message);
  });
});

describe('applyJsonPatch', () => {
  const pod = { metadata: { name: 'web', labels: { app: 'web' } }, spec: { containers: [{ name: 'a' }] } };

  it.each<[string, JsonValue[], JsonValue]>([
    [
      'copies a value',
      [{ op: 'copy', from: '/metadata/labels', path: '/spec/selector' }],
      { ...pod, spec: { ...pod.spec, selector: { app: 'web' } } },
    ],
    [
      'adds a member whose name needs escaping',
      [{ op: 'add', path: '/metadata/labels/example.com~1tier', value: 'db' }],
      { ...pod, metadata: { name: 'web', labels: { app: 'web', 'example.com/tier': 'db' } } },
    ],
    ['replaces the whole document', [{ op: 'replace', path: '', value: { kind: 'Pod' } }], { kind: 'Pod' }],
    [
      'applies operations in order',
      [
        { op: 'add', path: '/spec/containers/-', value: { name: 'b' } },
        { op: 'replace', path: '/spec/containers/1/name', value: 'c' },
        { op: 'test', path: '/spec/containers/1', value: { name: 'c' } },
      ],
      { ...pod, spec: { containers: [{ name: 'a' }, { name: 'c' }] } },
    ],
    [
      'updates a value it added without touching the patch',
      [
        { op: 'add', path: '/spec/nodeSelector', value: { zone: 'a' } },
        { op: 'add', path: '/spec/nodeSelector/disk', value: 'ssd' },
      ],
      { ...pod, spec: { ...pod.spec, nodeSelector: { zone: 'a', disk: 'ssd' } } },
    ],
  ])('%s', (_name, patch, expected) => {
    expect(apply(pod, patch)).toEqual(expected);
  });

  it('keeps a replaced member in its place', () => {
    const result = apply({ a: 1, b: 2, c: 3 }, [{ op: 'replace', path: '/b', value: 20 }]);
    expect(Object.keys(result as object)).toEqual(['a', 'b', 'c']);
  });

  it('returns a document that shares nothing with the input', () => {
    const result = apply(pod, [{ op: 'test', path: '/metadata/name', value: 'web' }]) as typeof pod;
    result.metadata.labels.app = 'changed';
    expect(pod.metadata.labels.app).toBe('web');
  });

  it.each<[string, unknown, string]>([
    ['a body that is not an array', { op: 'add', path: '/a', value: 1 }, 'invalid JSON Patch'],
    ['an operation that is not an object', ['add'], 'invalid JSON Patch: operation 0 is not an object'],
    ['an unknown op', [{ op: 'append', path: '/a' }], 'invalid JSON Patch: operation 0 has unknown op "append"'],
    ['a missing path', [{ op: 'remove' }], 'invalid JSON Patch: operation 0 has no "path"'],
    ['a missing value', [{ op: 'add', path: '/a' }], 'invalid JSON Patch: operation 0 has no "value"'],
    [
      'a missing from',
      [
        { op: 'test', path: '/a', value: 1 },
        { op: 'move', path: '/a' },
      ],
      'invalid JSON Patch: operation 1 has no "from"',
    ],
    ['a pointer without a leading slash', [{ op: 'remove', path: 'metadata' }], 'invalid JSON Pointer "metadata"'],
    ['a pointer with a bad escape', [{ op: 'remove', path: '/a~2' }], 'invalid JSON Pointer "/a~2"'],
  ])('rejects %s as a bad request', (_name, patch, message) => {
    const error = failure(pod, patch);
    expect(error.reason).toBe('BadRequest');
    expect(error.message).toBe(message);
  });

  it.each<[string, JsonValue[], string]>([
    [
      'removing a missing member',
      [{ op: 'remove', path: '/spec/foo' }],
      'doc is missing path: "/spec/foo": missing value',
    ],
    [
      'replacing a missing element',
      [{ op: 'replace', path: '/spec/containers/1', value: {} }],
      'doc is missing path: "/spec/containers/1": missing value',
    ],
    [
      'indexing an array with a name',
      [{ op: 'remove', path: '/spec/containers/first' }],
      'doc is missing path: "/spec/containers/first": missing value',
    ],
    [
      'adding past the end of an array',
      [{ op: 'add', path: '/spec/containers/2', value: {} }],
      'unable to add at /spec/containers/2: index 2 is out of bounds',
    ],
    [
      'adding below a string',
      [{ op: 'add', path: '/metadata/name/x', value: 1 }],
      'doc is missing path: "/metadata/name/x": missing value',
    ],
    ['a failed test', [{ op: 'test', path: '/metadata/name', value: 'api' }], 'testing value /metadata/name failed'],
    [
      'moving a value into its own child',
      [{ op: 'move', from: '/metadata', path: '/metadata/labels/copy' }],
      'cannot move /metadata into its own child /metadata/labels/copy',
    ],
    ['removing the whole document', [{ op: 'remove', path: '' }], 'cannot remove the whole document'],
  ])('rejects %s as invalid', (_name, patch, message) => {
    const error = failure(pod, patch);
    expect(error.reason).toBe('Invalid');
    expect(error.message).toBe(message);
  });
});
