import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SelectorError } from './labels.ts';
import type { KubeObject } from './meta.ts';
import { fnv1a64, parseShardSelector } from './shard-selector.ts';
import { thrown } from './test-helpers.ts';

const hex = (n: bigint) => `0x${n.toString(16).padStart(16, '0')}`;
const range = (path: string, start: string, end: string) => `shardRange(${path}, '${start}', '${end}')`;
const uidRange = (start: string, end: string) => range('object.metadata.uid', start, end);
const LOW = '0x0000000000000000';
const HALF = '0x8000000000000000';
const TOP = '0x10000000000000000';

const pod = (uid: string, namespace?: string): KubeObject => ({ metadata: { name: 'p', uid, namespace } });

describe('fnv1a64', () => {
  it.each([
    ['', 0xcbf29ce484222325n],
    ['a', 0xaf63dc4c8601ec8cn],
    ['ab', 0x089c4407b545986an],
    ['abc', 0xe71fa2190541574bn],
    ['foobar', 0x85944171f73967e8n],
  ])('hashes %j to the published FNV-1a value', (input, expected) => {
    expect(fnv1a64(input)).toBe(expected);
  });

  it('hashes the UTF-8 bytes', () => {
    // "é" is the two bytes 0xc3 0xa9: xor each into the hash, then multiply by the prime, mod 2^64.
    let h = 0xcbf29ce484222325n;
    for (const byte of [0xc3n, 0xa9n]) h = ((h ^ byte) * 0x100000001b3n) % 2n ** 64n;
    expect(fnv1a64('é')).toBe(h);
  });
});

describe('parseShardSelector', () => {
  it.each([
    [uidRange(LOW, HALF)],
    [uidRange(HALF, TOP)],
    [uidRange(LOW, TOP)],
    [range('object.metadata.namespace', '0x00000000000000aa', '0x00000000000000ff')],
    [`${uidRange(LOW, '0x4000000000000000')} || ${uidRange('0xc000000000000000', TOP)}`],
  ])('parses and writes back %s', (text) => {
    expect(parseShardSelector(text).toString()).toBe(text);
  });

  it('accepts any whitespace between tokens and writes the canonical form', () => {
    const text = ` shardRange(  object.metadata.uid ,'${LOW}',\n'${HALF}'  )||shardRange(object.metadata.uid,'${HALF}','${TOP}') `;
    expect(parseShardSelector(text).toString()).toBe(`${uidRange(LOW, HALF)} || ${uidRange(HALF, TOP)}`);
  });

  it('exposes the ranges as numbers', () => {
    expect(parseShardSelector(uidRange(HALF, TOP)).ranges).toEqual([
      { path: 'object.metadata.uid', start: 2n ** 63n, end: 2n ** 64n },
    ]);
  });

  it.each([
    ['', 'empty shard selector is not allowed; omit the parameter for unfiltered lists'],
    ['   ', 'empty shard selector is not allowed; omit the parameter for unfiltered lists'],
    [
      `hashRange(object.metadata.uid, '${LOW}', '${HALF}')`,
      'unsupported function "hashRange"; only shardRange() and || are allowed',
    ],
    ["object.metadata.uid > '0x0'", 'expected a shardRange() call at position 0'],
    [`${uidRange(LOW, HALF)} || `, 'expected a shardRange() call at position 79'],
    [`${uidRange(LOW, HALF)} && ${uidRange(HALF, TOP)}`, "expected '||' or end of selector at position 76, found '&'"],
    [
      range('object.metadata.name', LOW, HALF),
      'unsupported field path "object.metadata.name"; supported: object.metadata.uid, object.metadata.namespace',
    ],
    [
      range('metadata.uid', LOW, HALF),
      'unsupported field path "metadata.uid"; supported: object.metadata.uid, object.metadata.namespace',
    ],
    [
      `shardRange('object.metadata.uid', '${LOW}', '${HALF}')`,
      "shardRange() first argument: expected field path (e.g. object.metadata.uid), got 'object.metadata.uid'",
    ],
    [`shardRange(object.metadata.uid, '${LOW}')`, 'shardRange() requires exactly 3 arguments, got 2'],
    ['shardRange()', 'shardRange() requires exactly 3 arguments, got 0'],
    [
      `shardRange(object.metadata.uid, ${LOW}, '${HALF}')`,
      "hexStart must be a single-quoted string literal (e.g. '0x8000000000000000'), got 0x0000000000000000",
    ],
    [
      `shardRange(object.metadata.uid, '${LOW}', ${HALF})`,
      "hexEnd must be a single-quoted string literal (e.g. '0x8000000000000000'), got 0x8000000000000000",
    ],
    [
      `shardRange(object.metadata.uid, "${LOW}", '${HALF}')`,
      `expected a field path or a single-quoted hex string at position 32, found '"'`,
    ],
    [`shardRange(object.metadata.uid, '${LOW}', '${HALF})`, 'unterminated string literal at position 54'],
    [`shardRange(object.metadata.uid '${LOW}', '${HALF}')`, "expected ',' or ')' at position 31, found '''"],
    [uidRange('0000000000000000', HALF), `hexStart must have '0x' prefix, got "0000000000000000"`],
    [uidRange('0x', HALF), "hexStart: hex value is required after '0x'"],
    [uidRange('0x000000000000000000', HALF), 'hexStart: hex value too long (18 chars, max 17): "000000000000000000"'],
    [uidRange('0x000000000000000g', HALF), 'hexStart: invalid hex character "g" in "0x000000000000000g"'],
    [uidRange(LOW, '0x8000000000000000'.toUpperCase()), `hexEnd must have '0x' prefix, got "0X8000000000000000"`],
    [uidRange(LOW, '0xFFFFFFFFFFFFFFFF'), 'hexEnd: invalid hex character "F" in "0xFFFFFFFFFFFFFFFF"'],
    [
      uidRange(LOW, '0x20000000000000000'),
      `hexEnd: 17-digit hex value must be '0x10000000000000000' (2^64), got "0x20000000000000000"`,
    ],
    [
      uidRange('0x0', HALF),
      'hexStart must be a 0x-prefixed 16-digit hex value, got "0x0" (did you mean "0x0000000000000000"?)',
    ],
    [
      uidRange(LOW, '0xff'),
      'hexEnd must be a 0x-prefixed 16-digit hex value, got "0xff" (did you mean "0x00000000000000ff"?)',
    ],
    [uidRange(HALF, LOW), 'shard range start 0x8000000000000000 must be less than end 0x0000000000000000'],
    [uidRange(HALF, HALF), 'shard range start 0x8000000000000000 must be less than end 0x8000000000000000'],
    [
      `${uidRange(LOW, HALF)} || ${range('object.metadata.namespace', HALF, TOP)}`,
      'all shard ranges must use the same field, got "object.metadata.uid" and "object.metadata.namespace"',
    ],
  ])('rejects %j', (text, message) => {
    const err = thrown(() => parseShardSelector(text));
    expect(err).toBeInstanceOf(SelectorError);
    expect(err.message).toBe(message);
  });
});

