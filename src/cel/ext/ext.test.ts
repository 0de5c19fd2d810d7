import { describe, expect, it } from 'vitest';
import { platformEnvironment } from '../library.ts';
import { metered } from '../values.ts';
import { type AuthorizeFn, Authorizer } from './authorizer.ts';

const env = platformEnvironment();
env.registerVariable('authorizer', 'kubernetes.authorization.Authorizer');

/** alice may get deployments in `team`, and GET /healthz. */
const authorize: AuthorizeFn = (user, a) => {
  if ('path' in a) return { allowed: a.path === '/healthz' && a.verb === 'get', reason: 'path rule' };
  if (a.group === 'boom') throw new Error('authorizer unavailable');
  const ok = user.username === 'alice' && a.resource === 'deployments' && a.namespace === 'team' && a.verb === 'get';
  return { allowed: ok, reason: ok ? 'RBAC: allowed by RoleBinding "r"' : '' };
};
const authorizer = new Authorizer({ username: 'alice', groups: [] }, authorize, {
  group: 'apps',
  resource: 'deployments',
  namespace: 'team',
  name: 'web',
});

const run = (expr: string) => metered(1_000_000, () => env.evaluate(expr, { authorizer })).value;

/** [expression, expected value]; every expression must also type-check. */
const TABLES: Record<string, [string, unknown][]> = {
  strings: [
    ['"héllo".charAt(1)', 'é'],
    ['"abc".charAt(3)', ''],
    ['"a-b-c".replace("-", "+")', 'a+b+c'],
    ['"a-b-c".replace("-", "+", 1)', 'a+b-c'],
    ['"a-b-c".replace("-", "+", 0)', 'a-b-c'],
    ['"%s has %d items, %.2f%%".format(["cart", 3, 12.345])', 'cart has 3 items, 12.35%'],
    ['"%x".format([255])', 'ff'],
    ['strings.quote("a\\"b\\n")', '"a\\"b\\n"'],
  ],
  regex: [
    ['"abc123def456".find("[0-9]+")', '123'],
    ['"abc".find("[0-9]+")', ''],
    ['"a1b22c333".findAll("[0-9]+")', ['1', '22', '333']],
    ['"a1b22c333".findAll("[0-9]+", 2)', ['1', '22']],
    ['"abc".matches("^a.c$")', true],
  ],
  lists: [
    ['[1, 2, 3].isSorted()', true],
    ['["b", "a"].isSorted()', false],
    ['[1, 2, 3].sum()', 6n],
    ['[1.5, 2.5].sum()', 4],
    ['[3, 1, 2].min()', 1n],
    ['["a", "c", "b"].max()', 'c'],
    ['[1, 2, 1].indexOf(1)', 0n],
    ['[1, 2, 1].lastIndexOf(1)', 2n],
    ['[1, 2].indexOf(3)', -1n],
  ],
  sets: [
    ['sets.contains([1, 2, 3], [3, 1])', true],
    ['sets.contains([1], [1, 2])', false],
    ['sets.equivalent([1, 2, 2], [2, 1])', true],
    ['sets.intersects([1, 2], [2, 3])', true],
    ['sets.intersects([1], [])', false],
  ],
  quantity: [
    ['quantity("1.5Gi").isGreaterThan(quantity("1Gi"))', true],
    ['quantity("500m").isLessThan(quantity("1"))', true],
    ['quantity("1k").compareTo(quantity("1000"))', 0n],
    ['quantity("1k") == quantity("1000")', true],
    ['quantity("500m").isInteger()', false],
    ['quantity("2k").asInteger()', 2000n],
    ['quantity("1.5").asApproximateFloat()', 1.5],
    ['quantity("1").add(quantity("500m")).isGreaterThan(quantity("1"))', true],
    ['quantity("3").sub(1) == quantity("2")', true],
    ['quantity("-1").sign()', -1n],
    ['isQuantity("1Mi")', true],
    ['isQuantity("1x")', false],
  ],
  url: [
    ['url("https://example.com:8443/a/b?x=1&x=2&y=3").getScheme()', 'https'],
    ['url("https://example.com:8443/a/b").getHost()', 'example.com:8443'],
    ['url("https://[::1]:80/").getHostname()', '::1'],
    ['url("https://example.com:8443/a/b").getPort()', '8443'],
    ['url("https://example.com/a%20b").getEscapedPath()', '/a%20b'],
    ['url("https://e.com/?x=1&x=2").getQuery()["x"]', ['1', '2']],
    ['url("/relative/path").getScheme()', ''],
    ['isURL("https://example.com")', true],
    ['isURL("not a url")', false],
  ],
  ip: [
    ['ip("10.0.0.1").family()', 4n],
    ['ip("2001:db8::1").family()', 6n],
    ['ip("0.0.0.0").isUnspecified()', true],
    ['ip("127.0.0.1").isLoopback()', true],
    ['ip("169.254.1.1").isLinkLocalUnicast()', true],
    ['ip("224.0.0.1").isLinkLocalMulticast()', true],
    ['ip("8.8.8.8").isGlobalUnicast()', true],
    ['ip.isCanonical("2001:db8::1")', true],
    ['ip.isCanonical("2001:DB8::1")', false],
    ['isIP("10.0.0.01")', false],
    ['isIP("::ffff:1.2.3.4")', false],
    ['isIP("fe80::1%eth0")', false],
    ['string(ip("2001:0db8:0:0:0:0:0:1"))', '2001:db8::1'],
  ],
  cidr: [
    ['cidr("10.0.0.0/8").containsIP("10.1.2.3")', true],
    ['cidr("10.0.0.0/8").containsIP(ip("11.0.0.1"))', false],
    ['cidr("10.0.0.0/8").containsCIDR("10.1.0.0/16")', true],
    ['cidr("10.1.0.0/16").containsCIDR(cidr("10.0.0.0/8"))', false],
    ['cidr("10.1.2.3/8").prefixLength()', 8n],
    ['string(cidr("10.1.2.3/8").masked())', '10.0.0.0/8'],
    ['string(cidr("10.1.2.3/8").ip())', '10.1.2.3'],
    ['cidr("2001:db8::/32").containsIP("2001:db8:1::1")', true],
    ['isCIDR("10.0.0.0/33")', false],
  ],
  semver: [
    ['semver("1.2.3").major()', 1n],
    ['semver("1.2.3").minor()', 2n],
    ['semver("1.2.3").patch()', 3n],
    ['semver("1.2.3").isLessThan(semver("1.10.0"))', true],
    ['semver("2.0.0-rc.1").isLessThan(semver("2.0.0"))', true],
    ['semver("1.0.0").compareTo(semver("1.0.0"))', 0n],
    ['isSemver("1.2")', false],
    ['isSemver("v1.2", true)', true],
    ['semver("v1.02", true) == semver("1.2.0")', true],
  ],
  format: [
    ['format.dns1123Label().validate("my-name").hasValue()', false],
    ['format.dns1123Label().validate("My_Name").hasValue()', true],
    ['format.dns1123LabelPrefix().validate("web-").hasValue()', false],
    ['format.qualifiedName().validate("example.com/key").hasValue()', false],
    ['format.labelValue().validate("-bad").hasValue()', true],
    ['format.uuid().validate("123e4567-e89b-12d3-a456-426614174000").hasValue()', false],
    ['format.date().validate("2024-02-30").hasValue()', false],
    ['format.named("dns1035Label").hasValue()', true],
    ['format.named("nope").hasValue()', false],
  ],
  authorizer: [
    ['authorizer.group("apps").resource("deployments").namespace("team").check("get").allowed()', true],
    ['authorizer.group("apps").resource("deployments").namespace("other").check("get").allowed()', false],
    [
      'authorizer.group("apps").resource("deployments").namespace("team").check("get").reason()',
      'RBAC: allowed by RoleBinding "r"',
    ],
    ['authorizer.path("/healthz").check("get").allowed()', true],
    ['authorizer.requestResource.check("get").allowed()', true],
    [
      'authorizer.serviceAccount("ns", "sa").group("apps").resource("deployments").namespace("team").check("get").allowed()',
      false,
    ],
    ['authorizer.group("boom").resource("x").check("get").errored()', true],
    ['authorizer.group("boom").resource("x").check("get").error()', 'authorizer unavailable'],
  ],
};

