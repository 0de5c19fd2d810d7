/**
 * Loads the component configuration: defaults, then the `--config` file, then the `--config-dir` drop-ins
 * (`*.conf` in lexical order of their names), then the command-line flags. Files are YAML or JSON and are decoded
 * strictly against the schema: an unknown field, a value of the wrong type, a value out of range or a `null`
 * fails with `<file>: <field path>: <problem>`, and every file must carry the configuration's apiVersion and kind.
 *
 * Merging follows spec §2.6 and is decided by the kind the schema gives the field, never by the value:
 *   scalar            the later value replaces the earlier one
 *   embedded struct   merged field by field; fields a file leaves out keep their value
 *   list              replaced whole
 *   map of scalars    merged per key
 *   map of lists      merged per key; a key's list is replaced whole
 * Flags follow the same rules: a list flag replaces the list, `--feature-gates` merges per key.
 */
import type { Dirent } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { FlavorName, Naming } from '../api/naming.ts';
import { FlagError, type Flags, parseDuration } from '../cli/flags.ts';
import {
  type AnyField,
  type AnyStruct,
  asAnyStruct,
  type ConfigSchema,
  type ControllerManagerConfiguration,
  configApiVersion,
  configKind,
  defaultConfiguration,
  type FlagTarget,
  flagTargets,
  formatGoDuration,
  type ScalarType,
} from './schema.ts';

export interface ConfigProblem {
  /** A file path, `flag --name`, or `defaults`. */
  source: string;
  /** Field path such as `generic.leaderElection.leaseDuration`; empty for the file as a whole. */
  path: string;
  problem: string;
}

export class ConfigError extends Error {
  constructor(readonly problems: ConfigProblem[]) {
    super(problems.map(formatProblem).join('\n'));
  }
}

export function formatProblem(p: ConfigProblem): string {
  return p.path ? `${p.source}: ${p.path}: ${p.problem}` : `${p.source}: ${p.problem}`;
}

/** Where each value came from: field path (map keys as `[key]`) to a file path or `flag --name`. */
export type Origins = Map<string, string>;

export const DEFAULTS_SOURCE = 'defaults';

// ---------------------------------------------------------------------------------------------
// Reading files

/** The drop-in files of a directory: regular files (or links to them) named `*.conf`, in byte order of names. */
export async function listDropIns(dir: string): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    throw new ConfigError([{ source: dir, path: '', problem: `cannot read the drop-in directory: ${message(err)}` }]);
  }
  const names: string[] = [];
  for (const e of entries) {
    if (!e.name.endsWith('.conf')) continue;
    if (e.isFile()) names.push(e.name);
    else if (e.isSymbolicLink()) {
      const target = await stat(join(dir, e.name)).catch(() => undefined);
      if (target?.isFile()) names.push(e.name);
    }
  }
  names.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return names.map((n) => join(dir, n));
}

/** One YAML or JSON document as plain data; syntax errors, duplicate keys and several documents are refused. */
export function parseConfigText(text: string, source: string): unknown {
  const docs = parseAllDocuments(text, { uniqueKeys: true, prettyErrors: true });
  if (docs.length > 1) throw new ConfigError([{ source, path: '', problem: 'holds more than one YAML document' }]);
  const doc = docs[0];
  if (!doc) return undefined;
  if (doc.errors.length) {
    throw new ConfigError(doc.errors.map((e) => ({ source, path: '', problem: `cannot parse: ${e.message}` })));
  }
  return doc.toJS({ maxAliasCount: 100 });
}

async function readConfigFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError([{ source: file, path: '', problem: `cannot read the configuration file: ${message(err)}` }]);
  }
  return parseConfigText(text, file);
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

// ---------------------------------------------------------------------------------------------
// Strict decoding

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a map';
  if (typeof v === 'string') return JSON.stringify(v);
  return `${typeof v} ${String(v)}`;
}

/** Own-property assignment that also works for keys such as `__proto__`. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The value as its scalar type, or a problem. */
function decodeScalar(type: ScalarType, v: unknown): { value?: unknown; problem?: string } {
  switch (type) {
    case 'string':
      return typeof v === 'string' ? { value: v } : { problem: `must be a string, got ${describe(v)}` };
    case 'bool':
      return typeof v === 'boolean' ? { value: v } : { problem: `must be true or false, got ${describe(v)}` };
    case 'int':
      return typeof v === 'number' && Number.isSafeInteger(v)
        ? { value: v }
        : { problem: `must be an integer, got ${describe(v)}` };
    case 'float':
      return typeof v === 'number' && Number.isFinite(v)
        ? { value: v }
        : { problem: `must be a number, got ${describe(v)}` };
    case 'duration': {
      const ms = typeof v === 'string' ? parseDuration(v) : undefined;
      return ms === undefined
        ? { problem: `must be a duration string such as "15s" or "1h30m", got ${describe(v)}` }
        : { value: ms };
    }
  }
}

