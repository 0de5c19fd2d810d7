/**
 * The platform's IP and CIDR libraries: `ip("10.0.0.1")`, `cidr("10.0.0.0/8")`, their predicates and
 * containment, with Go's `netip` rules (no zones, no IPv4-mapped IPv6, no leading zeros in IPv4).
 */
import { isIPv6 } from 'node:net';
import { type Environment, EvaluationError } from '@marcbachmann/cel-js';

const IP_T = 'net.IP';
const CIDR_T = 'net.CIDR';
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

export class IP {
  constructor(
    readonly family: 4 | 6,
    /** The address as a number of 32 or 128 bits. */
    readonly bits: bigint,
  ) {}

  get width(): bigint {
    return this.family === 4 ? 32n : 128n;
  }

  toString(): string {
    if (this.family === 4) return [24n, 16n, 8n, 0n].map((s) => (this.bits >> s) & 255n).join('.');
    const groups = Array.from({ length: 8 }, (_, i) => ((this.bits >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
    return canonicalIPv6(groups.join(':'));
  }
}

export class CIDR {
  constructor(
    readonly ip: IP,
    readonly prefix: number,
  ) {}

  mask(): bigint {
    const hostBits = this.ip.width - BigInt(this.prefix);
    return ((1n << this.ip.width) - 1n) ^ ((1n << hostBits) - 1n);
  }

  contains(ip: IP): boolean {
    return ip.family === this.ip.family && (ip.bits & this.mask()) === (this.ip.bits & this.mask());
  }

  toString(): string {
    return `${this.ip}/${this.prefix}`;
  }
}

/** RFC 5952 text, as the URL parser writes IPv6 hosts. */
const canonicalIPv6 = (s: string) => new URL(`http://[${s}]`).hostname.slice(1, -1);

function parseIP(s: string): IP | string {
  if (IPV4.test(s))
    return new IP(
      4,
      s.split('.').reduce((acc, o) => (acc << 8n) | BigInt(o), 0n),
    );
  if (s.includes('%')) return 'IP address with zone value is not allowed';
  if (!isIPv6(s)) return `IP Address "${s}" parse error during conversion from string`;
  const canonical = canonicalIPv6(s);
  if (/^::ffff:[0-9a-f]+:[0-9a-f]+$/.test(canonical)) return 'IPv4-mapped IPv6 address is not allowed';
  const [head, tail = ''] = canonical.split('::');
  const left = head ? head.split(':') : [];
  const right = canonical.includes('::') ? (tail ? tail.split(':') : []) : [];
  const groups = [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return new IP(
    6,
    groups.reduce((acc, g) => (acc << 16n) | BigInt(`0x${g}`), 0n),
  );
}

function ip(s: string): IP {
  const r = parseIP(s);
  if (typeof r === 'string') throw new EvaluationError(r);
  return r;
}

function parseCIDR(s: string): CIDR | string {
  const slash = s.lastIndexOf('/');
  if (slash < 0) return `network address parse error during conversion from string: "${s}" no '/'`;
  const addr = parseIP(s.slice(0, slash));
  if (typeof addr === 'string') return addr;
  const prefix = s.slice(slash + 1);
  if (!/^(0|[1-9]\d{0,2})$/.test(prefix) || BigInt(prefix) > addr.width) {
    return `network address parse error during conversion from string: bad bits after slash: "${prefix}"`;
  }
  return new CIDR(addr, Number(prefix));
}

function cidr(s: string): CIDR {
  const r = parseCIDR(s);
  if (typeof r === 'string') throw new EvaluationError(r);
  return r;
}

const containsCIDR = (c: CIDR, o: CIDR) => c.prefix <= o.prefix && c.contains(o.ip);
const inRange = (ip: IP, range: string) => (parseCIDR(range) as CIDR).contains(ip);

export class IPNamespace {}

export function registerIP(env: Environment): void {
  env
    .registerType(IP_T, IP)
    .registerType(CIDR_T, CIDR)
    .registerType('IPNamespace', IPNamespace)
    .registerConstant('ip', 'IPNamespace', new IPNamespace())
    .registerFunction(`ip(string): ${IP_T}`, ip)
    .registerFunction('isIP(string): bool', (s: string) => typeof parseIP(s) !== 'string')
    .registerFunction('IPNamespace.isCanonical(string): bool', (_: unknown, s: string) => ip(s).toString() === s)
    .registerFunction(`${IP_T}.family(): int`, (a: IP) => BigInt(a.family))
    .registerFunction(`${IP_T}.isUnspecified(): bool`, (a: IP) => a.bits === 0n)
    .registerFunction(`${IP_T}.isLoopback(): bool`, (a: IP) => inRange(a, a.family === 4 ? '127.0.0.0/8' : '::1/128'))
    .registerFunction(`${IP_T}.isLinkLocalMulticast(): bool`, (a: IP) =>
      inRange(a, a.family === 4 ? '224.0.0.0/24' : 'ff02::/16'),
    )
    .registerFunction(`${IP_T}.isLinkLocalUnicast(): bool`, (a: IP) =>
      inRange(a, a.family === 4 ? '169.254.0.0/16' : 'fe80::/10'),
    )
    .registerFunction(`${IP_T}.isGlobalUnicast(): bool`, (a: IP) =>
      a.family === 4
        ? a.bits !== 0xffffffffn &&
          !['0.0.0.0/8', '127.0.0.0/8', '169.254.0.0/16', '224.0.0.0/4'].some((r) => inRange(a, r))
        : !['::/127', 'fe80::/10', 'ff00::/8'].some((r) => inRange(a, r)),
    )
    .registerOperator(`${IP_T} == ${IP_T}`, (a: IP, b: IP) => a.family === b.family && a.bits === b.bits)
    .registerFunction(`string(${IP_T}): string`, (a: IP) => a.toString())
    .registerFunction(`cidr(string): ${CIDR_T}`, cidr)
    .registerFunction('isCIDR(string): bool', (s: string) => typeof parseCIDR(s) !== 'string')
    .registerFunction(`${CIDR_T}.containsIP(${IP_T}): bool`, (c: CIDR, a: IP) => c.contains(a))
    .registerFunction(`${CIDR_T}.containsIP(string): bool`, (c: CIDR, s: string) => c.contains(ip(s)))
    .registerFunction(`${CIDR_T}.containsCIDR(${CIDR_T}): bool`, containsCIDR)
    .registerFunction(`${CIDR_T}.containsCIDR(string): bool`, (c: CIDR, s: string) => containsCIDR(c, cidr(s)))
    .registerFunction(`${CIDR_T}.ip(): ${IP_T}`, (c: CIDR) => c.ip)
    .registerFunction(
      `${CIDR_T}.masked(): ${CIDR_T}`,
      (c: CIDR) => new CIDR(new IP(c.ip.family, c.ip.bits & c.mask()), c.prefix),
    )
    .registerFunction(`${CIDR_T}.prefixLength(): int`, (c: CIDR) => BigInt(c.prefix))
    .registerOperator(
      `${CIDR_T} == ${CIDR_T}`,
      (a: CIDR, b: CIDR) => a.prefix === b.prefix && a.ip.bits === b.ip.bits && a.ip.family === b.ip.family,
    )
    .registerFunction(`string(${CIDR_T}): string`, (c: CIDR) => c.toString());
}
