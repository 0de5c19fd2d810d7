import { describe, expect, it } from 'vitest';
import { newEnvironment } from './library.ts';
import { CostLimitError, fromCel, metered, toCel } from './values.ts';

describe('JSON as CEL values', () => {
  it.each([
    [3, 3n],
    [1.5, 1.5],
    ['s', 's'],
    [null, null],
    [{ a: [1, 2.5] }, { a: [1n, 2.5] }],
  ])('%j → %o', (json, want) => {
    expect(toCel(json)).toEqual(want);
  });

  it('comes back as JSON', () => {
    expect(fromCel(toCel({ a: [1, 'x'], b: { c: true } }))).toEqual({ a: [1, 'x'], b: { c: true } });
    expect(fromCel(new Map([['k', 1n]]))).toEqual({ k: 1 });
  });
});

describe('the cost meter', () => {
  const env = newEnvironment();
  env.registerVariable('object', 'dyn');
  const object = toCel({ items: Array.from({ length: 2000 }, (_, i) => i) });

  it('charges every element read and reports the cost', () => {
    const { value, cost } = metered(10_000, () => env.evaluate('object.items.exists(x, x == 10)', { object }));
    expect(value).toBe(true);
    expect(cost).toBe(11);
  });

  it('stops a loop nested in a loop over a big list with a clear error', () => {
    const quadratic = 'object.items.all(x, object.items.all(y, x >= 0))';
    expect(() => metered(100_000, () => env.evaluate(quadratic, { object }))).toThrow(CostLimitError);
    expect(() => metered(100_000, () => env.evaluate(quadratic, { object }))).toThrow(
      'operation cancelled: actual cost limit exceeded',
    );
  });

  it('leaves evaluation outside a meter unbounded, and restores the outer budget', () => {
    expect(env.evaluate('size(object.items) == 2000', { object })).toBe(true);
    const outer = metered(1000, () => {
      metered(5, () => env.evaluate('object.items[0] + object.items[1]', { object }));
      return env.evaluate('object.items[2]', { object });
    });
    expect(outer.cost).toBe(1);
  });
});
