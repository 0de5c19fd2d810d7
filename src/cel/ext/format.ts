/**
 * The platform's format library: `format.dns1123Label().validate(s)` (and the other named formats, or
 * `format.named("dns1123Label")`) gives `optional.none()` when `s` is valid, else the list of errors.
 */
import { type Environment, Optional } from '@marcbachmann/cel-js';
import { isDNS1035Label, isDNS1123Label, isDNS1123Subdomain } from '../../api/dns-names.ts';
import { labelValueErrors, qualifiedNameErrors } from '../../api/labels.ts';

const T = 'kubernetes.NamedFormat';

/** A generated name's prefix is valid when the prefix with a trailing dash replaced is. */
const asPrefix = (check: (s: string) => string[]) => (s: string) => check(s.replace(/-$/, 'a'));

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

const only = (ok: (s: string) => boolean, message: string) => (s: string) => (ok(s) ? [] : [message]);
const validDate = (s: string) => !Number.isNaN(Date.parse(s.length === 10 ? `${s}T00:00:00Z` : s));

export const FORMATS: Record<string, (s: string) => string[]> = {
  dns1123Label: isDNS1123Label,
  dns1123Subdomain: isDNS1123Subdomain,
  dns1035Label: isDNS1035Label,
  qualifiedName: qualifiedNameErrors,
  dns1123LabelPrefix: asPrefix(isDNS1123Label),
  dns1123SubdomainPrefix: asPrefix(isDNS1123Subdomain),
  dns1035LabelPrefix: asPrefix(isDNS1035Label),
  labelValue: labelValueErrors,
  uri: only((s) => URL.canParse(s) || s.startsWith('/'), 'invalid URI'),
  uuid: only((s) => UUID.test(s), 'does not match the UUID format'),
  byte: only((s) => /^[A-Za-z0-9+/]*={0,2}$/.test(s) && s.length % 4 === 0, 'invalid base64'),
  date: only((s) => DATE.test(s) && validDate(s), 'invalid date'),
  datetime: only((s) => DATETIME.test(s) && validDate(s), 'invalid datetime'),
};

export class NamedFormat {
  constructor(
    readonly name: string,
    readonly check: (s: string) => string[],
  ) {}
}

export class FormatNamespace {}

export function registerFormat(env: Environment): void {
  env
    .registerType(T, NamedFormat)
    .registerType('FormatNamespace', FormatNamespace)
    .registerConstant('format', 'FormatNamespace', new FormatNamespace())
    .registerFunction(`FormatNamespace.named(string): optional<${T}>`, (_: unknown, name: string) =>
      Object.hasOwn(FORMATS, name) ? Optional.of(new NamedFormat(name, FORMATS[name])) : Optional.none(),
    )
    .registerFunction(`${T}.validate(string): optional<list<string>>`, (f: NamedFormat, s: string) => {
      const errs = f.check(s);
      return errs.length ? Optional.of(errs) : Optional.none();
    });
  for (const [name, check] of Object.entries(FORMATS)) {
    env.registerFunction(`FormatNamespace.${name}(): ${T}`, () => new NamedFormat(name, check));
  }
}
