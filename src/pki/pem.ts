/**
 * The textual encoding of RFC 7468 ("PEM"): finds the blocks in a text, ignoring any explanatory text around them,
 * and encodes DER back into a block. Blocks may carry RFC 1421 style `Key: value` headers, ended by a blank line.
 */

export interface PemBlock {
  /** The label of the BEGIN/END lines, such as `CERTIFICATE` or `PRIVATE KEY`. */
  type: string;
  headers: Record<string, string>;
  der: Uint8Array;
}

// RFC 7468 §3: a label is printable ASCII except '-', with single spaces or hyphens between characters.
const LABEL_CHAR = String.raw`[\x21-\x2c\x2e-\x7e]`;
const BEGIN_LINE = new RegExp(`^-----BEGIN ((?:${LABEL_CHAR}(?:[- ]?${LABEL_CHAR})*)?)-----$`);
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Returns every PEM block in `text`, in order. Text before, between and after the blocks is ignored. */
export function splitPemBlocks(text: string): PemBlock[] {
  const lines = text.split(/\r\n|\r|\n/).map((line) => line.trim());
  const blocks: PemBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const type = BEGIN_LINE.exec(lines[i])?.[1];
    if (type === undefined) continue;
    const end = lines.indexOf(`-----END ${type}-----`, i + 1);
    if (end < 0) throw new Error(`PEM block "${type}" has no END line`);
    blocks.push(parseBlock(type, lines.slice(i + 1, end)));
    i = end;
  }
  return blocks;
}

function parseBlock(type: string, lines: string[]): PemBlock {
  const headers: Record<string, string> = {};
  let body = lines;
  // Base64 has no ':', so a first line with one starts the headers.
  if (lines[0]?.includes(':')) {
    const blank = lines.indexOf('');
    if (blank < 0) throw new Error(`PEM block "${type}": headers are not followed by a blank line`);
    for (const line of lines.slice(0, blank)) {
      const colon = line.indexOf(':');
      if (colon <= 0) throw new Error(`PEM block "${type}": invalid header line "${line}"`);
      headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
    }
    body = lines.slice(blank + 1);
  }
  const base64 = body.join('');
  if (!BASE64.test(base64)) throw new Error(`PEM block "${type}" contains invalid base64`);
  return { type, headers, der: Buffer.from(base64, 'base64') };
}

/** Returns the DER of the only block in `pem` (of the given type, when set); throws unless there is exactly one. */
export function pemToDer(pem: string, type?: string): Uint8Array {
  const blocks = splitPemBlocks(pem).filter((block) => type === undefined || block.type === type);
  if (blocks.length !== 1) {
    throw new Error(`expected exactly one ${type ?? 'PEM'} block, found ${blocks.length}`);
  }
  return blocks[0].der;
}

/** Encodes DER as a PEM block with 64-character lines and a final newline. */
export function derToPem(der: Uint8Array | ArrayBuffer, type: string): string {
  // A view of the bytes, not a copy.
  const bytes = der instanceof ArrayBuffer ? Buffer.from(der) : Buffer.from(der.buffer, der.byteOffset, der.byteLength);
  const base64 = bytes.toString('base64');
  let pem = `-----BEGIN ${type}-----\n`;
  for (let at = 0; at < base64.length; at += 64) pem += `${base64.slice(at, at + 64)}\n`;
  return `${pem}-----END ${type}-----\n`;
}