describe('ShardSelector.matches', () => {
  const uid = '3f2a9c4e-1b7d-4e0a-9c5f-2d8e6b1a0f47';
  const h = fnv1a64(uid);

  it('includes the start and excludes the end', () => {
    expect(parseShardSelector(uidRange(hex(h), hex(h + 1n))).matches(pod(uid))).toBe(true);
    expect(parseShardSelector(uidRange(LOW, hex(h))).matches(pod(uid))).toBe(false);
    expect(parseShardSelector(uidRange(hex(h + 1n), TOP)).matches(pod(uid))).toBe(false);
  });

  it('matches when any of the ranges holds the hash', () => {
    const sel = parseShardSelector(`${uidRange(LOW, hex(h))} || ${uidRange(hex(h), hex(h + 1n))}`);
    expect(sel.matches(pod(uid))).toBe(true);
  });

  it('puts every object in exactly one shard of a split', () => {
    const shards = [
      uidRange(LOW, '0x4000000000000000'),
      uidRange('0x4000000000000000', HALF),
      uidRange(HALF, '0xc000000000000000'),
      uidRange('0xc000000000000000', TOP),
    ].map(parseShardSelector);
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 400; i++) {
      // Varied, repeatable stand-ins for random UIDs.
      const uid = createHash('sha1').update(String(i)).digest('hex');
      const owners = shards.flatMap((s, n) => (s.matches(pod(uid)) ? [n] : []));
      expect(owners).toHaveLength(1);
      counts[owners[0]]++;
    }
    for (const count of counts) expect(count).toBeGreaterThan(0);
  });

  it('hashes the namespace, which is empty for cluster-scoped objects', () => {
    const empty = fnv1a64('');
    const byNamespace = parseShardSelector(range('object.metadata.namespace', hex(empty), hex(empty + 1n)));
    expect(byNamespace.matches(pod(uid))).toBe(true);
    expect(byNamespace.matches(pod(uid, 'default'))).toBe(false);
    const ns = fnv1a64('default');
    expect(
      parseShardSelector(range('object.metadata.namespace', hex(ns), hex(ns + 1n))).matches(pod(uid, 'default')),
    ).toBe(true);
  });
});
