/**
 * The environments admission policy expressions are compiled in, as the reference builds them:
 *
 * - for enforcement, `object`, `oldObject`, `params`, `request`, `namespaceObject` and `variables` are
 *   `dyn` (the values are whatever the request carries) and `authorizer` is typed;
 * - for type checking (the status controller), `object` and `oldObject` are typed from the matched kind's
 *   schema, `params` from the paramKind's (undeclared when it does not resolve), `request` and
 *   `namespaceObject` from their own schemas, and `variables` has one field per declared variable, typed
 *   from its expression.
 *
 * Compile errors read like cel-go's: `ERROR: <input>:<line>:<col>: <message>`, the source line and a caret.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { schemaFor } from '../api/schema.ts';
import { AUTHORIZER_TYPE } from './ext/authorizer.ts';
import { typeCheckIssues } from './issues.ts';
import { platformEnvironment } from './library.ts';
import { type DeclType, declType, type OpenAPISchema, openAPIFromNode, registerDeclType } from './schema-types.ts';
import { meterAst } from './values.ts';

export type Program = (context: Record<string, unknown>) => unknown;

const strings: OpenAPISchema = { type: 'array', items: { type: 'string' } };
const obj = (properties: Record<string, OpenAPISchema>): OpenAPISchema => ({ type: 'object', properties });
const gvk = obj({ group: { type: 'string' }, version: { type: 'string' }, kind: { type: 'string' } });
const gvr = obj({ group: { type: 'string' }, version: { type: 'string' }, resource: { type: 'string' } });

/** The admission request as expressions see it (`request.userInfo.username`, `request.operation`, ...). */
const REQUEST = declType(
  obj({
    kind: gvk,
    resource: gvr,
    subResource: { type: 'string' },
    requestKind: gvk,
    requestResource: gvr,
    requestSubResource: { type: 'string' },
    name: { type: 'string' },
    namespace: { type: 'string' },
    operation: { type: 'string' },
    userInfo: obj({
      username: { type: 'string' },
      uid: { type: 'string' },
      groups: strings,
      extra: { type: 'object', additionalProperties: strings },
    }),
    dryRun: { type: 'boolean' },
    options: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  }),
);

let enforcementBase: Environment | undefined;
let checkingBase: Environment | undefined;

/** The parent of every enforcement environment (built once; clones add nothing, so it is shared). */
export function enforcementEnvironment(): Environment {
  if (!enforcementBase) {
    const env = platformEnvironment();
    for (const name of ['object', 'oldObject', 'params', 'request', 'namespaceObject', 'variables']) {
      env.registerVariable(name, 'dyn');
    }
    env.registerVariable('authorizer', AUTHORIZER_TYPE);
    enforcementBase = env;
  }
  return enforcementBase;
}

/** `t == null` and `t != null` type-check for object types, as they do in cel-go. */
function declareNullable(env: Environment, name: string, t: DeclType): string {
  const type = registerDeclType(env, name, t);
  if (t.kind === 'object') {
    // `!=` comes with `==`.
    env.registerOperator(`${type} == null`, (v: unknown) => v === null);
  }
  return type;
}

/** A platform environment with `request` and `namespaceObject` typed, as every reference environment has them. */
function typedRequestEnvironment(): Environment {
  const env = platformEnvironment();
  env.registerVariable('request', declareNullable(env, 'kubernetes.AdmissionRequest', REQUEST));
  const namespace = declType(openAPIFromNode(schemaFor('Namespace')!));
  return env.registerVariable('namespaceObject', declareNullable(env, 'Namespace', namespace));
}

function checkingParent(): Environment {
  checkingBase ??= typedRequestEnvironment().registerVariable('authorizer', AUTHORIZER_TYPE);
  return checkingBase;
}

/** What the reference's validation of a policy declares for one of its expressions. */
export interface Declarations {
  /** `params` (dyn): the policy has a paramKind. */
  params: boolean;
  authorizer: boolean;
  /** The types of the variables declared before this expression; `variables` is undeclared without any. */
  variables?: Record<string, string>;
}

const validationBases = new Map<string, Environment>();

/**
 * The environment the reference compiles a policy's expressions in when it validates the policy: `object` and
 * `oldObject` dyn, `request` and `namespaceObject` typed, `params` and `authorizer` only where declared.
 */
function validationEnvironment(d: Declarations): Environment {
  const key = `${d.params}/${d.authorizer}`;
  let base = validationBases.get(key);
  if (!base) {
    base = typedRequestEnvironment().registerVariable('object', 'dyn').registerVariable('oldObject', 'dyn');
    if (d.params) base.registerVariable('params', 'dyn');
    if (d.authorizer) base.registerVariable('authorizer', AUTHORIZER_TYPE);
    validationBases.set(key, base);
  }
  return d.variables && Object.keys(d.variables).length ? withVariables(base, d.variables) : base;
}

