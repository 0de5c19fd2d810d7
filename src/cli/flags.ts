/**
 * Command-line flags in the reference's style: `--name value`, `--name=value`, booleans as
 * `--name`, `--name=false`, grouped into sections for `--help`.
 */

export type FlagType = 'string' | 'int' | 'bool' | 'duration' | 'stringArray' | 'mapStringBool';

export interface FlagSpec {
  name: string;
  type: FlagType;
  usage: string;
  section: string;
  default?: string;
}

export type FlagValues = Map<string, string[]>;

export class FlagError extends Error {}

/** Parses argv against the specs; unknown flags and malformed values throw FlagError naming the flag. */
export function parseFlags(specs: FlagSpec[], argv: string[]): FlagValues {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const values: FlagValues = new Map();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('-')) throw new FlagError(`unexpected argument "${arg}"`);
    const body = arg.replace(/^--?/, '');
    const eq = body.indexOf('=');
    const name = eq < 0 ? body : body.slice(0, eq);
    const spec = byName.get(name);
    if (!spec) throw new FlagError(`unknown flag: --${name}`);
    let value: string;
    if (eq >= 0) value = body.slice(eq + 1);
    else if (spec.type === 'bool') value = 'true';
    else {
      if (i + 1 >= argv.length) throw new FlagError(`flag needs an argument: --${name}`);
      value = argv[++i];
    }
    checkValue(spec, value);
    const list = values.get(name) ?? [];
    list.push(value);
    values.set(name, list);
  }
  return values;
}

function checkValue(spec: FlagSpec, value: string): void {
  const bad = (why: string) => new FlagError(`invalid argument "${value}" for "--${spec.name}" flag: ${why}`);
  if (spec.type === 'bool' && !['true', 'false', '1', '0'].includes(value)) throw bad('must be true or false');
  if (spec.type === 'int' && !/^-?\d+$/.test(value)) throw bad('must be an integer');
  if (spec.type === 'duration' && parseDuration(value) === undefined)
    throw bad('must be a duration such as 15s or 1h30m');
}

/** Go-style durations (`300ms`, `15s`, `1h30m`) to milliseconds. */
export function parseDuration(text: string): number | undefined {
  if (text === '0') return 0;
  const units: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  // µs as its escape: a pattern is the one place the bundle would keep the character itself (see bin/launch.js).
  const re = /(\d+(?:\.\d+)?)(ns|us|\u00b5s|ms|s|m|h)/gy;
  let total = 0;
  let consumed = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    total += Number(m[1]) * units[m[2]];
    consumed = re.lastIndex;
  }
  return consumed === text.length && consumed > 0 ? total : undefined;
}

/** Readers for typed values, falling back to the spec's default. */
export class Flags {
  constructor(
    private readonly specs: FlagSpec[],
    readonly values: FlagValues,
  ) {}

  private raw(name: string): string | undefined {
    const v = this.values.get(name);
    if (v) return v[v.length - 1];
    return this.specs.find((s) => s.name === name)?.default;
  }

  has(name: string): boolean {
    return this.values.has(name);
  }

  string(name: string): string | undefined {
    return this.raw(name);
  }

  int(name: string): number | undefined {
    const v = this.raw(name);
    return v === undefined ? undefined : Number(v);
  }

  bool(name: string): boolean {
    const v = this.raw(name);
    return v === 'true' || v === '1';
  }

  durationMs(name: string): number | undefined {
    const v = this.raw(name);
    return v === undefined ? undefined : parseDuration(v);
  }

  all(name: string): string[] {
    return this.values.get(name) ?? [];
  }

  /** `--feature-gates=A=true,B=false` (repeatable) as a map; malformed entries throw. */
  mapStringBool(name: string): Record<string, boolean> {
    const out: Record<string, boolean> = {};
    for (const entry of this.all(name).flatMap((v) => v.split(','))) {
      if (!entry.trim()) continue;
      const [k, v] = entry.split('=');
      if (!k || !['true', 'false'].includes(v?.trim())) {
        throw new FlagError(`invalid argument "${entry}" for "--${name}" flag: expected Name=true|false`);
      }
      out[k.trim()] = v.trim() === 'true';
    }
    return out;
  }
}

/** `--help` text: flags grouped by section, in the reference's layout. */
export function usage(command: string, summary: string, specs: FlagSpec[]): string {
  const sections = new Map<string, FlagSpec[]>();
  for (const s of specs) sections.set(s.section, [...(sections.get(s.section) ?? []), s]);
  const lines = [summary, '', 'Usage:', `  ${command} [flags]`, ''];
  for (const [section, flags] of sections) {
    lines.push(`${section} flags:`, '');
    for (const f of flags) {
      const type = f.type === 'bool' ? '' : ` ${f.type}`;
      const def =
        f.default !== undefined && f.default !== '' && f.type !== 'bool'
          ? ` (default ${JSON.stringify(f.default)})`
          : '';
      lines.push(`      --${f.name}${type}`, `                ${f.usage}${def}`);
    }
    lines.push('');
  }
  return lines.join('\n');
}