describe.each(Object.entries(TABLES))('the %s library', (_, table) => {
  it.each(table)('%s', (expr, want) => {
    const checked = env.check(expr);
    expect(checked.error?.message).toBeUndefined();
    const got = run(expr);
    expect(got instanceof Map ? Object.fromEntries(got) : got).toEqual(want);
  });
});

/** Expressions whose evaluation fails, with the error the user sees. */
const ERRORS: [string, RegExp][] = [
  ['"abc".charAt(5)', /index out of range/],
  ['"%d".format(["x"])', /decimal clause can only be used on integers/],
  ['"%s %s".format(["x"])', /out of range/],
  ['"a".find("(")', /invalid regular expression/],
  ['[1].min() < [].min()', /empty list/],
  ['quantity("1x")', /quantities must match the regular expression/],
  ['quantity("500m").asInteger()', /cannot convert value to integer/],
  ['url("nope")', /invalid URI for request/],
  ['ip("::ffff:1.2.3.4")', /IPv4-mapped IPv6 address is not allowed/],
  ['ip("fe80::1%eth0")', /zone value is not allowed/],
  ['cidr("10.0.0.0")', /no '\/'/],
  ['semver("1.2")', /could not parse 1.2 as semver/],
];

describe('library errors', () => {
  it.each(ERRORS)('%s fails with %s', (expr, want) => {
    expect(() => run(expr)).toThrow(want);
  });
});

describe('type checking of library calls', () => {
  it.each([
    ['quantity("1") > 1', /no such overload/],
    ['ip("1.2.3.4").family() == "4"', /no such overload/],
    ['[1, 2].sum() + "x"', /no such overload/],
    ['authorizer.group(1)', /found no matching overload|no such overload|no matching overload/i],
  ])('%s is refused', (expr, want) => {
    const r = env.check(expr);
    expect(r.valid).toBe(false);
    expect(r.error?.message).toMatch(want);
  });
});
