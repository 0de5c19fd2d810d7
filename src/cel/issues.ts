/**
 * Every type-check issue of an expression, in cel-go's words and layout, as a real cluster prints them in a
 * ValidatingAdmissionPolicy's `status.typeChecking`:
 *
 *     ERROR: <input>:1:22: found no matching overload for '_>_' applied to '(int, string)'
 *      | object.spec.replicas > 'a'
 *      | .....................^
 *
 * one such block per issue, sorted by position and joined by a newline.
 *
 * The library's checker stops at its first error. cel-go's goes on, giving the failed node the error type,
 * which every later check accepts. So: check, note the error, mark its node checked as `dyn` (the library
 * keeps each node's checked type and does not check it again), check again; each round settles one node.
 * The library's messages and positions are then put in cel-go's terms: the name of the operator's overload
 * (`_>_`, `@in`), types as `list(int)`, and the token cel-go points at (a select's `.`, an operator, a
 * call's `(`). What the library lets pass and cel-go does not is checked last: the fields `has()` and `x.?f`
 * name, a map's key type. Syntax errors keep the library's words (the API server refuses those before any check).
 */
import { Environment } from '@marcbachmann/cel-js';

/** The library's checked type of a node. */
interface CelType {
  name: string;
  kind: string;
  keyType?: CelType;
  valueType?: CelType;
}

/** A node of the library's AST. `args` is a node, a list of nodes, a name, or a literal, by `op`. */
interface CelNode {
  op: string;
  args: unknown;
  pos: number;
  end: number;
  checkedType?: CelType;
}

interface CelError {
  code?: string;
  summary?: string;
  message: string;
  node?: CelNode;
  range?: { start: number };
}

/** An issue: where (an offset into the expression) and what. */
interface Issue {
  at: number;
  message: string;
}

/** cel-go reports at most this many errors, then how many more there were. */
const MAX_REPORTED = 100;

let dynType: CelType | undefined;

/** The library's `dyn` (one object, compared by identity in its checker). */
function dyn(): CelType {
  if (!dynType) {
    const parsed = new Environment().parse('dyn(0)') as unknown as { check(): unknown; ast: CelNode };
    parsed.check();
    dynType = parsed.ast.checkedType!;
  }
  return dynType;
}

const isNode = (x: unknown): x is CelNode =>
  typeof x === 'object' && x !== null && typeof (x as CelNode).op === 'string' && 'pos' in x;

/** A node's child nodes, in source order. */
function children(node: CelNode): CelNode[] {
  const args = Array.isArray(node.args) ? node.args : [node.args];
  return args.flatMap((a) => (Array.isArray(a) ? a.filter(isNode) : isNode(a) ? [a] : []));
}

function parents(root: CelNode): Map<CelNode, CelNode> {
  const up = new Map<CelNode, CelNode>();
  const stack = [root];
  while (stack.length) {
    const node = stack.pop()!;
    for (const child of children(node)) {
      up.set(child, node);
      stack.push(child);
    }
  }
  return up;
}

/** A type as cel-go prints it: `list(int)`, `map(string, int)`, `timestamp`, `optional_type(int)`. */
function celGoType(name: string): string {
  return name
    .replaceAll('google.protobuf.Timestamp', 'timestamp')
    .replaceAll('google.protobuf.Duration', 'duration')
    .replaceAll('optional<', 'optional_type<')
    .replaceAll('<', '(')
    .replaceAll('>', ')');
}

/** The overload cel-go names for an operator of the library's AST. */
const OVERLOADS: Record<string, string> = { in: '@in', '-_': '-_', '!_': '!_', '[]': '_[_]', '[?]': '_[?_]' };
const overloadOf = (op: string) => OVERLOADS[op] ?? `_${op}_`;

/** Operators written between their operands (cel-go points at the operator, the `?`, the `[`). */
const INFIX = new Set(['==', '!=', '<', '<=', '>', '>=', '+', '-', '*', '/', '%', 'in', '&&', '||', '?:', '[]', '[?]']);

/** The first token at or after `from`, past blanks, comments and parentheses (the operator between two operands). */
function tokenAfter(src: string, from: number): number {
  let i = from;
  while (i < src.length) {
    if (/[\s()]/.test(src[i]!)) i++;
    else if (src.startsWith('//', i)) i = src.indexOf('\n', i) < 0 ? src.length : src.indexOf('\n', i);
    else break;
  }
  return i;
}

/**
 * Where cel-go puts a node: a select at its `.`, an operator, index or ternary at its token, a call at
 * its `(`, anything else at its start.
 */
function locate(src: string, node: CelNode): number {
  const kids = children(node);
  switch (node.op) {
    case '.':
    case '.?':
      return Math.max(src.lastIndexOf('.', node.pos - 1), 0);
    case 'call':
      return src.indexOf('(', node.pos);
    case 'rcall': {
      const name = src.indexOf((node.args as unknown[])[0] as string, tokenAfter(src, kids[0]!.end) + 1);
      return src.indexOf('(', name);
    }
    default:
      return INFIX.has(node.op) ? tokenAfter(src, kids[0]!.end) : node.pos;
  }
}

