import { describe, expect, it } from 'vitest';
import { newEnvironment } from './library.ts';
import { compile } from './policy.ts';
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
  const program = (expr: string) => {
    const c = compile(env, expr);
    if ('error' in c) throw new Error(c.error);
    return c.program;
  };
  const costOf = (expr: string) => metered(1_000_000, () => program(expr)({ object })).cost;

  it('charges each node evaluated, each comprehension step included', () => {
    expect(costOf('1 + 2')).toBeGreaterThan(0);
    const short = costOf('object.items.exists(x, x == 10)');
    const long = costOf('object.items.exists(x, x == 1000)');
    expect(long).toBeGreaterThan(50 * short);
  });

  it('charges loops over lists the expression built itself', () => {
    expect(costOf('object.items.map(x, x).map(y, y).size() > 0')).toBeGreaterThan(4000);
  });

  it('stops a loop nested in a loop over a big list with a clear error', () => {
    const quadratic = program('object.items.map(x, x).all(x, object.items.all(y, x >= 0))');
    expect(() => metered(100_000, () => quadratic({ object }))).toThrow(CostLimitError);
    expect(() => metered(100_000, () => quadratic({ object }))).toThrow(
      'operation cancelled: actual cost limit exceeded',
    );
  });

  it('leaves evaluation outside a meter unbounded, and restores the outer budget', () => {
    const p = program('object.items[0] + object.items[1]');
    expect(p({ object })).toBe(1n);
    const outer = metered(1000, () => {
      const inner = metered(1000, () => p({ object })).cost;
      return inner;
    });
    expect(outer.cost).toBe(0);
    expect(outer.value).toBeGreaterThan(0);
  });
});
