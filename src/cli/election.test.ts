import { describe, expect, it } from 'vitest';
import { VERSION } from '../version.ts';
import { electionFlags, electionSettings } from './election.ts';
import { Flags, parseFlags } from './flags.ts';

const settings = (...argv: string[]) => {
  const specs = electionFlags();
  return electionSettings(new Flags(specs, parseFlags(specs, argv)));
};

describe('coordinated election flags', () => {
  it('defaults: the build version, emulating its own major.minor, OldestEmulationVersion, a 30 min GC', () => {
    const [major, minor] = VERSION.split('.');
    expect(settings()).toEqual({
      candidate: {
        binaryVersion: VERSION,
        emulationVersion: `${major}.${minor}.0`,
        strategy: 'OldestEmulationVersion',
      },
      gcPeriodMs: 30 * 60_000,
    });
  });

  it('takes a binary version, an older emulated major.minor, a qualified strategy and a GC period', () => {
    expect(
      settings(
        '--binary-version=1.3.2',
        '--emulated-version=1.2',
        '--leader-elect-strategy=example.com/mine',
        '--leasecandidate-gc-period=3s',
      ),
    ).toEqual({
      candidate: { binaryVersion: '1.3.2', emulationVersion: '1.2.0', strategy: 'example.com/mine' },
      gcPeriodMs: 3000,
    });
    expect(settings('--binary-version=1.3.0-rc.1').candidate.emulationVersion).toBe('1.3.0');
  });

  it('sharding is off by default; on, 16 shards unless --shards says otherwise', () => {
    expect(settings().shards).toBeUndefined();
    expect(settings('--shards=4').shards).toBeUndefined();
    expect(settings('--sharding').shards).toBe(16);
    expect(settings('--sharding', '--shards=4').shards).toBe(4);
  });

  it.each([
    [
      ['--binary-version=v1.2.3'],
      '"--binary-version" flag: must be a semantic version such as 1.2.3, without a leading v',
    ],
    [['--binary-version=1.2'], '"--binary-version" flag: must be a semantic version'],
    [['--emulated-version=1.2.3'], '"--emulated-version" flag: must be major.minor, such as 1.33'],
    [['--binary-version=1.2.0', '--emulated-version=1.3'], 'must not be newer than the binary version 1.2.0'],
    [
      ['--leader-elect-strategy=Newest'],
      '"--leader-elect-strategy" flag: strategy.strategy: Unsupported value: "Newest"',
    ],
    [['--leasecandidate-gc-period=0'], '"--leasecandidate-gc-period" flag: must be positive'],
    [['--sharding', '--shards=0'], '"--shards" flag: must be between 1 and 256'],
    [['--shards=257'], '"--shards" flag: must be between 1 and 256'],
  ])('%j is refused naming the flag and the rule', (argv, message) => {
    expect(() => settings(...argv)).toThrow(message);
  });
});
