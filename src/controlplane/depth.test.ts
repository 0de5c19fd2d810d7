import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDocument, stringify } from 'yaml';
import { jsonDepthError, yamlDepthExceededLine } from './depth.ts';

/** The nesting of a value (scalars 0), by recursion: test values are small. */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}

/** The depth the scan finds: the least `max` it does not refuse. */
function yamlDepth(text: string): number {
  let max = 0;
  while (yamlDepthExceededLine(text, max) && max < 200) max++;
  return max;
}

describe('jsonDepthError', () => {
  it.each([
    ['[[1]]', 2, undefined],
    ['[[[1]]]', 2, "invalid character '[' exceeded max depth"],
    ['{"a":{"b":{}}}', 2, "invalid character '{' exceeded max depth"],
    ['{"a":"{{{{{{"}', 1, undefined],
    ['["\\"[[[[["]', 1, undefined],
    ['{"a":"\\\\"}', 1, undefined],
    ['[1],[2],[3]', 1, undefined],
  ])('%s with max %d', (text, max, expected) => {
    expect(jsonDepthError(text, max)).toBe(expected);
  });
});

describe('yamlDepthExceededLine', () => {
  it.each([
    // A scalar value counts as a level: one over the value's nesting, never under.
    ['a: b', 2],
    ['a:\n  b:\n    c: 1\n  d: 2\n', 4],
    ['- - - x', 4],
    ['a:\n- b:\n  - c: 1\n', 6],
    ['a: {b: [c, {d: e}]}', 4],
    ['{"a":{"b":[1]}}', 3],
    ['a: "[[[[[[[["', 2],
    ["a: 'it''s [[[[[[[['", 2],
    ['a: b[[[[[[[[[', 2],
    ['a: |\n  [[[[[[[[[[\n  {{{{{{{{\nb: 1', 2],
    ['a: # [[[[[[[[[[\n', 1],
    ["[a'b, [[[c]]]]", 4],
    ['--- [[[x]]]', 3],
    ['a: &x [1]\nb: *x\n', 2],
    ['k: !!str [a]', 2],
  ])('%j is at most %d deep', (text, depth) => {
    expect(yamlDepth(text)).toBe(depth);
  });

  it('names the line where the limit is passed', () => {
    expect(yamlDepthExceededLine('a: 1\nb:\n  c:\n    d: [x]\n', 3)).toBe(4);
  });

  it('never counts less than the nesting the YAML library builds, and at most one level more', () => {
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.constantFrom('x', 1, true, null, 'a: b', '[1]', '{y}', "it's", '- z', '#c', '|'),
        fc.array(tie('node'), { maxLength: 3 }),
        fc.dictionary(fc.constantFrom('a', 'b', 'c d', '[k]', '-', '?'), tie('node'), { maxKeys: 3 }),
      ),
    })).node;
    fc.assert(
      fc.property(value, fc.constantFrom(1, 2, 4), fc.boolean(), (v, indent, flow) => {
        const text = stringify(v, { indent, indentSeq: indent > 1, collectionStyle: flow ? 'flow' : 'block' });
        const built = parseDocument(text).toJS();
        const real = depthOf(built);
        const found = yamlDepth(text);
        expect(found, text).toBeGreaterThanOrEqual(real);
        expect(found, text).toBeLessThanOrEqual(real + 1);
      }),
      { seed: 20261127, numRuns: 400 },
    );
  });

  it('scans 100,000 levels in a few milliseconds', () => {
    const text = `metadata:\n  labels: ${'{a: '.repeat(100_000)}b${'}'.repeat(100_000)}\n`;
    const started = performance.now();
    expect(yamlDepthExceededLine(text)).toBe(2);
    expect(performance.now() - started).toBeLessThan(100);
  });
});
