/**
 * JSON objects as CEL values, and the cost meter that bounds evaluation.
 *
 * CEL distinguishes int from double where JSON does not: integral numbers become `int` (bigint), others
 * `double`, as the reference does for unstructured objects. Evaluation is metered: every node an
 * expression evaluates (each comprehension step included) is charged to the evaluation's budget, so a
 * loop over a huge list, or a loop nested in a loop, stops with a clear error instead of holding the
 * server (the library evaluates synchronously and has no cost tracking of its own).
 */

/** The reference's per-expression runtime cost limit. */
export const PER_CALL_COST_LIMIT = 1_000_000;

export class CostLimitError extends Error {
  constructor(limit: number) {
    super(`operation cancelled: actual cost limit exceeded (limit ${limit})`);
  }
}

/** The budget of the evaluation in progress (evaluation is synchronous, so one at a time). */
const meter = { remaining: Number.POSITIVE_INFINITY, limit: Number.POSITIVE_INFINITY };

/** Runs `fn` with a budget of `limit` units; returns its result and the cost spent. */
export function metered<T>(limit: number, fn: () => T): { value: T; cost: number } {
  const { remaining, limit: outer } = meter;
  meter.remaining = limit;
  meter.limit = limit;
  try {
    const value = fn();
    return { value, cost: limit - meter.remaining };
  } finally {
    meter.remaining = remaining;
    meter.limit = outer;
  }
}

/** Charges `units` to the running evaluation; throws once its budget is spent. */
export function charge(units = 1): void {
  meter.remaining -= units;
  if (meter.remaining < 0) throw new CostLimitError(meter.limit);
}

interface AstNode {
  op: string;
  args: unknown;
  meta?: Record<string, unknown>;
  evaluate: (ev: unknown, ast: unknown, ctx: unknown) => unknown;
}

/**
 * Makes every evaluation of every node of a parsed expression charge one unit, comprehension steps
 * included. The library installs a node's evaluator on first use by assigning `evaluate`; the accessor
 * keeps the charge in front of whatever it installs.
 */
export function meterAst(root: object): void {
  const Node = root.constructor;
  const seen = new WeakSet<object>();
  const visit = (v: unknown): void => {
    if (!v || typeof v !== 'object' || seen.has(v)) return;
    seen.add(v);
    if (Array.isArray(v)) {
      for (const x of v) visit(x);
      return;
    }
    if (v.constructor === Node) {
      const node = v as AstNode;
      let inner = node.evaluate;
      const charged = function (this: AstNode, ev: unknown, ast: unknown, ctx: unknown) {
        if (--meter.remaining < 0) throw new CostLimitError(meter.limit);
        return inner.call(this, ev, ast, ctx);
      };
      Object.defineProperty(node, 'evaluate', {
        get: () => charged,
        set: (f: AstNode['evaluate']) => {
          inner = f;
        },
      });
      visit(node.args);
      visit(node.meta);
      return;
    }
    const proto = Object.getPrototypeOf(v);
    if (proto === Object.prototype || proto === null) for (const x of Object.values(v)) visit(x);
  };
  visit(root);
}

/** A JSON value (as parsed from a request body) as a CEL value. */
export function toCel(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(toCel);
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = toCel(x);
  return out;
}

/** A CEL result as plain JSON-able data (for messages, annotations and errors). */
export function fromCel(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(fromCel);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), fromCel(x)]));
  if (v.constructor === Object) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fromCel(x)]));
  return String(v);
}
