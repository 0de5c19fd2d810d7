/** The platform's URL library: `url("https://...")`, `isURL` and the getters, with Go's rules. */
import { type Environment, EvaluationError } from '@marcbachmann/cel-js';

const T = 'kubernetes.URL';

/** An absolute URI or an absolute path, as Go's `url.ParseRequestURI` accepts them. */
export class CelURL {
  constructor(readonly url: URL) {}
}

function parse(s: string): CelURL | undefined {
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s) && !s.startsWith('/')) return undefined;
  try {
    return new CelURL(new URL(s, s.startsWith('/') ? 'relative:/' : undefined));
  } catch {
    return undefined;
  }
}

function url(s: string): CelURL {
  const u = parse(s);
  if (!u)
    throw new EvaluationError(`URL parse error during conversion from string: parse "${s}": invalid URI for request`);
  return u;
}

const relative = (u: CelURL) => u.url.protocol === 'relative:';
const hostname = (u: CelURL) => (relative(u) ? '' : u.url.hostname.replace(/^\[(.*)\]$/, '$1'));

function query(u: CelURL): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [k, v] of u.url.searchParams) out.set(k, [...(out.get(k) ?? []), v]);
  return out;
}

export function registerURL(env: Environment): void {
  env
    .registerType(T, CelURL)
    .registerFunction(`url(string): ${T}`, url)
    .registerFunction('isURL(string): bool', (s: string) => parse(s) !== undefined)
    .registerFunction(`${T}.getScheme(): string`, (u: CelURL) => (relative(u) ? '' : u.url.protocol.slice(0, -1)))
    .registerFunction(`${T}.getHost(): string`, (u: CelURL) => (relative(u) ? '' : u.url.host))
    .registerFunction(`${T}.getHostname(): string`, hostname)
    .registerFunction(`${T}.getPort(): string`, (u: CelURL) => (relative(u) ? '' : u.url.port))
    .registerFunction(`${T}.getEscapedPath(): string`, (u: CelURL) => u.url.pathname)
    .registerFunction(`${T}.getQuery(): map<string, list<string>>`, query)
    .registerFunction(`string(${T}): string`, (u: CelURL) =>
      relative(u) ? u.url.pathname + u.url.search + u.url.hash : u.url.href,
    );
}
