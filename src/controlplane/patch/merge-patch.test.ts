import { describe, expect, it } from 'vitest';
import { deepFreeze } from './deep-freeze.ts';
import { applyMergePatch, type JsonObject, type JsonValue } from './merge-patch.ts';

describe('applyMergePatch', () => {
  it.each<[JsonValue, JsonValue, JsonValue]>([
    // RFC 7386 appendix A, in order.
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ])('%j patched with %j is %j', (target, patch, expected) => {
    expect(applyMergePatch(deepFreeze(target), deepFreeze(patch))).toEqual(expected);
  });

  it('merges the RFC 7386 section 3 example', () => {
    const target = {
      title: 'Goodbye!',
      author: { givenName: 'John', familyName: 'Doe' },
      tags: ['example', 'sample'],
      content: 'This will be unchanged',
    };
    const patch = { title: 'Hello!', phoneNumber: '+01-123-456-7890', author: { familyName: null }, tags: ['example'] };
    expect(applyMergePatch(deepFreeze(target), deepFreeze(patch))).toEqual({
      title: 'Hello!',
      author: { givenName: 'John' },
      tags: ['example'],
      content: 'This will be unchanged',
      phoneNumber: '+01-123-456-7890',
    });
  });

  it('patches a missing target as an empty object', () => {
    expect(applyMergePatch(undefined, { a: { b: null, c: 1 } })).toEqual({ a: { c: 1 } });
  });

  it('returns a document that shares nothing with its inputs', () => {
    const target = deepFreeze({ spec: { replicas: 1 }, metadata: { labels: { app: 'web' } } });
    const patch = deepFreeze({ spec: { template: { spec: {} } } });
    const result = applyMergePatch(target, patch) as { spec: { template: JsonObject }; metadata: JsonObject };
    // Writing into a frozen input would throw here.
    result.metadata.name = 'web';
    result.spec.template.metadata = {};
    expect(result).toEqual({
      spec: { replicas: 1, template: { spec: {}, metadata: {} } },
      metadata: { labels: { app: 'web' }, name: 'web' },
    });
  });

  it('stores a __proto__ member as data', () => {
    const patch = JSON.parse('{"__proto__": {"polluted": true}}');
    const result = applyMergePatch({}, patch) as JsonObject;
    expect(Object.hasOwn(result, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(({} as JsonObject).polluted).toBeUndefined();
  });
});