function bounds(v: number, min: number | undefined, max: number | undefined): string | undefined {
  if (min !== undefined && v < min) return `must be at least ${min}, got ${v}`;
  if (max !== undefined && v > max) return `must be at most ${max}, got ${v}`;
  return undefined;
}

/** The rules of a scalar field beyond its type: allowed strings, bounds and its own check. */
function checkScalar(field: Extract<AnyField, { kind: 'scalar' }>, v: unknown): string | undefined {
  if (field.oneOf && !field.oneOf.includes(v as string))
    return `must be one of ${field.oneOf.map((o) => JSON.stringify(o)).join(', ')}, got ${describe(v)}`;
  if (typeof v === 'number') {
    const b = bounds(v, field.min, field.max);
    if (b) return b;
  }
  return field.check?.(v);
}

const NULL_PROBLEM = 'null is not allowed (leave the field out to keep the value from the defaults or earlier files)';

class Decoder {
  readonly problems: ConfigProblem[] = [];
  constructor(private readonly source: string) {}

  private fail(path: string, problem: string): undefined {
    this.problems.push({ source: this.source, path, problem });
    return undefined;
  }

  /** A partial value: only what the document holds, checked. Undefined where there were problems. */
  value(field: AnyField, raw: unknown, path: string): unknown {
    if (raw === null || raw === undefined) return this.fail(path, NULL_PROBLEM);
    switch (field.kind) {
      case 'scalar': {
        const d = decodeScalar(field.type, raw);
        const problem = d.problem ?? checkScalar(field, d.value);
        return problem ? this.fail(path, problem) : d.value;
      }
      case 'list': {
        if (!Array.isArray(raw)) return this.fail(path, `must be a list, got ${describe(raw)}`);
        const out: unknown[] = [];
        raw.forEach((item, i) => {
          const d = decodeScalar(field.item, item);
          const problem = d.problem ?? field.checkItem?.(d.value);
          if (problem) this.fail(`${path}[${i}]`, problem);
          else out.push(d.value);
        });
        return out;
      }
      case 'map': {
        if (!isPlainObject(raw)) return this.fail(path, `must be a map, got ${describe(raw)}`);
        const out: Record<string, unknown> = {};
        for (const [key, item] of Object.entries(raw)) {
          const p = `${path}[${key}]`;
          if (item === null) {
            this.fail(p, NULL_PROBLEM);
            continue;
          }
          const d = decodeScalar(field.value, item);
          const problem =
            d.problem ?? (typeof d.value === 'number' ? bounds(d.value, field.min, undefined) : undefined);
          const entry = problem ?? field.checkEntry?.(key, d.value);
          if (entry) this.fail(p, entry);
          else setOwn(out, key, d.value);
        }
        return out;
      }
      case 'mapList': {
        if (!isPlainObject(raw)) return this.fail(path, `must be a map of lists, got ${describe(raw)}`);
        const out: Record<string, unknown> = {};
        const spelled = new Map<string, string>();
        for (const [given, list] of Object.entries(raw)) {
          const p = `${path}[${given}]`;
          const keyProblem = field.checkKey?.(given);
          if (keyProblem) {
            this.fail(p, keyProblem);
            continue;
          }
          const key = field.normalizeKey ? field.normalizeKey(given) : given;
          const before = spelled.get(key);
          if (before !== undefined) {
            this.fail(p, `duplicate of key "${before}"`);
            continue;
          }
          spelled.set(key, given);
          if (!Array.isArray(list)) {
            this.fail(p, `must be a list, got ${describe(list)}`);
            continue;
          }
          const items: unknown[] = [];
          list.forEach((item, i) => {
            const d = decodeScalar(field.item, item);
            const problem = d.problem ?? field.checkItem?.(d.value);
            if (problem) this.fail(`${p}[${i}]`, problem);
            else items.push(d.value);
          });
          setOwn(out, key, items);
        }
        return out;
      }
      case 'struct':
        return this.struct(field, raw, path);
    }
  }

