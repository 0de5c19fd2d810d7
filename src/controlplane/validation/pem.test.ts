import { describe, expect, it } from 'vitest';
import { decodeAllPem, decodePem } from './pem.ts';

const body = Buffer.from('hello').toString('base64');

describe('PEM decoding as the reference does it', () => {
  it('finds a block after leading text and returns the rest', () => {
    const r = decodePem(`junk\n-----BEGIN THING-----\n${body}\n-----END THING-----\ntrailer`);
    expect(r?.block.type).toBe('THING');
    expect(r?.block.bytes.toString()).toBe('hello');
    expect(r?.rest).toBe('trailer');
  });

  it('reads headers', () => {
    const r = decodePem(`-----BEGIN THING-----\nProc-Type: 4,ENCRYPTED\n\n${body}\n-----END THING-----\n`);
    expect(r?.block.headers).toEqual({ 'Proc-Type': '4,ENCRYPTED' });
  });

  it('skips a block with a mismatched END line and finds the next one', () => {
    const bad = `-----BEGIN A-----\n${body}\n-----END B-----\n`;
    const good = `-----BEGIN C-----\n${body}\n-----END C-----\n`;
    expect(decodeAllPem(bad + good).map((b) => b.type)).toEqual(['C']);
  });

  it('skips a block whose body is not base64', () => {
    expect(decodePem('-----BEGIN A-----\n!!!\n-----END A-----\n')).toBeUndefined();
  });

  it('answers nothing for text without blocks', () => {
    expect(decodePem('just text')).toBeUndefined();
  });
});
