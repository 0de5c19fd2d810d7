/**
 * Checks of LevelDB's files against their own checksums, made before the store opens. LevelDB
 * replays its write-ahead log dropping the records whose checksum fails (classic-level does not
 * expose `paranoid_checks`, which would refuse them), and reads tables without verifying them:
 * either would lose or alter acknowledged writes in silence. Formats per LevelDB's doc/log_format.md
 * and doc/table_format.md: every log record and every table block carries a masked CRC-32C.
 *
 * Each check returns what is damaged, or undefined when the file is whole.
 */

const LOG_BLOCK = 32768;
const LOG_HEADER = 7;
/** Log record types: FULL, FIRST, MIDDLE, LAST. */
const MAX_RECORD_TYPE = 4;
const FOOTER = 48;
const TABLE_MAGIC = Buffer.from([0x57, 0xfb, 0x80, 0x8b, 0x24, 0x75, 0x47, 0xdb]);
const BLOCK_TRAILER = 5;
const NO_COMPRESSION = 0;
const SNAPPY = 1;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32C (Castagnoli) of `data`. */
export function crc32c(data: Uint8Array): number {
  let crc = 0xffffffff;
  for (let i = 0; i < data.length; i++) crc = CRC_TABLE[(crc ^ data[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** LevelDB stores CRCs masked (rotated and offset), so that a CRC of data holding CRCs stays useful. */
export function maskCrc(crc: number): number {
  return (((crc >>> 15) | (crc << 17)) + 0xa282ead8) >>> 0;
}

/**
 * A log file (`*.log`, `MANIFEST-*`): every record's checksum. A record cut short by the end of the
 * file is a write torn by a crash before it was acknowledged (LevelDB syncs before it answers), as
 * LevelDB treats it; a record that cannot fit its 32 KiB block was never written so.
 */
export function checkLogFile(data: Buffer): string | undefined {
  for (let block = 0; block < data.length; block += LOG_BLOCK) {
    const end = Math.min(block + LOG_BLOCK, data.length);
    let at = block;
    while (end - at >= LOG_HEADER) {
      const length = data.readUInt16LE(at + 4);
      const type = data[at + 6];
      // Zeroes where a writer preallocated: LevelDB skips the rest of the block, so it must hold nothing else.
      if (type === 0 && length === 0) {
        if (data.subarray(at, end).some((byte) => byte !== 0)) return `records after zeroes at byte ${at}`;
        break;
      }
      if (at + LOG_HEADER + length > block + LOG_BLOCK || type > MAX_RECORD_TYPE) {
        return `bad record header at byte ${at}`;
      }
      if (at + LOG_HEADER + length > data.length) return undefined;
      const expected = maskCrc(crc32c(data.subarray(at + 6, at + LOG_HEADER + length)));
      if (expected !== data.readUInt32LE(at)) return `checksum mismatch in the record at byte ${at}`;
      at += LOG_HEADER + length;
    }
    // Fewer than a header's bytes left in a full block are padding; at the end of the file, a torn header.
  }
  return undefined;
}

/** A table file (`*.ldb`, `*.sst`): its footer, and the checksum of every block it points to. */
export function checkTableFile(data: Buffer): string | undefined {
  try {
    if (data.length < FOOTER || !data.subarray(data.length - 8).equals(TABLE_MAGIC)) return 'bad table footer';
    const footer = new Reader(data.subarray(data.length - FOOTER));
    const metaindex = footer.handle();
    const index = footer.handle();
    const handles = [metaindex, index];
    // The index names the data blocks, the metaindex the filter block.
    for (const parent of [index, metaindex]) {
      for (const value of blockValues(readBlock(data, parent))) handles.push(new Reader(value).handle());
    }
    for (const handle of handles) readBlock(data, handle);
    return undefined;
  } catch (err) {
    if (err instanceof DamagedFile) return err.message;
    throw err;
  }
}

/** What CURRENT must hold: the name of the manifest, and a newline. */
export function manifestNamed(current: string): string | undefined {
  return /^MANIFEST-\d+\n$/.test(current) ? current.trim() : undefined;
}

class DamagedFile extends Error {}

interface Handle {
  offset: number;
  size: number;
}

/** Reads the varints of LevelDB's encodings (block handles, block entries). */
class Reader {
  at = 0;
  constructor(private readonly data: Buffer) {}

  varint(): number {
    let value = 0;
    for (let shift = 0; shift < 64; shift += 7) {
      if (this.at >= this.data.length) throw new DamagedFile('a varint runs past its block');
      const byte = this.data[this.at++];
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
    throw new DamagedFile('a varint is too long');
  }

  handle(): Handle {
    return { offset: this.varint(), size: this.varint() };
  }

  bytes(n: number): Buffer {
    if (this.at + n > this.data.length) throw new DamagedFile('an entry runs past its block');
    this.at += n;
    return this.data.subarray(this.at - n, this.at);
  }
}

/** A block's contents, its checksum verified, uncompressed. */
function readBlock(data: Buffer, { offset, size }: Handle): Buffer {
  if (offset + size + BLOCK_TRAILER > data.length - FOOTER)
    throw new DamagedFile(`a block handle points outside the file`);
  const contents = data.subarray(offset, offset + size);
  const type = data[offset + size];
  const expected = maskCrc(crc32c(data.subarray(offset, offset + size + 1)));
  if (expected !== data.readUInt32LE(offset + size + 1)) {
    throw new DamagedFile(`checksum mismatch in the block at byte ${offset}`);
  }
  if (type === NO_COMPRESSION) return contents;
  if (type === SNAPPY) return snappyUncompress(contents);
  throw new DamagedFile(`unknown compression ${type} of the block at byte ${offset}`);
}

/** The values of a block's entries (keys are prefix-compressed; only the values are needed here). */
function blockValues(block: Buffer): Buffer[] {
  if (block.length < 4) throw new DamagedFile('a block is too short');
  const restarts = block.readUInt32LE(block.length - 4);
  const end = block.length - 4 - 4 * restarts;
  if (end < 0) throw new DamagedFile('bad restart count in a block');
  const entries = new Reader(block.subarray(0, end));
  const values: Buffer[] = [];
  while (entries.at < end) {
    entries.varint();
    const unshared = entries.varint();
    const valueLength = entries.varint();
    entries.bytes(unshared);
    values.push(entries.bytes(valueLength));
  }
  return values;
}

/** Snappy's block format (format_description.txt): a length, then literals and back-references. */
export function snappyUncompress(input: Buffer): Buffer {
  const reader = new Reader(input);
  const out = Buffer.alloc(reader.varint());
  let written = 0;
  while (reader.at < input.length) {
    const tag = input[reader.at++];
    let length: number;
    let offset = 0;
    if ((tag & 3) === 0) {
      length = tag >>> 2;
      if (length >= 60) {
        const extra = reader.bytes(length - 59);
        length = extra.readUIntLE(0, extra.length);
      }
      length += 1;
      const literal = reader.bytes(length);
      if (written + length > out.length) throw new DamagedFile('snappy data longer than announced');
      literal.copy(out, written);
      written += length;
      continue;
    }
    if ((tag & 3) === 1) {
      length = 4 + ((tag >>> 2) & 7);
      offset = ((tag >>> 5) << 8) | reader.bytes(1)[0];
    } else {
      length = 1 + (tag >>> 2);
      const extra = reader.bytes((tag & 3) === 2 ? 2 : 4);
      offset = extra.readUIntLE(0, extra.length);
    }
    if (offset === 0 || offset > written || written + length > out.length) {
      throw new DamagedFile('bad snappy back-reference');
    }
    // Byte by byte: a copy may overlap what it writes.
    for (let i = 0; i < length; i++, written++) out[written] = out[written - offset];
  }
  if (written !== out.length) throw new DamagedFile('snappy data shorter than announced');
  return out;
}
