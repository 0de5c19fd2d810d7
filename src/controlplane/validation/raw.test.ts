import { describe, expect, it } from 'vitest';
import { checkShape, type Shape } from './raw.ts';

const TIMES: Shape = { fields: { at: 'time', items: { items: 'int32' } } };

describe('checkShape', () => {
  it('reports each member of the wrong type by its path', () => {
    const errs = checkShape({ at: 5, items: [1, 'two', 2 ** 31] }, TIMES, 'spec');
    expect(errs.map((e) => e.message)).toEqual([
      'spec.at: Invalid value: 5: must be of type string',
      'spec.items[1]: Invalid value: "two": must be of type integer',
      'spec.items[2]: Invalid value: 2147483648: must be a 32-bit integer',
    ]);
  });

  it('reports in the order the members came, and passes over members the shape does not name', () => {
    const errs = checkShape({ items: ['one'], unknown: 1, at: 5, constructor: 'x' }, TIMES, 'spec');
    expect(errs.map((e) => e.field)).toEqual(['spec.items[0]', 'spec.at']);
  });

  it('accepts a timestamp again without letting a malformed one through after it', () => {
    const good = '2026-11-25T18:00:00Z';
    expect(checkShape({ at: good }, TIMES, 'spec')).toEqual([]);
    expect(checkShape({ at: good }, TIMES, 'spec')).toEqual([]);
    for (const bad of ['2026-11-25T18:00:00', '2026-13-25T18:00:00Z', `${good} `]) {
      expect(checkShape({ at: bad }, TIMES, 'spec').map((e) => e.message)).toEqual([
        `spec.at: Invalid value: ${JSON.stringify(bad)}: must be an RFC 3339 timestamp`,
      ]);
    }
    expect(checkShape({ at: good }, TIMES, 'spec')).toEqual([]);
  });
});
