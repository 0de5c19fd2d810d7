/**
 * The proxy the environment names for a server, as Go's net/http picks it (`http.ProxyFromEnvironment`, which
 * client-go uses when a kubeconfig's cluster has no `proxy-url`): `HTTPS_PROXY` for an https server and `HTTP_PROXY`
 * for an http one (upper case first, then lower), none for `localhost` or a loopback address, none for a server
 * `NO_PROXY` names. A `NO_PROXY` entry is `*` (no proxy at all), an IP address or a CIDR block, or a domain, each
 * with an optional port: `example.com` matches it and its subdomains, `.example.com` and `*.example.com` only its
 * subdomains; a domain never matches an IP address. A proxy without a scheme is an http one. Unlike Go, which
 * dials whatever its parser made of it, a value that is no URL is an error naming the variable.
 */
import { BlockList, isIP } from 'node:net';
import { domainToASCII } from 'node:url';

/** The settings read, each with the variable it came from (named in errors). */
export interface ProxyEnvironment {
  http?: { variable: string; value: string };
  https?: { variable: string; value: string };
  noProxy: string;
  /** `REQUEST_METHOD` is set: a CGI environment, where `HTTP_PROXY` may be a request's header. */
  cgi: boolean;
}

type Environment = Record<string, string | undefined>;

function firstSet(env: Environment, ...variables: string[]): { variable: string; value: string } | undefined {
  for (const variable of variables) {
    const value = env[variable];
    if (value) return { variable, value };
  }
  return undefined;
}

export function readProxyEnvironment(env: Environment = process.env): ProxyEnvironment {
  return {
    http: firstSet(env, 'HTTP_PROXY', 'http_proxy'),
    https: firstSet(env, 'HTTPS_PROXY', 'https_proxy'),
    noProxy: firstSet(env, 'NO_PROXY', 'no_proxy')?.value ?? '',
    cgi: Boolean(env.REQUEST_METHOD),
  };
}

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

const family = (ip: string): 'ipv4' | 'ipv6' => (isIP(ip) === 6 ? 'ipv6' : 'ipv4');

/** The proxy URL for `server` and the variable that named it, or undefined to connect directly. */
export function proxyFromEnvironment(
  server: URL,
  environment: ProxyEnvironment,
): { url: string; variable: string } | undefined {
  const setting = server.protocol === 'https:' ? environment.https : environment.http;
  if (!setting) return undefined;
  const url = parseProxy(setting.value, setting.variable);
  if (server.protocol === 'http:' && environment.cgi) {
    throw new Error(`refusing to use ${setting.variable} in a CGI environment (REQUEST_METHOD is set)`);
  }
  const host = server.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = server.port || DEFAULT_PORTS[server.protocol] || '';
  if (host === 'localhost' || (isIP(host) && LOOPBACK.check(host, family(host)))) return undefined;
  if (bypassed(host, port, environment.noProxy)) return undefined;
  return { url, variable: setting.variable };
}

/** A scheme-less `proxy.corp:3128` is `http://proxy.corp:3128`. */
function parseProxy(value: string, variable: string): string {
  try {
    const url = new URL(value.includes('://') ? value : `http://${value}`);
    if (url.host) return url.href;
  } catch {
    // said below
  }
  throw new Error(`${variable} "${value}" is not a proxy URL`);
}

/** Whether a `NO_PROXY` entry names the server at `host` (lower case, no brackets) and `port`. */
function bypassed(host: string, port: string, noProxy: string): boolean {
  const ip = isIP(host) ? host : undefined;
  for (const raw of noProxy.split(',')) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (entry === '*') return true;
    const [address, prefix] = entry.split('/');
    if (prefix !== undefined) {
      if (ip && isIP(address) && /^\d+$/.test(prefix) && inSubnet(ip, address, Number(prefix))) return true;
      continue;
    }
    const { name, port: entryPort } = splitPort(entry);
    if (!name || (entryPort && entryPort !== port)) continue;
    if (isIP(name)) {
      if (ip && sameAddress(ip, name)) return true;
      continue;
    }
    if (ip) continue;
    // `*.example.com` is `.example.com`; a name without the leading dot matches itself as well.
    const domain = domainToASCII(name.startsWith('*.') ? name.slice(1) : name) || name;
    if (domain.startsWith('.') ? host.endsWith(domain) : host === domain || host.endsWith(`.${domain}`)) return true;
  }
  return false;
}

/** `host:port`, `[v6]:port`, or a name or address alone (a bare IPv6 address has colons and no port). */
function splitPort(entry: string): { name: string; port?: string } {
  const bracketed = /^\[([^\]]*)\](?::(\d*))?$/.exec(entry);
  if (bracketed) return { name: bracketed[1], port: bracketed[2] || undefined };
  if (isIP(entry) === 6) return { name: entry };
  const colon = entry.lastIndexOf(':');
  if (colon < 0) return { name: entry };
  return { name: entry.slice(0, colon), port: entry.slice(colon + 1) || undefined };
}

function inSubnet(ip: string, network: string, prefix: number): boolean {
  const list = new BlockList();
  try {
    list.addSubnet(network, prefix, family(network));
  } catch {
    return false; // a prefix longer than the address
  }
  return list.check(ip, family(ip));
}

function sameAddress(ip: string, other: string): boolean {
  const list = new BlockList();
  list.addAddress(other, family(other));
  return list.check(ip, family(ip));
}
