/** The platform's semver library: `semver("1.2.3")`, `isSemver`, the parts and comparison (strict SemVer 2.0). */
import { type Environment, EvaluationError } from '@marcbachmann/cel-js';
import { SemVer } from 'semver';

const T = 'kubernetes.Semver';

/** With `normalize`, a `v` prefix and missing minor or patch versions are accepted, as the reference does. */
function parse(s: string, normalize: boolean): SemVer | undefined {
  let text = s;
  if (normalize) {
    text = text.replace(/^v/, '');
    const [core, ...rest] = text.split(/(?=[-+])/);
    const parts = core.split('.');
    while (parts.length < 3) parts.push('0');
    text = [parts.map((p) => p.replace(/^0+(?=\d)/, '')).join('.'), ...rest].join('');
  }
  try {
    return new SemVer(text, { loose: false });
  } catch {
    return undefined;
  }
}

function semver(s: string, normalize = false): SemVer {
  const v = parse(s, normalize);
  if (!v) throw new EvaluationError(`could not parse ${s} as semver`);
  return v;
}

export function registerSemver(env: Environment): void {
  env
    .registerType(T, SemVer)
    .registerFunction(`semver(string): ${T}`, (s: string) => semver(s))
    .registerFunction(`semver(string, bool): ${T}`, semver)
    .registerFunction('isSemver(string): bool', (s: string) => parse(s, false) !== undefined)
    .registerFunction('isSemver(string, bool): bool', (s: string, n: boolean) => parse(s, n) !== undefined)
    .registerFunction(`${T}.major(): int`, (v: SemVer) => BigInt(v.major))
    .registerFunction(`${T}.minor(): int`, (v: SemVer) => BigInt(v.minor))
    .registerFunction(`${T}.patch(): int`, (v: SemVer) => BigInt(v.patch))
    .registerFunction(`${T}.isLessThan(${T}): bool`, (a: SemVer, b: SemVer) => a.compare(b) < 0)
    .registerFunction(`${T}.isGreaterThan(${T}): bool`, (a: SemVer, b: SemVer) => a.compare(b) > 0)
    .registerFunction(`${T}.compareTo(${T}): int`, (a: SemVer, b: SemVer) => BigInt(a.compare(b)))
    .registerOperator(`${T} == ${T}`, (a: SemVer, b: SemVer) => a.compare(b) === 0)
    .registerFunction(`string(${T}): string`, (v: SemVer) => v.version);
}
