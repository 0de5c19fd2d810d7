import { describe, expect, it } from 'vitest';
import { WatchDecoder } from './watch-decoder.ts';

/** Feeds `chunks` to a decoder, then ends it; returns the values in order. */
function decode(chunks: Buffer[]): unknown[] {
  const values: unknown[] = [];
  const decoder = new WatchDecoder((v) => values.push(v));
  for (const chunk of chunks) decoder.write(chunk);
  decoder.end();
  return values;
}

const events = [
  { type: 'ADDED', object: { metadata: { name: 'café', namespace: 'ns' }, data: { k: '日本語 🚀' } } },
  { type: 'MODIFIED', object: { metadata: { name: 'naïve' }, data: { emoji: '👩‍👩‍👧', quote: 'a "b"\n\\c' } } },
  {
    type: 'BOOKMARK',
    object: {
      kind: 'ConfigMap',
      metadata: { resourceVersion: '7', annotations: { 'orch.io/initial-events-end': 'true' } },
    },
  },
  { type: 'DELETED', object: { metadata: { name: 'x' } } },
];
const stream = Buffer.from(events.map((e) => `${JSON.stringify(e)}\n`).join(''));

describe('WatchDecoder', () => {
  it('decodes the same events whichever byte the stream is cut at, even inside a character', () => {
    for (let cut = 0; cut <= stream.length; cut++) {
      expect(decode([stream.subarray(0, cut), stream.subarray(cut)]), `cut at byte ${cut}`).toEqual(events);
    }
  });

  it('decodes the same events from chunks of every size down to one byte', () => {
    for (const size of [1, 2, 3, 5, 7, 64]) {
      const chunks: Buffer[] = [];
      for (let i = 0; i < stream.length; i += size) chunks.push(stream.subarray(i, i + size));
      expect(decode(chunks), `chunks of ${size} bytes`).toEqual(events);
    }
  });

  it('skips blank lines and takes a last line that has no newline', () => {
    const text = `\n${JSON.stringify(events[0])}\n\n  \n${JSON.stringify(events[3])}`;
    expect(decode([Buffer.from(text)])).toEqual([events[0], events[3]]);
  });

  it('hands out each event as soon as its line is complete, before the stream ends', () => {
    const values: unknown[] = [];
    const decoder = new WatchDecoder((v) => values.push(v));
    const line = Buffer.from(`${JSON.stringify(events[2])}\n`);
    decoder.write(line.subarray(0, 10));
    expect(values).toEqual([]);
    decoder.write(line.subarray(10));
    expect(values).toEqual([events[2]]);
  });

  it('decodes an object larger than many chunks', () => {
    const big = { type: 'ADDED', object: { metadata: { name: 'big' }, data: { blob: 'é'.repeat(3 << 20) } } };
    const bytes = Buffer.from(`${JSON.stringify(big)}\n${JSON.stringify(events[3])}\n`);
    const chunks: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 16_384) chunks.push(bytes.subarray(i, i + 16_384));
    expect(decode(chunks)).toEqual([big, events[3]]);
  });

  it('throws on a line that is not JSON, after the events before it', () => {
    const values: unknown[] = [];
    const decoder = new WatchDecoder((v) => values.push(v));
    expect(() => decoder.write(Buffer.from(`${JSON.stringify(events[0])}\n{"type":"ADD`))).not.toThrow();
    expect(() => decoder.write(Buffer.from('ED",}\n'))).toThrow(SyntaxError);
    expect(values).toEqual([events[0]]);
  });

  it('stops at an event its consumer rejects, with the consumer error', () => {
    const seen: unknown[] = [];
    const decoder = new WatchDecoder<{ type: string }>((e) => {
      if (e.type === 'BOOKMARK') throw new Error('refused');
      seen.push(e);
    });
    expect(() => decoder.write(stream)).toThrow('refused');
    expect(seen).toEqual(events.slice(0, 2));
  });
});
