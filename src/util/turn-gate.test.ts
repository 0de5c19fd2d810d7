import { setImmediate as afterThisTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { TurnGate } from './turn-gate.ts';

describe('TurnGate', () => {
  it('lets one caller through per turn of the event loop', async () => {
    const gate = new TurnGate();
    expect([gate.first(), gate.first(), gate.first()]).toEqual([true, false, false]);
    await Promise.resolve();
    expect(gate.first()).toBe(false);
    await afterThisTurn();
    expect([gate.first(), gate.first()]).toEqual([true, false]);
  });

  it('keeps gates apart', () => {
    const a = new TurnGate();
    const b = new TurnGate();
    expect([a.first(), b.first(), a.first(), b.first()]).toEqual([true, true, false, false]);
  });
});
