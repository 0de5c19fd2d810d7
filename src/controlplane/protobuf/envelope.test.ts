import { describe, expect, it } from 'vitest';
import { schemaFor } from '../../api/schema.ts';
import { DecodeError, decodeBody, UnsupportedMediaTypeError } from '../decode.ts';
import {
  decodeKubernetesProtobuf,
  decodeProtobufBody,
  encodeKubernetesProtobuf,
  isProtobufMediaType,
  PROTOBUF_MEDIA_TYPE,
  ProtobufError,
  protobufBytes,
  protobufListEncoder,
  readEnvelope,
} from './index.ts';
import { concat, envelope, pb } from './test-encoder.ts';

const text = (s: string) => new TextEncoder().encode(s);
const MAGIC = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);
const namespace = (name: string) => envelope('v1', 'Namespace', pb.message(1, pb.string(1, name)));
/** A body as the server hands it over: one character per byte. */
const binary = (bytes: Uint8Array) => Buffer.from(bytes).toString('latin1');

describe('readEnvelope', () => {
  it('reads typeMeta, raw, contentEncoding and contentType', () => {
    const bytes = concat(
      MAGIC,
      pb.message(1, pb.string(1, 'apps/v1'), pb.string(2, 'Deployment'), pb.varint(9, 1)),
      pb.bytes(2, Uint8Array.of(1, 2, 3)),
      pb.string(3, 'gzip'),
      pb.string(4, PROTOBUF_MEDIA_TYPE),
      pb.varint(15, 1),
    );
    expect(readEnvelope(bytes)).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      raw: Uint8Array.of(1, 2, 3),
      contentEncoding: 'gzip',
      contentType: PROTOBUF_MEDIA_TYPE,
    });
  });

  it('needs the k8s\\0 prefix', () => {
    expect(() => readEnvelope(text('{"kind":"Namespace"}'))).toThrow(/"k8s\\0" prefix/);
    expect(() => readEnvelope(Uint8Array.of(0x6b, 0x38))).toThrow(ProtobufError);
  });
});

describe('decodeKubernetesProtobuf', () => {
  it('decodes raw by the table of the envelope kind and sets apiVersion and kind first', () => {
    const object = decodeKubernetesProtobuf(namespace('team-a'));
    expect(object).toEqual({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
    expect(Object.keys(object)).toEqual(['apiVersion', 'kind', 'metadata']);
  });

  it('refuses kinds without a table, with the kind in the message', () => {
    const bytes = envelope('batch/v1', 'Job', pb.message(1, pb.string(1, 'j')));
    expect(() => decodeKubernetesProtobuf(bytes)).toThrow(/batch\/v1, Kind=Job cannot be decoded from protobuf/);
  });

  it('refuses an envelope without a kind and content encodings', () => {
    expect(() => decodeKubernetesProtobuf(concat(MAGIC, pb.bytes(2, new Uint8Array(0))))).toThrow(/no kind/);
    const gzip = concat(MAGIC, pb.message(1, pb.string(1, 'v1'), pb.string(2, 'Namespace')), pb.string(3, 'gzip'));
    expect(() => decodeKubernetesProtobuf(gzip)).toThrow(/content encoding "gzip"/);
  });

  it('accepts raw JSON when the envelope says so', () => {
    const bytes = concat(
      MAGIC,
      pb.message(1, pb.string(1, 'batch/v1'), pb.string(2, 'Job')),
      pb.bytes(2, text('{"apiVersion":"x","kind":"y","metadata":{"name":"j"}}')),
      pb.string(4, 'application/json'),
    );
    expect(decodeKubernetesProtobuf(bytes)).toEqual({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' } });
  });

  it('encodes a Status with every field that is no pointer, empty ones too, and decodes it back', () => {
    const status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: { continue: 'next' },
      status: 'Failure',
      message: 'Pod "p" is invalid',
      reason: 'Invalid',
      details: { name: 'p', kind: 'Pod', causes: [{ reason: 'FieldValueRequired', field: 'spec.containers' }] },
      code: 422,
    };
    const bytes = encodeKubernetesProtobuf(status);
    const emptyMeta = [pb.string(1, ''), pb.string(2, ''), pb.string(3, 'next')];
    const cause = pb.message(4, pb.string(1, 'FieldValueRequired'), pb.string(2, ''), pb.string(3, 'spec.containers'));
    const details = [
      pb.string(1, 'p'),
      pb.string(2, ''),
      pb.string(3, 'Pod'),
      cause,
      pb.varint(5, 0),
      pb.string(6, ''),
    ];
    const raw = concat(
      pb.message(1, ...emptyMeta),
      pb.string(2, 'Failure'),
      pb.string(3, 'Pod "p" is invalid'),
      pb.string(4, 'Invalid'),
      pb.message(5, ...details),
      pb.varint(6, 422),
    );
    expect(Buffer.from(bytes)).toEqual(Buffer.from(envelope('v1', 'Status', raw)));
    // What the wire carries: the empty fields come back as such.
    expect(decodeKubernetesProtobuf(bytes)).toEqual({
      ...status,
      metadata: { selfLink: '', resourceVersion: '', continue: 'next' },
      details: {
        ...status.details,
        group: '',
        uid: '',
        retryAfterSeconds: 0,
        causes: [{ ...status.details.causes[0], message: '' }],
      },
    });
  });

  it('reports truncated input', () => {
    const bytes = namespace('team-a');
    expect(() => decodeKubernetesProtobuf(bytes.subarray(0, bytes.length - 3))).toThrow(/truncated/);
  });
});

describe('protobufBytes', () => {
  it('turns a binary string back into its bytes and passes bytes through', () => {
    const bytes = Uint8Array.of(0x6b, 0x38, 0x73, 0x00, 0x80, 0xff, 0x0a);
    expect(Uint8Array.from(protobufBytes(binary(bytes)))).toEqual(bytes);
    expect(protobufBytes(bytes)).toBe(bytes);
  });

  it('refuses a body that went through UTF-8 decoding and lost bytes', () => {
    const lossy = Buffer.from(Uint8Array.of(0x6b, 0x38, 0x73, 0x00, 0x12, 0x85, 0x01)).toString('utf8');
    expect(() => protobufBytes(lossy)).toThrow(/decoded as UTF-8/);
  });

  it('decodes a body whose lengths need multi-byte varints', () => {
    const long = 'x'.repeat(300);
    const bytes = envelope('v1', 'ConfigMap', concat(pb.message(1, pb.string(1, 'big')), pb.stringMap(2, { long })));
    expect(decodeProtobufBody(binary(bytes))).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'big' },
      data: { long },
    });
  });
});

