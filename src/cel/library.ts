/**
 * The CEL environment every policy expression is compiled in: `@marcbachmann/cel-js` (the one npm
 * library with a real type checker, chosen by measurement on the cel-spec conformance data) with the
 * options the platform uses, plus the platform's extension libraries.
 */
import { Environment } from '@marcbachmann/cel-js';
import { registerAuthorizer } from './ext/authorizer.ts';
import { registerFormat } from './ext/format.ts';
import { registerIP } from './ext/ip.ts';
import { registerLists } from './ext/lists.ts';
import { registerQuantity } from './ext/quantity.ts';
import { registerSemver } from './ext/semver.ts';
import { registerStrings } from './ext/strings.ts';
import { registerURL } from './ext/url.ts';

type EnvironmentOptions = NonNullable<ConstructorParameters<typeof Environment>[0]>;

/** The reference's bound on expression size. */
export const MAX_AST_NODES = 100_000;

/** A fresh environment with the platform's options, without the extension libraries. */
export function newEnvironment(overrides: EnvironmentOptions = {}): Environment {
  return new Environment({
    // cel-go (and so the reference) types mixed literals as list(dyn) / map(dyn, dyn) instead of refusing them.
    homogeneousAggregateLiterals: false,
    enableOptionalTypes: true,
    limits: {
      maxAstNodes: MAX_AST_NODES,
      maxDepth: 250,
      maxListElements: 10_000,
      maxMapEntries: 10_000,
      maxCallArguments: 32,
    },
    ...overrides,
  });
}

/** The platform's base environment: the options and every extension library. */
export function platformEnvironment(): Environment {
  const env = newEnvironment();
  for (const register of [
    registerStrings,
    registerLists,
    registerQuantity,
    registerURL,
    registerIP,
    registerSemver,
    registerFormat,
    registerAuthorizer,
  ]) {
    register(env);
  }
  return env;
}
