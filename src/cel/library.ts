/**
 * The CEL environment every policy expression is compiled in: `@marcbachmann/cel-js` (the one npm
 * library with a real type checker, chosen by measurement on the cel-spec conformance data) with the
 * options the platform uses, plus the platform's extension libraries.
 */
import { Environment } from '@marcbachmann/cel-js';

type EnvironmentOptions = NonNullable<ConstructorParameters<typeof Environment>[0]>;

/** A fresh environment with the platform's options; `overrides` for tests and tools. */
export function newEnvironment(overrides: EnvironmentOptions = {}): Environment {
  return new Environment({
    // cel-go (and so the reference) types mixed literals as list(dyn) / map(dyn, dyn) instead of refusing them.
    homogeneousAggregateLiterals: false,
    enableOptionalTypes: true,
    ...overrides,
  });
}