describe('decodeBody with application/vnd.kubernetes.protobuf', () => {
  it('is decodable, with or without parameters; another media type is refused as such', () => {
    const body = binary(namespace('team-a'));
    expect(decodeBody(body, 'application/vnd.kubernetes.protobuf; charset=binary', undefined).object).toEqual(
      decodeBody(body, PROTOBUF_MEDIA_TYPE, undefined).object,
    );
    expect(() => decodeBody(body, 'text/plain', undefined)).toThrow(UnsupportedMediaTypeError);
    expect(isProtobufMediaType('Application/Vnd.Kubernetes.Protobuf')).toBe(true);
    expect(isProtobufMediaType('application/json')).toBe(false);
  });

  it('decodes to the JSON object form with no unknown or duplicate fields', () => {
    const body = binary(namespace('team-a'));
    expect(decodeBody(body, PROTOBUF_MEDIA_TYPE, schemaFor('Namespace'))).toEqual({
      object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } },
      unknown: [],
      duplicate: [],
    });
  });

  it('runs the unknown-field walk on the decoded object', () => {
    // A Namespace body decoded against the ConfigMap schema: `spec` is not a ConfigMap field.
    const body = binary(envelope('v1', 'Namespace', concat(pb.message(1, pb.string(1, 'n')), pb.message(2))));
    expect(decodeBody(body, PROTOBUF_MEDIA_TYPE, schemaFor('ConfigMap')).unknown).toEqual(['spec']);
  });

  it('throws DecodeError for malformed bodies', () => {
    expect(() => decodeBody('{"kind":"Namespace"}', PROTOBUF_MEDIA_TYPE, undefined)).toThrow(DecodeError);
    expect(() => decodeBody('{"kind":"Namespace"}', PROTOBUF_MEDIA_TYPE, undefined)).toThrow(
      /^failed to decode protobuf body: /,
    );
  });
});

describe('protobufListEncoder', () => {
  const configMap = (name: string, data: Record<string, string>) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'default', creationTimestamp: '2026-11-27T21:52:54Z' },
    data,
  });
  const list = (items: object[]) => ({
    apiVersion: 'v1',
    kind: 'ConfigMapList',
    metadata: { resourceVersion: '42', continue: 'next' },
    items,
  });

  it('gives, item by item and framed, the bytes of the whole list encoded at once', () => {
    // Items long enough that their lengths take two bytes, and none: both framings.
    for (const items of [[], [configMap('a', { k: 'v' }), configMap('b', { big: 'x'.repeat(300), é: '😀' })]]) {
      const encoder = protobufListEncoder(list(items));
      const parts = items.map((o) => encoder.item(o));
      const { head, tail } = encoder.frame(parts.reduce((n, p) => n + p.length, 0));
      const pieced = Buffer.concat([head, ...parts, tail]);
      expect(pieced).toEqual(Buffer.from(encodeKubernetesProtobuf(list(items))));
      expect(decodeKubernetesProtobuf(pieced)).toMatchObject({ kind: 'ConfigMapList', metadata: list([]).metadata });
    }
  });

  it('names the field of an item it cannot encode; refuses kinds without a message', () => {
    const encoder = protobufListEncoder(list([]));
    expect(() => encoder.item({ ...configMap('a', {}), data: { k: 3 } })).toThrow(
      /ConfigMap\.data\[k\]: expected a string/,
    );
    expect(() => protobufListEncoder({ apiVersion: 'v1', kind: 'NoSuchList', items: [] })).toThrow(ProtobufError);
  });
});
