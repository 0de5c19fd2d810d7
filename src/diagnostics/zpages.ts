/**
 * The z-pages: `/statusz` and `/flagz` (plain text for people, structured JSON on request), `/configz` (the
 * effective merged configuration) and `/version`.
 *
 * Negotiation follows the reference's z-page helper: no `Accept` header (or exactly `*\/*`) means plain text;
 * otherwise the most preferred acceptable range decides. `text/plain` (also `text/*`, `*\/*`) gives the text
 * form. `application/json` gives the structured form only when it carries all of `v`, `g` and `as` naming the
 * page's version, group and kind; any other `application/json` answers 406, as does an `Accept` with no
 * acceptable range at all.
 */
import type { VersionInfo } from '../build-info.ts';
import type { DiagnosticsRequest, Reply, RouteRegistry } from './server.ts';
import { textReply } from './server.ts';

export const STATUSZ_GATE = 'ComponentStatusz';
export const FLAGZ_GATE = 'ComponentFlagz';
/** Both pages are beta and on by default. */
export const DEFAULT_ZPAGE_GATES: Readonly<Record<string, boolean>> = { [STATUSZ_GATE]: true, [FLAGZ_GATE]: true };

/** The version structured answers carry (`<configGroup>/v1beta1`), whatever version was asked for. */
export const ZPAGES_RESPONSE_VERSION = 'v1beta1';
/** The version a client must ask for, per page. */
export const STATUSZ_REQUEST_VERSION = 'v1beta1';
export const FLAGZ_REQUEST_VERSION = 'v1alpha1';

const WARNING =
  'Warning: This endpoint is not meant to be machine parseable, has no formatting compatibility guarantees and is for debugging purposes only.';

/** Top-level paths statusz never lists, as the reference. */
const NON_DEBUGGING = new Set(['/apis', '/api', '/openid', '/openapi', '/.well-known']);

// ---------------------------------------------------------------------------------------------
// negotiation

export interface StructuredType {
  group: string;
  version: string;
  kind: string;
}

export type Negotiated = 'text' | 'json' | 'not-acceptable';

interface MediaRange {
  type: string;
  subtype: string;
  params: Map<string, string>;
  q: number;
  index: number;
}

/** Accept header ranges, most preferred first: by q, then specific before wildcard, then as written. */
export function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  header.split(',').forEach((part, index) => {
    const [media, ...rawParams] = part.split(';').map((s) => s.trim());
    if (!media) return;
    const slash = media.indexOf('/');
    const type = (slash < 0 ? media : media.slice(0, slash)).toLowerCase();
    const subtype = (slash < 0 ? '*' : media.slice(slash + 1)).toLowerCase();
    const params = new Map<string, string>();
    let q = 1;
    for (const p of rawParams) {
      const eq = p.indexOf('=');
      if (eq <= 0) continue;
      const key = p.slice(0, eq).trim().toLowerCase();
      const value = p
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
      if (key === 'q') {
        const n = Number(value);
        q = Number.isFinite(n) ? Math.min(Math.max(n, 0), 1) : 0;
      } else params.set(key, value);
    }
    ranges.push({ type, subtype, params, q, index });
  });
  const specificity = (r: MediaRange) => (r.type === '*' ? 0 : r.subtype === '*' ? 1 : 2);
  return ranges.sort((a, b) => b.q - a.q || specificity(b) - specificity(a) || a.index - b.index);
}

/** Which form of a z-page the `Accept` header asks for. */
export function negotiate(accept: string | undefined, structured: StructuredType): Negotiated {
  const header = accept?.trim() ?? '';
  if (header === '' || header === '*/*') return 'text';
  for (const r of parseAccept(header)) {
    if (r.q <= 0) continue;
    const textual = (r.type === 'text' || r.type === '*') && (r.subtype === 'plain' || r.subtype === '*');
    if (textual) return 'text';
    if (r.type === 'application' && (r.subtype === 'json' || r.subtype === '*')) {
      const { group, version, kind } = structured;
      const p = r.params;
      return p.get('v') === version && p.get('g') === group && p.get('as') === kind ? 'json' : 'not-acceptable';
    }
  }
  return 'not-acceptable';
}

function notAcceptable(): Reply {
  return textReply(406, 'not acceptable\n');
}

// ---------------------------------------------------------------------------------------------
// statusz

export interface StatuszOptions {
  /** The component name (`naming.controllerManager`). */
  componentName: string;
  /** The group of structured answers (`naming.configGroup`). */
  configGroup: string;
  startTime: Date;
  binaryVersion: string;
  /** `<major>.<minor>`. */
  emulationVersion?: string;
  /** `<major>.<minor>`. */
  minimumCompatibilityVersion?: string;
  /** Registered paths; statusz lists their distinct first segments. */
  paths: () => string[];
  /** The runtime and its version (default `Node.js <process.version>`). */
  runtimeVersion?: string;
  now?: () => Date;
  /** More `Name: value` lines of the plain text form (the structured form has the spec's fields only). */
  extraLines?: () => string[];
}

/** Distinct top-level paths, sorted, without the API's own ones. */
export function aggregatePaths(listed: readonly string[]): string[] {
  const out = new Set<string>();
  for (const p of listed) {
    const first = p.split('/')[1];
    if (!first) continue;
    const folder = `/${first}`;
    if (!NON_DEBUGGING.has(folder)) out.add(folder);
  }
  return [...out].sort();
}

/** Go's `time.UnixDate` layout in UTC: `Wed Feb 18 22:09:26 UTC 2026`. */
export function unixDate(d: Date): string {
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const pad = (n: number) => String(n).padStart(2, '0');
  const day = String(d.getUTCDate()).padStart(2, ' ');
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  return `${days[d.getUTCDay()]} ${months[d.getUTCMonth()]} ${day} ${time} UTC ${d.getUTCFullYear()}`;
}