  struct(
    field: AnyStruct,
    raw: unknown,
    path: string,
    skip: readonly string[] = [],
  ): Record<string, unknown> | undefined {
    if (!isPlainObject(raw)) return this.fail(path, `must be a map of fields, got ${describe(raw)}`);
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(raw)) {
      if (skip.includes(key)) continue;
      const p = path ? `${path}.${key}` : key;
      const child = Object.hasOwn(field.fields, key) ? field.fields[key] : undefined;
      if (!child) {
        const near = Object.keys(field.fields).find((k) => k.toLowerCase() === key.toLowerCase());
        this.fail(p, near ? `unknown field (did you mean "${near}"?)` : 'unknown field');
        continue;
      }
      const d = this.value(child, v, p);
      if (d !== undefined) setOwn(out, key, d);
    }
    return out;
  }
}

interface DecodedFile {
  source: string;
  flavor: FlavorName;
  partial: Record<string, unknown>;
}

/** Checks apiVersion and kind against the accepted flavors and decodes the rest strictly. */
export function decodeConfigurationObject(
  schema: ConfigSchema,
  raw: unknown,
  source: string,
  accept: readonly Naming[],
): DecodedFile {
  if (!isPlainObject(raw)) {
    throw new ConfigError([
      {
        source,
        path: '',
        problem: `must be a YAML or JSON map with apiVersion and kind, got ${describe(raw ?? null)}`,
      },
    ]);
  }
  const problems: ConfigProblem[] = [];
  const versions = accept.map(configApiVersion);
  const one = (xs: string[]) => (xs.length === 1 ? `"${xs[0]}"` : `one of ${xs.map((x) => `"${x}"`).join(', ')}`);
  let flavor: Naming | undefined;
  if (raw.apiVersion === undefined) problems.push({ source, path: 'apiVersion', problem: 'required' });
  else {
    flavor = accept.find((n) => configApiVersion(n) === raw.apiVersion);
    if (!flavor)
      problems.push({
        source,
        path: 'apiVersion',
        problem: `must be ${one(versions)}, got ${describe(raw.apiVersion)}`,
      });
  }
  if (raw.kind === undefined) problems.push({ source, path: 'kind', problem: 'required' });
  else {
    const kinds = flavor ? [configKind(flavor)] : [...new Set(accept.map(configKind))];
    if (!kinds.includes(raw.kind as string))
      problems.push({ source, path: 'kind', problem: `must be ${one(kinds)}, got ${describe(raw.kind)}` });
  }
  const decoder = new Decoder(source);
  const partial = decoder.struct(asAnyStruct(schema), raw, '', ['apiVersion', 'kind']) ?? {};
  problems.push(...decoder.problems);
  if (problems.length) throw new ConfigError(problems);
  return { source, flavor: flavor!.flavor, partial };
}

// ---------------------------------------------------------------------------------------------
// Merging (§2.6)