const noOverload = (name: string, types: string) => `found no matching overload for '${name}' applied to '${types}'`;

class IssueCollector {
  readonly issues: Issue[] = [];
  /** Nodes checked as `dyn` after an error, with the type they had before (when they had one). */
  readonly failed = new Map<CelNode, CelType | undefined>();
  /** Ternaries and macro predicates whose issue is written once the nodes it names are checked. */
  private readonly ternaries = new Set<CelNode>();
  private readonly predicates: CelNode[] = [];

  constructor(
    private readonly env: Environment,
    private readonly src: string,
    private readonly up: Map<CelNode, CelNode>,
  ) {}

  /** Whether any function (global or member) of this name is declared. */
  private declared(name: string): boolean {
    return this.env.getDefinitions().functions.some((f) => f.name === name);
  }

  private add(node: CelNode, message: string): void {
    this.issues.push({ at: locate(this.src, node), message });
  }

  /** A node's type as cel-go names it; a node whose own check failed has cel-go's error type. */
  private type(node: CelNode | undefined): string {
    if (node && this.failed.has(node)) {
      const before = this.failed.get(node);
      return before ? celGoType(before.name) : '!error!';
    }
    return celGoType(node?.checkedType?.name ?? 'dyn');
  }

  /** Puts one library error in cel-go's terms; the node it names is then checked as `dyn`. */
  note(err: CelError, node: CelNode): void {
    const parent = this.up.get(node);
    const kids = children(node);
    const types = (nodes: CelNode[]) => nodes.map((n) => this.type(n)).join(', ');
    const selects = node.op === '.' || node.op === '.?';
    switch (err.code) {
      case 'no_such_key':
      case 'cannot_index_type':
      case 'invalid_index_type':
      case 'no_such_overload':
        if (!selects) this.add(node, noOverload(overloadOf(node.op), `(${types(kids)})`));
        else if (err.code === 'no_such_key') this.add(node, `undefined field '${(node.args as unknown[])[1]}'`);
        else this.add(node, unselectable(this.type(kids[0])));
        break;
      case 'no_matching_overload': {
        const name = (node.args as unknown[])[0] as string;
        if (!this.declared(name)) this.add(node, `undeclared reference to '${name}' (in container '')`);
        else if (node.op === 'rcall')
          this.add(node, noOverload(name, `${this.type(kids[0])}.(${types(kids.slice(1))})`));
        else this.add(node, noOverload(name, `(${types(kids)})`));
        break;
      }
      case 'unknown_variable':
        this.add(node, `undeclared reference to '${node.args}' (in container '')`);
        break;
      case 'invalid_logical_operand':
        for (const operand of kids) {
          const t = operand.checkedType;
          if (t && t.name !== 'bool' && t !== dyn())
            this.add(operand, `expected type 'bool' but found '${this.type(operand)}'`);
        }
        break;
      case 'invalid_condition_type':
        this.condition(node, parent);
        break;
      case 'incompatible_ternary_branches':
        this.ternaries.add(node);
        break;
      case 'invalid_comprehension_range':
        this.add(
          node,
          `expression of type '${this.type(node)}' cannot be range of a comprehension (must be list, map, or dynamic)`,
        );
        break;
      default:
        this.issues.push({ at: err.range?.start ?? node.pos, message: err.summary ?? err.message.split('\n')[0]! });
    }
    this.failed.set(node, node.checkedType);
    node.checkedType = dyn();
  }

  /** A condition that is not a bool: a ternary's, or a macro's predicate. */
  private condition(node: CelNode, parent: CelNode | undefined): void {
    if (parent?.op === '?:' && children(parent)[0] === node) this.ternaries.add(parent);
    else this.predicates.push(node);
  }

  /** A macro's predicate that is not a bool, as cel-go's expansion of the macro reports it. */
  private predicate(node: CelNode): void {
    const macro = this.up.get(node);
    const [range, , , transform] = macro ? children(macro) : [];
    const name = macro?.op === 'rcall' ? (macro.args as unknown[])[0] : '';
    const found = this.type(node);
    let element: string | undefined;
    if (name === 'filter') {
      const t = range?.checkedType;
      element = celGoType((t?.kind === 'map' ? t.keyType : t?.valueType)?.name ?? 'dyn');
    } else if (name === 'map' && transform) {
      element = this.type(transform);
    }
    if (name === 'exists_one') this.add(macro!, noOverload('_?_:_', `(${found}, int, int)`));
    else if (element) this.add(macro!, noOverload('_?_:_', `(${found}, list(${element}), list(${element}))`));
    else this.add(node, `expected type 'bool' but found '${found}'`);
  }

