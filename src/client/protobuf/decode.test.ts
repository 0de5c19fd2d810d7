import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { decodeObject, decodeWatchEvent, ProtobufError, ProtobufWatchDecoder, UnknownProtobufField } from './decode.ts';

const TOOLS = join(import.meta.dirname, '..', '..', '..', 'tools', 'k8s');
/** `go run ./protobuf <what>` in tools/k8s, built as `npm run k8s:build` builds (sharing its cache). */
const goRun = (what: string) =>
  execFileSync('go', ['run', './protobuf', what], {
    cwd: TOOLS,
    env: { ...process.env, CGO_ENABLED: '0' },
    maxBuffer: 64 << 20,
    encoding: 'utf8',
  });

interface Vector {
  kind: string;
  frame: string;
  json: string;
}
/** Randomly filled Pods and Statuses, each encoded by the pinned release's own serializers both ways. */
const VECTORS: Vector[] = JSON.parse(goRun('vectors'));
const frameOf = (v: Vector) => Buffer.from(v.frame, 'base64');
/** The event without the 4-byte length. */
const eventOf = (v: Vector) => frameOf(v).subarray(4);

const withoutManagedFields = (event: any) => {
  if (event.object.metadata?.managedFields) delete event.object.metadata.managedFields;
  return event;
};

describe('protobuf tables', () => {
  it('are those `go run ./protobuf messages` writes from the pinned release', { timeout: 120_000 }, () => {
    const committed = readFileSync(join(import.meta.dirname, 'messages.json'), 'utf8');
    expect(goRun('messages')).toBe(committed);
  });
});

describe('decodeWatchEvent', () => {
  it('reads every vector as the JSON event it stands for: the same values, keys in the same order', () => {
    expect(VECTORS.map((v) => v.kind)).toEqual([...Array(12).fill('Pod'), 'Status', 'Status', 'Status']);
    for (const v of VECTORS) {
      expect(JSON.stringify(decodeWatchEvent(eventOf(v), false))).toBe(JSON.stringify(JSON.parse(v.json)));
    }
  });

  it('leaves managedFields out when asked, the rest unchanged', () => {
    const pods = VECTORS.filter((v) => v.kind === 'Pod');
    expect(pods.filter((v) => JSON.parse(v.json).object.metadata.managedFields?.length).length).toBeGreaterThan(6);
    for (const v of pods) {
      const event = decodeWatchEvent(eventOf(v), true) as any;
      expect('managedFields' in event.object.metadata).toBe(false);
      expect(event).toEqual(withoutManagedFields(JSON.parse(v.json)));
    }
  });

  // Hand-made events: a Pod of the given fields.
  const varint = (n: number) => {
    const out: number[] = [];
    for (; n >= 0x80; n = Math.floor(n / 0x80)) out.push((n % 0x80) | 0x80);
    return [...out, n];
  };
  const delimited = (field: number, ...parts: (number[] | Buffer | string)[]) => {
    const body = Buffer.concat(parts.map((p) => Buffer.from(p as never)));
    return Buffer.from([...varint((field << 3) | 2), ...varint(body.length), ...body]);
  };
  const podEvent = (...podFields: Buffer[]) =>
    Buffer.concat([
      delimited(1, 'ADDED'),
      delimited(
        2,
        delimited(1, 'k8s\0', delimited(1, delimited(1, 'v1'), delimited(2, 'Pod')), delimited(2, ...podFields)),
      ),
    ]);
  const metadata = (...bytes: number[][]) => delimited(1, ...bytes);

  it("writes what protobuf leaves out as Go's JSON does: structs by value, nil lists, no zero omitzero time", () => {
    expect(decodeWatchEvent(podEvent(metadata([0x0a, 1, 0x61])), false)).toEqual({
      type: 'ADDED',
      object: { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'a' }, spec: { containers: null }, status: {} },
    });
  });

  it('reads int64 values whole, negative ones too', () => {
    const generation = (n: number[]) => (decodeWatchEvent(podEvent(metadata([0x38, ...n])), false) as any).object;
    expect(generation(varint(2 ** 40 + 3)).metadata.generation).toBe(2 ** 40 + 3);
    expect(generation([...Array(9).fill(0xff), 0x01]).metadata.generation).toBe(-1);
  });

  it('refuses a field the tables lack, a length past its message, a wire type its field does not have', () => {
    expect(() => decodeWatchEvent(podEvent(metadata([0x9a, 0x06, 0])), false)).toThrow(
      new UnknownProtobufField('meta/v1.ObjectMeta: no field 99'),
    );
    expect(() => decodeWatchEvent(podEvent(metadata([0x0a, 5, 0x61])), false)).toThrow(/^truncated at offset/);
    expect(() => decodeWatchEvent(podEvent(metadata([0x08, 1])), false)).toThrow(
      new ProtobufError('meta/v1.ObjectMeta.name: wire type 0'),
    );
    expect(() => decodeWatchEvent(podEvent(metadata([0x38, ...Array(10).fill(0xff), 1])), false)).toThrow(
      /varint longer than 10 bytes/,
    );
    // A creation time in the year 11476, which JSON cannot write either.
    expect(() => decodeWatchEvent(podEvent(metadata([...delimited(8, [0x08, ...varint(3e11)])])), false)).toThrow(
      'time 300000000000 s: year 11476 has no JSON form',
    );
    const pod = eventOf(VECTORS[0]!);
    expect(() => decodeWatchEvent(pod.subarray(0, pod.length - 10), false)).toThrow(/^truncated at offset/);
    // After a failure, the next event reads as before.
    expect(decodeWatchEvent(pod, false)).toEqual(JSON.parse(VECTORS[0]!.json));
  });

  it('refuses a kind the tables lack, naming it', () => {
    const status = eventOf(VECTORS.find((v) => v.kind === 'Status')!);
    const renamed = Buffer.from(status.toString('latin1').replace('Status', 'Statue'), 'latin1');
    expect(() => decodeWatchEvent(renamed, false)).toThrow('no protobuf tables for v1 Statue');
  });
});

