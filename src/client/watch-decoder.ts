/**
 * Newline-delimited JSON as a watch streams it, from chunks the transport cuts anywhere (inside a
 * line, inside a character): every complete line becomes a value as soon as its newline arrives.
 */
import { StringDecoder } from 'node:string_decoder';

export class WatchDecoder<V> {
  /** Holds back the bytes of a character cut at a chunk's end until the rest arrives. */
  private readonly utf8 = new StringDecoder('utf8');
  /** The text after the last newline so far, in pieces: the start of a line still arriving. */
  private partial: string[] = [];

  /** `onValue` gets each value in order; if it throws, the rest of that chunk is not decoded. */
  constructor(private readonly onValue: (value: V) => void) {}

  /** Decodes the lines `chunk` completes; throws on a complete line that is not JSON. */
  write(chunk: Buffer): void {
    const text = this.utf8.write(chunk);
    let newline = text.indexOf('\n');
    if (newline < 0) {
      // Joined only once the line is complete: a large object arriving in many chunks is copied once.
      if (text) this.partial.push(text);
      return;
    }
    this.parse(this.partial.length ? this.partial.join('') + text.slice(0, newline) : text.slice(0, newline));
    this.partial = [];
    // Each further line parsed alone, as a slice of `text`: no copy besides the decoding.
    let start = newline + 1;
    for (newline = text.indexOf('\n', start); newline >= 0; newline = text.indexOf('\n', start)) {
      this.parse(text.slice(start, newline));
      start = newline + 1;
    }
    if (start < text.length) this.partial.push(text.slice(start));
  }

  /** The stream ended: a last line without its newline still counts. */
  end(): void {
    const rest = this.partial.join('') + this.utf8.end();
    this.partial = [];
    this.parse(rest);
  }

  private parse(line: string): void {
    if (line.trim()) this.onValue(JSON.parse(line) as V);
  }
}