/** Merges a decoded partial structure into `target`, by the kinds of the schema's fields. */
export function mergeStruct(
  field: AnyStruct,
  target: Record<string, unknown>,
  partial: Record<string, unknown>,
  source: string,
  origins: Origins,
  path = '',
): void {
  for (const key of Object.keys(partial)) {
    const child = field.fields[key];
    const value = partial[key];
    const p = path ? `${path}.${key}` : key;
    switch (child.kind) {
      case 'scalar':
        target[key] = value;
        origins.set(p, source);
        break;
      case 'list':
        target[key] = [...(value as unknown[])];
        origins.set(p, source);
        break;
      case 'map':
      case 'mapList': {
        const merged: Record<string, unknown> = { ...(target[key] as Record<string, unknown>) };
        for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
          setOwn(merged, k, Array.isArray(v) ? [...v] : v);
          origins.set(`${p}[${k}]`, source);
        }
        target[key] = merged;
        break;
      }
      case 'struct':
        mergeStruct(
          child,
          target[key] as Record<string, unknown>,
          value as Record<string, unknown>,
          source,
          origins,
          p,
        );
        break;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Flags

function flagProblem(name: string, value: string, problem: string): FlagError {
  return new FlagError(`invalid argument "${value}" for "--${name}" flag: ${problem}`);
}

/** A flag's text as the scalar type, checked as a file value would be. */
function flagScalar(target: FlagTarget, type: ScalarType, text: string, check: (v: unknown) => string | undefined) {
  let value: unknown;
  switch (type) {
    case 'string':
      value = text;
      break;
    case 'bool':
      value = text === 'true' || text === '1';
      break;
    case 'int':
    case 'float':
      value = text.trim() === '' ? Number.NaN : Number(text);
      if (!Number.isFinite(value as number) || (type === 'int' && !Number.isSafeInteger(value)))
        throw flagProblem(target.spec.name, text, type === 'int' ? 'must be an integer' : 'must be a number');
      break;
    case 'duration':
      value = parseDuration(text);
      if (value === undefined) throw flagProblem(target.spec.name, text, 'must be a duration such as 15s or 1h30m');
      break;
  }
  const problem = check(value);
  if (problem) throw flagProblem(target.spec.name, text, problem);
  return value;
}

function parentOf(config: Record<string, unknown>, segments: readonly string[]): Record<string, unknown> {
  let node = config;
  for (const s of segments.slice(0, -1)) node = node[s] as Record<string, unknown>;
  return node;
}

/** Applies the flags given on the command line (not their defaults) over `config`. */
export function applyFlags(
  schema: ConfigSchema,
  config: ControllerManagerConfiguration,
  flags: Flags,
  origins: Origins,
) {
  const root = config as unknown as Record<string, unknown>;
  for (const target of flagTargets(schema)) {
    const name = target.spec.name;
    if (!flags.has(name)) continue;
    if (target.aliasOf && flags.has(target.aliasOf)) continue;
    const given = flags.all(name);
    const source = `flag --${name}`;
    const field = target.field;
    const parent = parentOf(root, target.segments);
    const last = target.segments[target.segments.length - 1];
    switch (field.kind) {
      case 'scalar': {
        const text = given[given.length - 1];
        if (field.flag?.durationSeconds) {
          const ms = parseDuration(text);
          if (ms === undefined || ms % 1000 !== 0)
            throw flagProblem(name, text, 'must be a duration of whole seconds such as 90s or 24h');
          const problem = checkScalar(field, ms / 1000);
          if (problem) throw flagProblem(name, text, problem);
          parent[last] = ms / 1000;
        } else parent[last] = flagScalar(target, field.type, text, (v) => checkScalar(field, v));
        origins.set(target.path, source);
        break;
      }
      case 'list': {
        const split = field.flag?.splitCommas ?? true;
        const items = split
          ? given
              .flatMap((g) => g.split(','))
              .map((s) => s.trim())
              .filter(Boolean)
          : [...given];
        for (const item of items) {
          const problem = decodeScalar(field.item, item).problem ?? field.checkItem?.(item);
          if (problem) throw flagProblem(name, item, problem);
        }
        parent[last] = items;
        origins.set(target.path, source);
        break;
      }
      case 'map': {
        if (target.key === undefined) {
          const entries = flags.mapStringBool(name);
          const merged: Record<string, unknown> = { ...(parent[last] as Record<string, unknown>) };
          for (const [k, v] of Object.entries(entries)) {
            const problem = field.checkEntry?.(k, v);
            if (problem) throw flagProblem(name, `${k}=${v}`, problem);
            setOwn(merged, k, v);
            origins.set(`${target.path}[${k}]`, source);
          }
          parent[last] = merged;
        } else {
          const map = parent as Record<string, unknown>;
          const value = flagScalar(target, field.value, given[given.length - 1], (v) => {
            const b = typeof v === 'number' ? bounds(v, field.min, undefined) : undefined;
            return b ?? field.checkEntry?.(target.key!, v);
          });
          setOwn(map, target.key, value);
          origins.set(target.path, source);
        }
        break;
      }
      default:
        throw new Error(`configuration schema: flag --${name} is bound to a ${field.kind} field`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Rules across fields

/** Rules that involve more than one field, checked on the merged configuration; each names who set the field. */
export function validateConfiguration(config: ControllerManagerConfiguration, origins: Origins): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const from = (path: string) => origins.get(path) ?? DEFAULTS_SOURCE;
  const add = (path: string, problem: string) => problems.push({ source: from(path), path, problem });

  const le = config.generic.leaderElection;
  const lp = 'generic.leaderElection';
  if (le.leaderElect) {
    if (le.leaseDuration <= le.renewDeadline)
      add(
        `${lp}.leaseDuration`,
        `must be greater than renewDeadline (${formatGoDuration(le.leaseDuration)} <= ${formatGoDuration(le.renewDeadline)} from ${from(`${lp}.renewDeadline`)})`,
      );
    if (le.renewDeadline <= le.retryPeriod * 1.2)
      add(
        `${lp}.renewDeadline`,
        `must be greater than retryPeriod*JitterFactor (${formatGoDuration(le.renewDeadline)} <= 1.2*${formatGoDuration(le.retryPeriod)} from ${from(`${lp}.retryPeriod`)})`,
      );
  }

  const pair = (path: string, cert: string, key: string) => {
    if (key && !cert) add(`${path}.keyFile`, 'cannot specify key without cert');
    if (cert && !key) add(`${path}.certFile`, 'cannot specify cert without key');
  };
  const s = config.csrSigningController;
  const signers = [
    'nodeAgentServingSignerConfiguration',
    'nodeAgentClientSignerConfiguration',
    'apiServerClientSignerConfiguration',
    'legacyUnknownSignerConfiguration',
  ] as const;
  for (const name of signers) pair(`csrSigningController.${name}`, s[name].certFile, s[name].keyFile);
  const single = s.clusterSigningCertFile
    ? 'clusterSigningCertFile'
    : s.clusterSigningKeyFile
      ? 'clusterSigningKeyFile'
      : '';
  if (single) {
    for (const name of signers) {
      for (const part of ['certFile', 'keyFile'] as const) {
        if (!s[name][part]) continue;
        const other = `csrSigningController.${name}.${part}`;
        add(
          `csrSigningController.${single}`,
          `cannot be set together with per-signer files such as ${other} (from ${from(other)}): use one pair for all signers or one pair per signer`,
        );
      }
    }
  }

  if (config.serving.keyFile && !config.serving.certFile) add('serving.keyFile', 'cannot specify key without cert');
  if (config.serving.certFile && !config.serving.keyFile) add('serving.certFile', 'cannot specify cert without key');
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Loading

export interface LoadOptions {
  schema: ConfigSchema;
  /** Flavors whose apiVersion and kind the files may carry (both while `--api-flavor=auto`). */
  accept: readonly Naming[];
  /** `--config`. */
  configFile?: string;
  /** `--config-dir`. */
  configDir?: string;
  /** The parsed command line, applied last; only flags actually given count. */
  flags?: Flags;
}

export interface LoadedConfiguration {
  config: ControllerManagerConfiguration;
  /** Files applied, in order. */
  files: string[];
  /** The flavor the files' apiVersion and kind belong to; undefined without files. */
  flavor?: FlavorName;
  /** Where each value that is not a default came from. */
  origins: Origins;
}

export async function loadConfiguration(options: LoadOptions): Promise<LoadedConfiguration> {
  if (options.accept.length === 0) throw new Error('loadConfiguration: no flavor accepted');
  const { schema } = options;
  const config = defaultConfiguration(schema);
  const origins: Origins = new Map();
  const files: string[] = [];
  if (options.configFile) files.push(options.configFile);
  if (options.configDir) files.push(...(await listDropIns(options.configDir)));

  let flavor: { name: FlavorName; from: string } | undefined;
  for (const file of files) {
    const decoded = decodeConfigurationObject(schema, await readConfigFile(file), file, options.accept);
    if (flavor && flavor.name !== decoded.flavor) {
      throw new ConfigError([
        {
          source: file,
          path: 'apiVersion',
          problem: `names the ${decoded.flavor} flavor, but ${flavor.from} names the ${flavor.name} flavor`,
        },
      ]);
    }
    flavor ??= { name: decoded.flavor, from: file };
    mergeStruct(asAnyStruct(schema), config as unknown as Record<string, unknown>, decoded.partial, file, origins);
  }
  if (options.flags) applyFlags(schema, config, options.flags, origins);
  const problems = validateConfiguration(config, origins);
  if (problems.length) throw new ConfigError(problems);
  return { config, files, flavor: flavor?.name, origins };
}

// ---------------------------------------------------------------------------------------------
// Encoding (for /configz and for writing a file back)

function encodeValue(field: AnyField, value: unknown): unknown {
  switch (field.kind) {
    case 'scalar':
      return field.type === 'duration' ? formatGoDuration(value as number) : value;
    case 'list':
      return [...(value as unknown[])];
    case 'map':
      return { ...(value as Record<string, unknown>) };
    case 'mapList':
      return Object.fromEntries(Object.entries(value as Record<string, unknown[]>).map(([k, v]) => [k, [...v]]));
    case 'struct':
      return Object.fromEntries(
        Object.entries(field.fields).map(([k, f]) => [k, encodeValue(f, (value as Record<string, unknown>)[k])]),
      );
  }
}

/** The configuration as a file would spell it: apiVersion and kind first, durations as Go duration strings. */
export function encodeConfiguration(
  schema: ConfigSchema,
  config: ControllerManagerConfiguration,
  n: Naming,
): Record<string, unknown> {
  return {
    apiVersion: configApiVersion(n),
    kind: configKind(n),
    ...(encodeValue(asAnyStruct(schema), config) as Record<string, unknown>),
  };
}
