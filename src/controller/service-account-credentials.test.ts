import { describe, expect, it } from 'vitest';
import { type TokenTimes, tokenTimes, tokenUse } from './service-account-credentials.ts';

const MIN = 60_000;
const WALL = Date.parse('2026-11-28T10:00:00Z');
const at = (ms: number) => new Date(WALL + ms).toISOString();

describe('tokenTimes', () => {
  // [what, expirationTimestamp, monotonic now, expected renewAt, expected expiresAt]
  const table: [string, string, number, number, number][] = [
    ['one hour: renewed after 48 min', at(60 * MIN), 0, 48 * MIN, 60 * MIN],
    ['counted from the monotonic now', at(60 * MIN), 5_000, 5_000 + 48 * MIN, 5_000 + 60 * MIN],
    ['two hours: after 96 min', at(120 * MIN), 0, 96 * MIN, 120 * MIN],
    ['ten minutes exactly: after 8 min', at(10 * MIN), 0, 8 * MIN, 10 * MIN],
    ['a shorter lifetime (clock skew) counts as ten minutes', at(2 * MIN), 0, 8 * MIN, 10 * MIN],
    ['already past (clock skew) counts as ten minutes', at(-30 * MIN), 0, 8 * MIN, 10 * MIN],
    ['an unreadable timestamp counts as ten minutes', 'soon', 0, 8 * MIN, 10 * MIN],
  ];
  it.each(table)('%s', (_what, expiration, now, renewAtMs, expiresAtMs) => {
    expect(tokenTimes(expiration, WALL, now)).toEqual({ renewAtMs, expiresAtMs });
  });
});

describe('tokenUse', () => {
  const held: TokenTimes = { renewAtMs: 48 * MIN, expiresAtMs: 60 * MIN };
  const table: [string, TokenTimes | undefined, number, ReturnType<typeof tokenUse>][] = [
    ['no token yet: wait for one', undefined, 0, 'wait'],
    ['fresh: send it', held, 0, 'use'],
    ['just before renewal: send it', held, 48 * MIN - 1, 'use'],
    ['renewal due: send it while renewing', held, 48 * MIN, 'renew'],
    ['just before expiry: still sent while renewing', held, 60 * MIN - 1, 'renew'],
    ['expired: wait for a new one', held, 60 * MIN, 'wait'],
  ];
  it.each(table)('%s', (_what, token, now, expected) => {
    expect(tokenUse(token, now)).toBe(expected);
  });
});
