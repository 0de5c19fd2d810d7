/**
 * Test support only: a minimal protobuf writer for building messages field by field, with the field
 * numbers spelled out in the test (independently of the decoding tables), and the Kubernetes envelope.
 */

/** The varint bytes of an unsigned or (two's complement, 64-bit) negative integer. */
export function varintBytes(value: number | bigint): number[] {
  let v = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    out.push(byte);
  } while (v !== 0n);
  return out;
}

export function concat(...chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

const tag = (field: number, wireType: number) => varintBytes(field * 8 + wireType);

/** Field writers: each returns the bytes of one field (tag and value). */
export const pb = {
  varint(field: number, value: number | bigint | boolean): Uint8Array {
    const v = typeof value === 'boolean' ? (value ? 1 : 0) : value;
    return Uint8Array.from([...tag(field, 0), ...varintBytes(v)]);
  },
  fixed64(field: number, value: bigint): Uint8Array {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigUint64(0, BigInt.asUintN(64, value), true);
    return concat(Uint8Array.from(tag(field, 1)), b);
  },
  fixed32(field: number, value: number): Uint8Array {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, value >>> 0, true);
    return concat(Uint8Array.from(tag(field, 5)), b);
  },
  bytes(field: number, value: Uint8Array): Uint8Array {
    return concat(Uint8Array.from([...tag(field, 2), ...varintBytes(value.length)]), value);
  },
  string(field: number, value: string): Uint8Array {
    return pb.bytes(field, new TextEncoder().encode(value));
  },
  /** A nested message made of the given fields. */
  message(field: number, ...fields: Uint8Array[]): Uint8Array {
    return pb.bytes(field, concat(...fields));
  },
  /** A packed repeated varint field. */
  packed(field: number, values: (number | bigint)[]): Uint8Array {
    return pb.bytes(field, Uint8Array.from(values.flatMap((v) => varintBytes(v))));
  },
  /** One entry of a `map<string, …>`: key = 1, value = 2 (the value field given already encoded). */
  entry(field: number, key: string, value: Uint8Array): Uint8Array {
    return pb.message(field, pb.string(1, key), value);
  },
  /** A whole `map<string, string>`. */
  stringMap(field: number, map: Record<string, string>): Uint8Array {
    return concat(...Object.entries(map).map(([k, v]) => pb.entry(field, k, pb.string(2, v))));
  },
  /** `Timestamp {seconds = 1, nanos = 2}` for an ISO date (whole seconds unless nanos are given). */
  time(field: number, iso: string, nanos = 0): Uint8Array {
    const seconds = Math.floor(Date.parse(iso) / 1000);
    return pb.message(field, pb.varint(1, seconds), pb.varint(2, nanos));
  },
  /** `Quantity {string = 1}`. */
  quantity(field: number, value: string): Uint8Array {
    return pb.message(field, pb.string(1, value));
  },
  /** `IntOrString {type = 1, intVal = 2, strVal = 3}`. */
  intOrString(field: number, value: number | string): Uint8Array {
    return typeof value === 'number'
      ? pb.message(field, pb.varint(1, 0), pb.varint(2, value), pb.string(3, ''))
      : pb.message(field, pb.varint(1, 1), pb.varint(2, 0), pb.string(3, value));
  },
};

/** `k8s\0` and a `runtime.Unknown` {typeMeta {apiVersion, kind} = 1, raw = 2, contentEncoding = 3, contentType = 4}. */
export function envelope(apiVersion: string, kind: string, raw: Uint8Array): Uint8Array {
  return concat(
    Uint8Array.of(0x6b, 0x38, 0x73, 0x00),
    pb.message(1, pb.string(1, apiVersion), pb.string(2, kind)),
    pb.bytes(2, raw),
    pb.string(3, ''),
    pb.string(4, ''),
  );
}
