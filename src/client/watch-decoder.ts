/**
 * Newline-delimited JSON as a watch streams it, from chunks the transport cuts anywhere (inside a
 * line, inside a character): every complete line becomes a value as soon as its newline arrives.
 */
import { StringDecoder } from 'node:string_decoder';

export class WatchDecoder<V> {
  /** Holds back the bytes of a character cut at a chunk's end until the rest arrives. */
  private readonly utf8 = new StringDecoder('utf8');
  /** The text after the last newline so far: the start of a line still arriving. */
  private partial = '';

  /** `onValue` gets each value in order; if it throws, the rest of that chunk is not decoded. */
  constructor(private readonly onValue: (value: V) => void) {}

  /** Decodes the lines `chunk` completes; throws on a complete line that is not JSON. */
  write(chunk: Buffer): void {
    const text = this.utf8.write(chunk);
    const end = text.lastIndexOf('\n');
    if (end < 0) {
      this.partial += text;
      return;
    }
    const lines = this.partial + text.slice(0, end);
    this.partial = text.slice(end + 1);
    this.emit(lines);
  }

  /** The stream ended: a last line without its newline still counts. */
  end(): void {
    const rest = this.partial + this.utf8.end();
    this.partial = '';
    this.emit(rest);
  }

  private emit(lines: string): void {
    for (const value of parseLines<V>(lines)) this.onValue(value);
  }
}

/**
 * The JSON values of newline-delimited `text`, parsed in one go: a newline never occurs inside JSON
 * text, so the lines make an array once newlines become commas. Blank lines break that; then each
 * non-blank line is parsed alone.
 */
function parseLines<V>(text: string): V[] {
  if (!text) return [];
  try {
    return JSON.parse(`[${text.replaceAll('\n', ',')}]`) as V[];
  } catch {
    return text
      .split('\n')
      .filter((line) => line.trim())
      .map((line) => JSON.parse(line) as V);
  }
}