/** `3 hr 04 min 05 sec`. */
export function uptimeText(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${Math.floor(s / 3600)} hr ${pad(Math.floor(s / 60) % 60)} min ${pad(s % 60)} sec`;
}

const HTML_ESCAPES: Record<string, string> = { '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&#39;', '"': '&#34;' };

/** Go's `html.EscapeString`, which the reference applies to every statusz value. */
function escapeHtml(s: string): string {
  return s.replace(/[<>&'"]/g, (c) => HTML_ESCAPES[c]);
}

function rfc3339Seconds(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function statuszHandler(options: StatuszOptions): (req: Pick<DiagnosticsRequest, 'headers'>) => Reply {
  const now = options.now ?? (() => new Date());
  const structured = { group: options.configGroup, version: STATUSZ_REQUEST_VERSION, kind: 'Statusz' };
  return (req) => {
    const form = negotiate(req.headers.accept, structured);
    if (form === 'not-acceptable') return notAcceptable();
    const uptimeSeconds = Math.max(0, Math.floor((now().getTime() - options.startTime.getTime()) / 1000));
    const paths = aggregatePaths(options.paths());
    const runtime = options.runtimeVersion ?? `Node.js ${process.version}`;
    if (form === 'json') {
      const body: Record<string, unknown> = {
        kind: 'Statusz',
        apiVersion: `${options.configGroup}/${ZPAGES_RESPONSE_VERSION}`,
        metadata: { name: options.componentName },
        startTime: rfc3339Seconds(options.startTime),
        uptimeSeconds,
        // The spec's field for the toolchain; this one is Node.js, and the value says so.
        goVersion: runtime,
        binaryVersion: options.binaryVersion,
      };
      if (options.emulationVersion) body.emulationVersion = options.emulationVersion;
      if (options.minimumCompatibilityVersion) body.minimumCompatibilityVersion = options.minimumCompatibilityVersion;
      if (paths.length) body.paths = paths;
      return { status: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
    }
    const lines = [
      `Started: ${escapeHtml(unixDate(options.startTime))}`,
      `Up: ${escapeHtml(uptimeText(uptimeSeconds))}`,
      `Runtime version: ${escapeHtml(runtime)}`,
      `Binary version: ${escapeHtml(options.binaryVersion)}`,
    ];
    if (options.emulationVersion) lines.push(`Emulation version: ${escapeHtml(options.emulationVersion)}`);
    if (paths.length) lines.push(`Paths: ${escapeHtml(paths.join(' '))}`);
    for (const line of options.extraLines?.() ?? []) lines.push(escapeHtml(line));
    return textReply(200, `\n${options.componentName} statusz\n${WARNING}\n\n${lines.join('\n')}\n`);
  };
}

// ---------------------------------------------------------------------------------------------
// flagz

export interface FlagzOptions {
  componentName: string;
  configGroup: string;
  /** Command-line flags and defaults, each value as a string. */
  flags: () => Record<string, string>;
}

export function flagzHandler(options: FlagzOptions): (req: Pick<DiagnosticsRequest, 'headers'>) => Reply {
  const structured = { group: options.configGroup, version: FLAGZ_REQUEST_VERSION, kind: 'Flagz' };
  return (req) => {
    const form = negotiate(req.headers.accept, structured);
    if (form === 'not-acceptable') return notAcceptable();
    const flags = options.flags();
    const names = Object.keys(flags).sort();
    if (form === 'json') {
      const body = {
        kind: 'Flagz',
        apiVersion: `${options.configGroup}/${ZPAGES_RESPONSE_VERSION}`,
        metadata: { name: options.componentName },
        flags: Object.fromEntries(names.map((n) => [n, flags[n]])),
      };
      return { status: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
    }
    const lines = names.map((n) => `${n}=${flags[n]}\n`).join('');
    return textReply(200, `\n${options.componentName} flagz\n${WARNING}\n\n${lines}`);
  };
}

// ---------------------------------------------------------------------------------------------
// configz and version

/** `/configz`: the effective configuration, by section name (for example `<component>.<configGroup>`). */
export function configzHandler(sections: () => Record<string, unknown>): () => Reply {
  return () => ({
    status: 200,
    headers: { 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff' },
    body: JSON.stringify(sections()),
  });
}

/** `/version`, indented as the reference writes it; `info` is read at the first request (it may run git). */
export function versionHandler(info: () => VersionInfo): () => Reply {
  return () => ({
    status: 200,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(info(), null, 2),
  });
}

// ---------------------------------------------------------------------------------------------
// installation

export interface ZPagesOptions extends Omit<StatuszOptions, 'paths'>, Omit<FlagzOptions, 'flags'> {
  flags: FlagzOptions['flags'];
  /** Feature gates; `ComponentStatusz` and `ComponentFlagz` default on. A page whose gate is off is not served (404). */
  features?: (gate: string) => boolean | undefined;
  configz?: () => Record<string, unknown>;
  version?: () => VersionInfo;
}

/** Registers `/statusz` and `/flagz` (each behind its gate), `/configz` and `/version` (when given). */
export function installZPages(registry: RouteRegistry, options: ZPagesOptions): void {
  const enabled = (gate: string) => options.features?.(gate) ?? DEFAULT_ZPAGE_GATES[gate];
  if (options.configz) registry.route('/configz', configzHandler(options.configz));
  if (options.version) registry.route('/version', versionHandler(options.version));
  if (enabled(STATUSZ_GATE)) registry.route('/statusz', statuszHandler({ ...options, paths: () => registry.paths() }));
  if (enabled(FLAGZ_GATE)) registry.route('/flagz', flagzHandler(options));
}
