import { describe, expect, it } from 'vitest';
import { decodeMessage, field, formatTime, inline, list, mapOf, message, ptr } from './schema.ts';
import { concat, pb } from './test-encoder.ts';
import { ProtobufError } from './wire.ts';

const Inner = message('Inner', { 1: field('a', 'string'), 2: field('b', 'int32') });
const Ref = message('Ref', { 1: field('name', 'string') });
const Strings = message('Strings', { 1: list('items', 'string') }, 'items');

const Sample = message('Sample', {
  1: field('text', 'string'),
  2: field('count', 'int32'),
  3: field('big', 'int64'),
  4: field('flag', 'bool'),
  5: field('blob', 'bytes'),
  6: ptr('replicas', 'int32'),
  7: ptr('enabled', 'bool'),
  8: list('names', 'string'),
  9: list('numbers', 'int64'),
  10: mapOf('labels', 'string'),
  11: mapOf('data', 'bytes'),
  12: field('inner', Inner),
  13: list('inners', Inner),
  14: inline(Ref),
  15: mapOf('extra', Strings),
  16: field('when', 'time'),
  17: field('micro', 'microTime'),
  18: field('size', 'quantity'),
  19: mapOf('limits', 'quantity'),
  20: field('port', 'intOrString'),
  21: field('raw', 'rawExtension'),
  22: field('fields', 'fieldsV1'),
  23: ptr('name', 'string'),
});

describe('decodeMessage: scalars', () => {
  it('decodes strings, integers, booleans and bytes (as base64)', () => {
    const bytes = concat(
      pb.string(1, 'hello'),
      pb.varint(2, -3),
      pb.varint(3, 1767225845123),
      pb.varint(4, true),
      pb.bytes(5, Uint8Array.of(0, 1, 2, 255)),
    );
    expect(decodeMessage(bytes, Sample)).toEqual({
      text: 'hello',
      count: -3,
      big: 1767225845123,
      flag: true,
      blob: 'AAEC/w==',
    });
  });

  it('drops zero values of plain fields and keeps those of pointer fields', () => {
    const bytes = concat(
      pb.string(1, ''),
      pb.varint(2, 0),
      pb.varint(4, false),
      pb.bytes(5, new Uint8Array(0)),
      pb.varint(6, 0),
      pb.varint(7, false),
      pb.string(23, ''),
    );
    expect(decodeMessage(bytes, Sample)).toEqual({ replicas: 0, enabled: false, name: '' });
  });

  it('lets the last occurrence of a scalar win, a zero one included', () => {
    expect(decodeMessage(concat(pb.string(1, 'a'), pb.string(1, 'b')), Sample)).toEqual({ text: 'b' });
    expect(decodeMessage(concat(pb.varint(2, 5), pb.varint(2, 0)), Sample)).toEqual({});
  });

  it('skips fields the table does not list, of every wire type', () => {
    const bytes = concat(
      pb.varint(100, 1),
      pb.fixed64(101, 1n),
      pb.string(102, 'x'),
      pb.fixed32(103, 1),
      pb.message(104, pb.string(1, 'nested')),
      pb.string(1, 'kept'),
    );
    expect(decodeMessage(bytes, Sample)).toEqual({ text: 'kept' });
  });

  it('refuses a known field with the wrong wire type', () => {
    expect(() => decodeMessage(pb.varint(1, 5), Sample)).toThrow(ProtobufError);
    expect(() => decodeMessage(pb.string(2, 'x'), Sample)).toThrow(/Sample\.count: wrong wire type 2/);
  });
});

