import { describe, expect, it } from 'vitest';
import { type Listener, portClash } from './ports.ts';

const api = (host: string, port: number): Listener => ({ host, port, flag: 'embedded-secure-port' });
const diag = (host: string, port: number): Listener => ({ host, port, flag: 'secure-port' });

describe('portClash: two of our own listeners on one port', () => {
  it.each([
    [[api('127.0.0.1', 6443), diag('0.0.0.0', 10257)], undefined],
    [[api('127.0.0.1', 0), diag('127.0.0.1', 0)], undefined],
    [[api('127.0.0.1', 6443), diag('127.0.0.2', 6443)], undefined],
    [
      [api('127.0.0.1', 6443), diag('127.0.0.1', 6443)],
      '--embedded-secure-port and --secure-port are both 6443: choose another port for one of them',
    ],
    [
      [api('127.0.0.1', 7000), diag('0.0.0.0', 7000)],
      '--embedded-secure-port and --secure-port are both 7000: choose another port for one of them',
    ],
    [
      [api('::', 7000), diag('127.0.0.1', 7000)],
      '--embedded-secure-port and --secure-port are both 7000: choose another port for one of them',
    ],
  ])('%j → %s', (listeners, expected) => {
    expect(portClash(listeners)).toBe(expected);
  });
});