  /**
   * The issues written last: the ternaries' and predicates', now that the nodes they name have types, and what
   * the library lets pass where cel-go does not: the fields of `has()` and of optional selects `x.?f` (cel-go
   * looks them up as any select's), and a map indexed with a key of another type.
   */
  finish(root: CelNode): void {
    for (const ternary of this.ternaries) {
      const kids = children(ternary);
      this.add(ternary, noOverload('_?_:_', `(${kids.map((k) => this.type(k)).join(', ')})`));
    }
    for (const node of this.predicates) this.predicate(node);
    for (const node of [root, ...this.up.keys()]) {
      if (node.op === 'call' && (node.args as unknown[])[0] === 'has') {
        // None of the argument's selects was checked: walk them from the variable up. The last one is has()'s test.
        const chain: CelNode[] = [];
        let operand = children(node)[0];
        for (; operand?.op === '.' || operand?.op === '.?'; operand = children(operand)[0]) chain.unshift(operand);
        this.fields(operand?.checkedType, chain, node);
      } else if (node.op === '.?' && !this.failed.has(node)) {
        this.fields(children(node)[0]?.checkedType, [node]);
      } else if (node.op === '[]' && !this.failed.has(node)) {
        // The library takes any key to a map; cel-go wants the map's key type.
        const [map, key] = children(node);
        const want = map?.checkedType?.kind === 'map' ? map.checkedType.keyType : undefined;
        const got = key?.checkedType;
        if (want && got && want !== dyn() && got !== dyn() && want.name !== got.name)
          this.add(node, noOverload('_[_]', `(${this.type(map)}, ${this.type(key)})`));
      }
    }
  }

  /**
   * Looks up the fields `selects` take in turn from a value of type `from`; an issue for the first missing, at
   * the select (the last one at `last`, when given).
   */
  private fields(from: CelType | undefined, selects: CelNode[], last?: CelNode): void {
    let type = from?.name;
    for (const [i, select] of selects.entries()) {
      if (!type || type === 'dyn') return;
      const field = (select.args as unknown[])[1] as string;
      const found = fieldOf(this.env, type.replace(/^optional<(.*)>$/, '$1'), field);
      if ('type' in found) {
        type = found.type;
        continue;
      }
      const at = i === selects.length - 1 && last ? last : select;
      this.add(at, found.missing ? `undefined field '${field}'` : unselectable(type));
      return;
    }
  }
}

const unselectable = (type: string) => `type '${celGoType(type)}' does not support field selection`;

/** The type of `field` of a value of type `type`, by checking a select on a variable of that type. */
function fieldOf(env: Environment, type: string, field: string): { type: string } | { missing: boolean } {
  let checked: { valid: boolean; type?: string; error?: CelError };
  try {
    checked = env.clone().registerVariable('__probe__', type).check(`__probe__.${field}`) as typeof checked;
  } catch {
    return { type: 'dyn' }; // a type the library cannot declare a variable of: nothing to say
  }
  if (checked.valid) return { type: checked.type ?? 'dyn' };
  return { missing: checked.error?.code === 'no_such_key' };
}

/** cel-go's display of one issue: position (1-based line and column, in characters), message, source line, caret. */
function display(src: string, issue: Issue): string {
  const before = src.slice(0, issue.at);
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const column = [...src.slice(lineStart, issue.at)];
  const snippet = src.slice(lineStart).split('\n')[0]!.replaceAll('\t', ' ');
  const wide = (ch: string | undefined) => ch !== undefined && ch.codePointAt(0)! > 0x7f;
  const dots = column.map((ch) => (wide(ch) ? '\uff0e' : '.')).join('');
  const caret = wide([...src.slice(issue.at)][0]) ? '\uff3e' : '^';
  return `ERROR: <input>:${line}:${column.length + 1}: ${issue.message}\n | ${snippet}\n | ${dots}${caret}`;
}

interface Parsed {
  ast: CelNode;
  check(): { valid: boolean; error?: unknown };
}

/**
 * All issues of `expression` in `env`, as cel-go displays them (undefined when it checks). The rounds are
 * bounded by the number of nodes: each settles one.
 */
export function typeCheckIssues(env: Environment, expression: string): string | undefined {
  let parsed: Parsed;
  try {
    parsed = env.parse(expression) as unknown as Parsed;
  } catch (err) {
    const e = err as CelError;
    return display(expression, { at: e.range?.start ?? 0, message: e.summary ?? e.message.split('\n')[0]! });
  }
  const up = parents(parsed.ast);
  const collector = new IssueCollector(env, expression, up);
  for (let round = 0; round <= up.size; round++) {
    const checked = parsed.check();
    if (checked.valid) break;
    const err = checked.error as CelError;
    const node = err.node;
    if (!node || collector.failed.has(node)) {
      if (!node) collector.issues.push({ at: err.range?.start ?? 0, message: err.summary ?? err.message });
      break;
    }
    collector.note(err, node);
  }
  collector.finish(parsed.ast);
  const issues = [...collector.issues].sort((a, b) => a.at - b.at);
  if (issues.length === 0) return undefined;
  const shown = issues.slice(0, MAX_REPORTED).map((i) => display(expression, i));
  if (issues.length > MAX_REPORTED) shown.push(`${issues.length - MAX_REPORTED} more errors were truncated`);
  return shown.join('\n');
}