describe('decodeMessage: repeated, maps and messages', () => {
  it('collects repeated strings (empty ones too) and numbers, packed or not', () => {
    const bytes = concat(
      pb.string(8, 'a'),
      pb.string(8, ''),
      pb.string(8, 'c'),
      pb.varint(9, 1),
      pb.packed(9, [2, 300, -1]),
    );
    expect(decodeMessage(bytes, Sample)).toEqual({ names: ['a', '', 'c'], numbers: [1, 2, 300, -1] });
  });

  it('decodes maps, keeping empty values, with a missing value as the zero value', () => {
    const bytes = concat(
      pb.stringMap(10, { app: 'web', empty: '' }),
      pb.entry(11, 'bin', pb.bytes(2, Uint8Array.of(0xff))),
      pb.message(10, pb.string(1, 'novalue')),
      pb.entry(19, 'cpu', pb.quantity(2, '250m')),
      pb.entry(19, 'memory', pb.quantity(2, '64Mi')),
      pb.entry(15, 'groups', pb.message(2, pb.string(1, 'a'), pb.string(1, 'b'))),
      pb.entry(15, 'none', pb.message(2)),
    );
    expect(decodeMessage(bytes, Sample)).toEqual({
      labels: { app: 'web', empty: '', novalue: '' },
      data: { bin: '/w==' },
      limits: { cpu: '250m', memory: '64Mi' },
      extra: { groups: ['a', 'b'], none: [] },
    });
  });

  it('keeps empty messages, merges repeated occurrences and lists repeated messages', () => {
    expect(decodeMessage(pb.message(12), Sample)).toEqual({ inner: {} });
    const merged = concat(pb.message(12, pb.string(1, 'x')), pb.message(12, pb.varint(2, 7)));
    expect(decodeMessage(merged, Sample)).toEqual({ inner: { a: 'x', b: 7 } });
    const many = concat(pb.message(13, pb.string(1, 'one')), pb.message(13), pb.message(13, pb.varint(2, 3)));
    expect(decodeMessage(many, Sample)).toEqual({ inners: [{ a: 'one' }, {}, { b: 3 }] });
  });

  it('inlines embedded structs into the parent object', () => {
    expect(decodeMessage(concat(pb.message(14, pb.string(1, 'cm')), pb.string(1, 't')), Sample)).toEqual({
      name: 'cm',
      text: 't',
    });
  });

  it('unwraps a message whose JSON form is one of its fields', () => {
    expect(decodeMessage(concat(pb.string(1, 'x'), pb.string(1, 'y')), Strings)).toEqual(['x', 'y']);
  });
});

describe('decodeMessage: Kubernetes special types', () => {
  it('formats Time as RFC 3339 with whole seconds and MicroTime with microseconds', () => {
    const bytes = concat(pb.time(16, '2026-01-02T03:04:05Z', 999), pb.time(17, '2026-01-02T03:04:05Z', 123456789));
    expect(decodeMessage(bytes, Sample)).toEqual({
      when: '2026-01-02T03:04:05Z',
      micro: '2026-01-02T03:04:05.123456Z',
    });
  });

  it('gives the zero Time (an empty message) as no field', () => {
    expect(decodeMessage(pb.message(16), Sample)).toEqual({});
    expect(decodeMessage(pb.message(16, pb.varint(1, 0)), Sample)).toEqual({ when: '1970-01-01T00:00:00Z' });
  });

  it('formats times before the epoch', () => {
    expect(formatTime(-86400, 0, false)).toBe('1969-12-31T00:00:00Z');
  });

  it('decodes Quantity to its string and IntOrString to a number or a string', () => {
    expect(decodeMessage(pb.quantity(18, '1.5Gi'), Sample)).toEqual({ size: '1.5Gi' });
    expect(decodeMessage(pb.message(18), Sample)).toEqual({ size: '0' });
    expect(decodeMessage(pb.intOrString(20, 8080), Sample)).toEqual({ port: 8080 });
    expect(decodeMessage(pb.intOrString(20, 0), Sample)).toEqual({ port: 0 });
    expect(decodeMessage(pb.intOrString(20, '25%'), Sample)).toEqual({ port: '25%' });
  });

  it('parses the JSON carried by RawExtension and FieldsV1', () => {
    const json = (s: string) => new TextEncoder().encode(s);
    const bytes = concat(
      pb.message(21, pb.bytes(1, json('{"kind":"Thing","spec":{"a":1}}'))),
      pb.message(22, pb.bytes(1, json('{"f:metadata":{"f:labels":{}}}'))),
    );
    expect(decodeMessage(bytes, Sample)).toEqual({
      raw: { kind: 'Thing', spec: { a: 1 } },
      fields: { 'f:metadata': { 'f:labels': {} } },
    });
    expect(decodeMessage(pb.message(21), Sample)).toEqual({});
    expect(() => decodeMessage(pb.message(21, pb.bytes(1, json('not json'))), Sample)).toThrow(/not JSON/);
  });
});