describe('decodeObject', () => {
  it('reads an error answer, a Status in its envelope', () => {
    const v = VECTORS.find((x) => x.kind === 'Status')!;
    const event = eventOf(v);
    // The envelope is the event's object's bytes: after the type (field 1) and the object's two length prefixes.
    const envelopeAt = event.indexOf(Buffer.from('k8s\0', 'latin1'));
    expect(decodeObject(event.subarray(envelopeAt))).toEqual(JSON.parse(v.json).object);
    expect(() => decodeObject(Buffer.from('{"kind":"Status"}'))).toThrow('not a Kubernetes protobuf object');
  });
});

describe('ProtobufWatchDecoder', () => {
  const stream = Buffer.concat(VECTORS.slice(0, 4).map(frameOf));
  const expected = VECTORS.slice(0, 4).map((v) => JSON.parse(v.json));

  it('reads frames cut anywhere: an event as soon as its last byte arrives', () => {
    for (const size of [1, 3, 4, 5, 1000, stream.length]) {
      const events: unknown[] = [];
      const decoder = new ProtobufWatchDecoder((e) => events.push(e), false);
      for (let at = 0; at < stream.length; at += size) decoder.write(stream.subarray(at, at + size));
      decoder.end();
      expect(events, `chunks of ${size}`).toEqual(expected);
    }
  });

  it('joins the chunks of an event once it is whole, not at every chunk', () => {
    const concat = vi.spyOn(Buffer, 'concat');
    try {
      const events: unknown[] = [];
      const decoder = new ProtobufWatchDecoder((e) => events.push(e), false);
      for (let at = 0; at < stream.length; at += 100) decoder.write(stream.subarray(at, at + 100));
      expect(events).toHaveLength(4);
      // At most twice a frame: once its length is whole, once the frame is.
      expect(concat.mock.calls.length).toBeLessThanOrEqual(8);
      expect(stream.length / 100).toBeGreaterThan(100);
    } finally {
      concat.mockRestore();
    }
  });

  it('refuses a stream that ends inside an event, and an event over 64 MiB', () => {
    const decoder = new ProtobufWatchDecoder(() => {}, false);
    decoder.write(stream.subarray(0, 100));
    expect(() => decoder.end()).toThrow('watch stream ended inside an event (100 bytes)');
    const huge = Buffer.alloc(4);
    huge.writeUInt32BE((64 << 20) + 1);
    expect(() => new ProtobufWatchDecoder(() => {}, false).write(huge)).toThrow('watch event of 67108865 bytes');
  });
});
