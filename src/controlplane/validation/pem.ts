/**
 * PEM decoding with the reference's rules (RFC 7468 as Go reads it): text around blocks is skipped,
 * `Key: value` lines after the BEGIN line are headers, a block whose END line or base64 body is malformed
 * is skipped and the search goes on after its BEGIN line.
 */

export interface PemBlock {
  type: string;
  headers: Record<string, string>;
  bytes: Buffer;
}

const PEM_START = '\n-----BEGIN ';
const PEM_END = '\n-----END ';
const PEM_END_OF_LINE = '-----';

/** The line up to `\n` (trailing spaces, tabs and `\r` removed) and what follows it. */
function getLine(data: string): [string, string] {
  const i = data.indexOf('\n');
  const line = i < 0 ? data : data.slice(0, i);
  const rest = i < 0 ? '' : data.slice(i + 1);
  return [line.replace(/[ \t\r]+$/, ''), rest];
}

const BASE64_STRICT = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function decodeBase64(text: string): Buffer | undefined {
  const compact = text.replace(/[\r\n]/g, '');
  return BASE64_STRICT.test(compact) ? Buffer.from(compact, 'base64') : undefined;
}

/** The first PEM block of `data` and the text after it, or `undefined` when there is none. */
export function decodePem(data: string): { block: PemBlock; rest: string } | undefined {
  let rest = data;
  for (;;) {
    if (rest.startsWith(PEM_START.slice(1))) {
      rest = rest.slice(PEM_START.length - 1);
    } else {
      const i = rest.indexOf(PEM_START);
      if (i < 0) return undefined;
      rest = rest.slice(i + PEM_START.length);
    }
    let typeLine: string;
    [typeLine, rest] = getLine(rest);
    if (!typeLine.endsWith(PEM_END_OF_LINE)) continue;
    typeLine = typeLine.slice(0, typeLine.length - PEM_END_OF_LINE.length);

    const headers: Record<string, string> = {};
    let headerCount = 0;
    let truncated = false;
    for (;;) {
      if (rest.length === 0) {
        truncated = true;
        break;
      }
      const [line, next] = getLine(rest);
      const colon = line.indexOf(':');
      if (colon < 0) break;
      headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
      headerCount++;
      rest = next;
    }
    if (truncated) return undefined;

    let endIndex: number;
    let endTrailerIndex: number;
    if (headerCount === 0 && rest.startsWith(PEM_END.slice(1))) {
      endIndex = 0;
      endTrailerIndex = PEM_END.length - 1;
    } else {
      endIndex = rest.indexOf(PEM_END);
      endTrailerIndex = endIndex + PEM_END.length;
    }
    if (endIndex < 0) continue;

    let endTrailer = rest.slice(endTrailerIndex);
    const endTrailerLen = typeLine.length + PEM_END_OF_LINE.length;
    if (endTrailer.length < endTrailerLen) continue;
    const restOfEndLine = endTrailer.slice(endTrailerLen);
    endTrailer = endTrailer.slice(0, endTrailerLen);
    if (!endTrailer.startsWith(typeLine) || !endTrailer.endsWith(PEM_END_OF_LINE)) continue;
    if (getLine(restOfEndLine)[0].length !== 0) continue;

    const bytes = decodeBase64(rest.slice(0, endIndex).replace(/[ \t]/g, ''));
    if (!bytes) continue;
    const after = getLine(rest.slice(endIndex + PEM_END.length - 1))[1];
    return { block: { type: typeLine, headers, bytes }, rest: after };
  }
}

/** Every block of `data`, in order. */
export function decodeAllPem(data: string): PemBlock[] {
  const blocks: PemBlock[] = [];
  let rest = data;
  for (;;) {
    const next = decodePem(rest);
    if (!next) return blocks;
    blocks.push(next.block);
    rest = next.rest;
  }
}
