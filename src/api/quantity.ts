/**
 * Resource quantities (`500m`, `1.5Gi`, `12e6`) with the reference's parsing, rounding and formatting.
 *
 * A value is kept exactly in nano-units (the finest precision the reference keeps: finer non-zero values
 * round away from zero to 1n). `toString` gives what the reference serializes: the input text when the
 * reference keeps it verbatim, otherwise the canonical form (`1.5` → `1500m`, `1.5Gi` → `1536Mi`).
 */

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

export const ERR_FORMAT_WRONG =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
export const ERR_NUMERIC = 'unable to parse numeric part of quantity';
export const ERR_SUFFIX = "unable to parse quantity's suffix";

export class QuantityError extends Error {}

const NANO = 1_000_000_000n;
const INT64_MAX = 2n ** 63n - 1n;
/** The largest value whose milli-value fits an int64 (int64 max / 1000). */
export const MAX_MILLI_VALUE = INT64_MAX / 1000n;
/** Bound on decimal exponents, so that `1e999999999` cannot exhaust memory. */
const MAX_EXPONENT = 1000;

export class Quantity {
  /** The exact value in units of 10^-9. */
  readonly nanos: bigint;
  readonly format: QuantityFormat;
  /** The input text, when the reference serializes the value as written. */
  private readonly verbatim: string | undefined;

  constructor(nanos: bigint, format: QuantityFormat, verbatim?: string) {
    this.nanos = nanos;
    this.format = format;
    this.verbatim = verbatim;
  }

  /** What the reference prints and serializes. */
  toString(): string {
    return this.verbatim ?? this.canonical();
  }

  toJSON(): string {
    return this.toString();
  }

  /** The canonical form: largest suffix without losing precision and without a fraction. */
  canonical(): string {
    return formatCanonical(this.nanos, this.format);
  }

  /** The value in milli-units, rounded away from zero. */
  milliValue(): bigint {
    return divAwayFromZero(this.nanos, 1_000_000n);
  }

  /** The value in whole units, rounded away from zero. */
  value(): bigint {
    return divAwayFromZero(this.nanos, NANO);
  }

  cmp(other: Quantity): -1 | 0 | 1 {
    return this.nanos < other.nanos ? -1 : this.nanos > other.nanos ? 1 : 0;
  }

  isZero(): boolean {
    return this.nanos === 0n;
  }
}

function divAwayFromZero(n: bigint, d: bigint): bigint {
  const q = n / d;
  return n % d === 0n ? q : n < 0n ? q - 1n : q + 1n;
}

const DECIMAL_SUFFIXES: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_BY_EXPONENT = new Map(Object.entries(DECIMAL_SUFFIXES).map(([s, e]) => [e, s]));
const BINARY_BY_POWER = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

interface Scanned {
  positive: boolean;
  /** Sign, digits and fraction as written (what the slow path parses). */
  value: string;
  num: string;
  denom: string;
  suffix: string;
}

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

/** The reference's fast scanner: sign, number (leading zeros stripped), fraction, suffix. */
function scan(str: string): Scanned {
  let positive = true;
  let pos = 0;
  const end = str.length;
  if (str[0] === '-') {
    positive = false;
    pos++;
  } else if (str[0] === '+') {
    pos++;
  }
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return { positive, value: '0', num: '0', denom: '', suffix: '' };

  let i = pos;
  while (i < end && isDigit(str[i])) i++;
  let num = str.slice(pos, i);
  if (i >= end) return { positive, value: str, num, denom: '', suffix: '' };
  pos = i;
  if (num === '') num = '0';

  let denom = '';
  if (str[pos] === '.') {
    pos++;
    i = pos;
    while (i < end && isDigit(str[i])) i++;
    denom = str.slice(pos, i);
    if (i >= end) return { positive, value: str, num, denom, suffix: '' };
    pos = i;
  }
  const value = str.slice(0, pos);

  const suffixStart = pos;
  i = pos;
  while (i < end && 'eEinumkKMGTP'.includes(str[i])) i++;
  if (i >= end) return { positive, value, num, denom, suffix: str.slice(suffixStart) };
  pos = i;
  if (str[pos] === '-' || str[pos] === '+') pos++;
  for (i = pos; i < end; i++) if (!isDigit(str[i])) throw new QuantityError(ERR_FORMAT_WRONG);
  return { positive, value, num, denom, suffix: str.slice(suffixStart) };
}

interface Suffix {
  base: 10 | 2;
  exponent: number;
  format: QuantityFormat;
}

function interpret(suffix: string): Suffix | undefined {
  if (Object.hasOwn(DECIMAL_SUFFIXES, suffix))
    return { base: 10, exponent: DECIMAL_SUFFIXES[suffix], format: 'DecimalSI' };
  if (Object.hasOwn(BINARY_SUFFIXES, suffix)) return { base: 2, exponent: BINARY_SUFFIXES[suffix], format: 'BinarySI' };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E')) {
    const digits = suffix.slice(1);
    if (!/^[+-]?\d+$/.test(digits)) return undefined;
    const exponent = Number(digits);
    if (!Number.isSafeInteger(exponent)) return undefined;
    return { base: 10, exponent, format: 'DecimalExponent' };
  }
  return undefined;
}