/** A type as cel-go names it (`list(int)`, `null_type`). */
const celGoTypeName = (t: string) => {
  // The library's check names list(dyn) and map(dyn, dyn) by their kind alone.
  const named = t === 'list' ? 'list<dyn>' : t === 'map' ? 'map<dyn, dyn>' : t;
  return named === 'null' ? 'null_type' : named.replaceAll('<', '(').replaceAll('>', ')');
};

/**
 * The reference's compile-time check of a policy expression (cel-go's CompileCELExpression): it must compile in
 * its environment and evaluate to one of `returnTypes` (cel-go's names; any type when none are given). The
 * expression's type (this library's name, to declare a variable with), or the error detail in the reference's words.
 */
export function checkPolicyExpression(
  expression: string,
  d: Declarations,
  returnTypes: readonly string[] = [],
): { type: string } | { error: string } {
  const env = validationEnvironment(d);
  const checked = env.check(expression);
  if (!checked.valid) return { error: `compilation failed: ${typeCheckIssues(env, expression)}` };
  const type = checked.type ?? 'dyn';
  if (returnTypes.length === 0 || returnTypes.includes(celGoTypeName(type))) return { type };
  const wanted = returnTypes.length === 1 ? returnTypes[0] : `one of [${returnTypes.join(' ')}]`;
  return { error: `must evaluate to ${wanted} but got ${celGoTypeName(type)}` };
}

export interface CheckTypes {
  /** The matched kind: its name (for messages) and type. */
  object: { name: string; type: DeclType };
  /** The paramKind's, when it resolves; `params` is undeclared otherwise. */
  params?: { name: string; type: DeclType };
  /** The policy's variables, in order. */
  variables: { name: string; expression: string }[];
}

const VARIABLES_TYPE = 'kubernetes.Variables';

/** A child of `base` with `variables` declared with these field types (all `dyn` if one is not declarable). */
function withVariables(base: Environment, fields: Record<string, string>): Environment {
  for (const attempt of [fields, Object.fromEntries(Object.keys(fields).map((k) => [k, 'dyn']))]) {
    const env = base.clone();
    try {
      env.registerType(VARIABLES_TYPE, { fields: attempt });
      return env.registerVariable('variables', VARIABLES_TYPE);
    } catch {
      // a result type the library cannot use as a field type: fall back to dyn
    }
  }
  throw new Error('cannot declare variables');
}

/**
 * An environment for type-checking a policy's expressions against one kind. Each variable is checked in
 * order with the earlier ones declared, and `variables.<name>` gets its expression's type (`dyn` when
 * the expression does not check).
 */
export function typeCheckEnvironment(t: CheckTypes): Environment {
  const base = checkingParent().clone();
  const objectType = declareNullable(base, t.object.name, t.object.type);
  base.registerVariable('object', objectType).registerVariable('oldObject', objectType);
  if (t.params) {
    const paramsName = t.params.name === t.object.name ? `${t.params.name}Params` : t.params.name;
    base.registerVariable('params', declareNullable(base, paramsName, t.params.type));
  }
  const fields: Record<string, string> = {};
  for (const v of t.variables) {
    const checked = withVariables(base, fields).check(v.expression);
    fields[v.name] = checked.valid && checked.type ? checked.type : 'dyn';
  }
  return withVariables(base, fields);
}

interface LocatedError {
  message: string;
  summary?: string;
  range?: { start: number };
}

/** A compile error in cel-go's layout. */
export function formatIssue(expression: string, err: LocatedError): string {
  const at = Math.min(err.range?.start ?? 0, expression.length);
  const before = expression.slice(0, at);
  const line = before.split('\n').length;
  const col = at - (before.lastIndexOf('\n') + 1);
  const source = expression.split('\n')[line - 1];
  const message = err.summary ?? err.message.split('\n')[0];
  return `ERROR: <input>:${line}:${col + 1}: ${message}\n | ${source}\n | ${'.'.repeat(col)}^`;
}

/** Parses and checks `expression`; the program, or the issue text. */
export function compile(env: Environment, expression: string): { program: Program } | { error: string } {
  try {
    const parsed = env.parse(expression);
    const checked = parsed.check();
    if (!checked.valid) return { error: formatIssue(expression, checked.error as LocatedError) };
    meterAst(parsed.ast);
    return { program: parsed };
  } catch (err) {
    return { error: formatIssue(expression, err as LocatedError) };
  }
}
