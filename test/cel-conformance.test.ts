/**
 * The CEL library src/cel is built on, in the environment src/cel gives it, against the cel-spec
 * conformance data: the pass count of each suite must not drop below what was measured when the library
 * was chosen (see test/support/cel-conformance.ts for what each suite checks).
 */
import { describe, expect, it } from 'vitest';
import { marcbachmann } from './support/cel-candidates.ts';
import { measure } from './support/cel-conformance.ts';

/** Measured with @marcbachmann/cel-js 8.0.0 and @bufbuild/cel-spec 0.6.1 (cel-spec v0.25.1). */
const FLOOR = { parse: 174, check: 61, eval: 1194, 'eval-plain': 1165 };

describe('CEL conformance of the chosen library', () => {
  const results = measure(marcbachmann());
  it.each(results)('$suite suite passes at least as many tests as measured', (r) => {
    expect(r.total).toBeGreaterThan(0);
    expect(r.passed).toBeGreaterThanOrEqual(FLOOR[r.suite]);
  });
});