/** Parses a quantity string; throws a `QuantityError` with the reference's message. */
export function parseQuantity(str: string): Quantity {
  if (str.length === 0) throw new QuantityError(ERR_FORMAT_WRONG);
  if (str === '0') return new Quantity(0n, 'DecimalSI', '0');
  const s = scan(str);
  const suffix = interpret(s.suffix);
  if (!suffix) throw new QuantityError(ERR_SUFFIX);
  const { base, exponent } = suffix;
  let { format } = suffix;
  if (base === 10 && exponent > MAX_EXPONENT) throw new QuantityError(ERR_NUMERIC);

  // The reference's int64 fast path: it decides whether the input text is kept verbatim.
  let precision: number;
  let scale = 0;
  let mantissa = 1n;
  if (base === 10) {
    scale = exponent;
    precision = 18 - (s.num.length + s.denom.length);
  } else if (s.denom.length === 0) {
    mantissa = 1n << BigInt(exponent);
    precision = 15 - s.num.length - (exponent * 3) / 10 - 1;
  } else {
    precision = -1;
  }
  if (precision >= 0) {
    scale -= s.denom.length;
    if (scale >= -9) {
      const shifted = s.num + s.denom;
      const value = BigInt(shifted);
      let result = value * mantissa;
      if (result <= INT64_MAX) {
        if (!s.positive) result = -result;
        const nanos = result * 10n ** BigInt(scale + 9);
        let keep = false;
        if (base === 2) keep = exponent % 10 === 0 && (value & 7n) !== 0n;
        else keep = scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
        return new Quantity(nanos, format, keep ? str : undefined);
      }
    }
  }

  // The slow path: an exact decimal, rounded away from zero to nano precision.
  const m = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(s.value);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) throw new QuantityError(ERR_NUMERIC);
  const negative = m[1] === '-';
  const frac = m[3] ?? '';
  let unscaled = BigInt((m[2] || '0') + frac);
  let decScale = frac.length; // value = unscaled * 10^-decScale
  if (base === 10) {
    decScale -= exponent;
  } else {
    unscaled <<= BigInt(exponent);
  }
  let nanos: bigint;
  if (decScale <= 9) {
    nanos = unscaled * 10n ** BigInt(9 - decScale);
  } else if (decScale - 9 > unscaled.toString().length) {
    nanos = unscaled === 0n ? 0n : 1n;
  } else {
    const d = 10n ** BigInt(decScale - 9);
    nanos = unscaled / d + (unscaled % d === 0n ? 0n : 1n);
  }
  if (format === 'BinarySI' && nanos > INT64_MAX * NANO) nanos = INT64_MAX * NANO;
  if (format === 'BinarySI' && nanos > 0n && nanos < NANO) format = 'DecimalSI';
  return new Quantity(negative ? -nanos : nanos, format);
}

/** Parses a JSON member the way the reference decodes it: a string (trimmed) or a bare number. */
export function parseQuantityValue(v: unknown): { ok: true; quantity: Quantity } | { ok: false; error: string } {
  let text: string;
  if (typeof v === 'string') text = v.trim();
  else if (typeof v === 'number' && Number.isFinite(v)) text = String(v);
  else return { ok: false, error: 'must be a quantity (a string such as "500m" or a number)' };
  try {
    return { ok: true, quantity: parseQuantity(text) };
  } catch (e) {
    return { ok: false, error: e instanceof QuantityError ? e.message : ERR_NUMERIC };
  }
}

/** Parses or answers `undefined`. */
export function tryQuantity(v: unknown): Quantity | undefined {
  const r = parseQuantityValue(v);
  return r.ok ? r.quantity : undefined;
}

function formatCanonical(nanos: bigint, requested: QuantityFormat): string {
  if (nanos === 0n) return '0';
  let format = requested;
  if (format === 'BinarySI') {
    const abs = nanos < 0n ? -nanos : nanos;
    if (abs < 1024n * NANO || nanos % NANO !== 0n) format = 'DecimalSI';
  }
  if (format === 'BinarySI') {
    let value = nanos / NANO;
    let power = 0;
    const negative = value < 0n;
    if (negative) value = -value;
    while (value >= 1024n && value % 1024n === 0n) {
      value /= 1024n;
      power++;
    }
    return `${negative ? -value : value}${BINARY_BY_POWER[power] ?? ''}`;
  }
  let mantissa = nanos < 0n ? -nanos : nanos;
  let exponent = -9;
  while (mantissa >= 10n && mantissa % 10n === 0n) {
    mantissa /= 10n;
    exponent++;
  }
  while (exponent % 3 !== 0) {
    mantissa *= 10n;
    exponent--;
  }
  const number = `${nanos < 0n ? '-' : ''}${mantissa}`;
  if (format === 'DecimalSI') {
    const suffix = DECIMAL_BY_EXPONENT.get(exponent);
    if (suffix !== undefined) return number + suffix;
  }
  return exponent === 0 ? number : `${number}e${exponent}`;
}
