/**
 * Flags of coordinated leader election (gate `CoordinatedLeaderElection`): what this replica's LeaseCandidate
 * announces, in the reference's shape (versions as finalized semver such as `1.33.0`), and the LeaseCandidate
 * garbage collector's period.
 */
import semver from 'semver';
import { OLDEST_EMULATION_VERSION, validateCoordinatedLeaseStrategy } from '../api/lease-strategy.ts';
import { SECTIONS } from '../config/schema.ts';
import { VERSION } from '../version.ts';
import { FlagError, type FlagSpec, type Flags } from './flags.ts';

const GC_PERIOD = '30m';
export const DEFAULT_SHARDS = 16;
const MAX_SHARDS = 256;

export function electionFlags(): FlagSpec[] {
  const section = SECTIONS.election;
  return [
    {
      name: 'binary-version',
      type: 'string',
      section,
      default: VERSION,
      usage:
        "The binaryVersion of this replica's LeaseCandidate: the build's version; set it only to rehearse upgrades.",
    },
    {
      name: 'emulated-version',
      type: 'string',
      section,
      usage:
        "The version (major.minor) this replica emulates, announced as its LeaseCandidate's emulationVersion; at most the binary version (default its major.minor).",
    },
    {
      name: 'leader-elect-strategy',
      type: 'string',
      section,
      default: OLDEST_EMULATION_VERSION,
      usage: `How the election controller picks among candidates: ${OLDEST_EMULATION_VERSION}, or a domain-qualified name that another controller implements.`,
    },
    {
      name: 'sharding',
      type: 'bool',
      section,
      usage:
        'Run every replica active: the CSR, StatefulSet and disruption controllers split their objects by shard, each shard held through its own Lease; the other controllers stay on the leader Lease.',
    },
    {
      name: 'shards',
      type: 'int',
      section,
      default: String(DEFAULT_SHARDS),
      usage: `With --sharding, how many shards the hash space is cut into (1 to ${MAX_SHARDS}); every replica must agree.`,
    },
    {
      name: 'leasecandidate-gc-period',
      type: 'duration',
      section,
      default: GC_PERIOD,
      usage: 'Interval between passes of the LeaseCandidate garbage collector.',
    },
  ];
}

export interface ElectionSettings {
  candidate: { binaryVersion: string; emulationVersion: string; strategy: string };
  gcPeriodMs: number;
  /** With `--sharding`, the shard count; undefined when off. */
  shards?: number;
}

/** The settings from the flags; a bad value is a FlagError naming the flag and the rule. */
export function electionSettings(flags: Flags): ElectionSettings {
  const bad = (flag: string, value: string, why: string) =>
    new FlagError(`invalid argument "${value}" for "--${flag}" flag: ${why}`);
  const binaryVersion = flags.string('binary-version') ?? VERSION;
  const binary = semver.valid(binaryVersion) === binaryVersion ? semver.parse(binaryVersion) : null;
  if (!binary)
    throw bad('binary-version', binaryVersion, 'must be a semantic version such as 1.2.3, without a leading v');
  const emulated = flags.string('emulated-version') || `${binary.major}.${binary.minor}`;
  const majorMinor = /^(0|[1-9]\d*)\.(0|[1-9]\d*)$/.exec(emulated);
  if (!majorMinor) throw bad('emulated-version', emulated, 'must be major.minor, such as 1.33');
  const emulationVersion = `${majorMinor[1]}.${majorMinor[2]}.0`;
  if (semver.gt(emulationVersion, `${binary.major}.${binary.minor}.0`)) {
    throw bad('emulated-version', emulated, `must not be newer than the binary version ${binaryVersion}`);
  }
  const strategy = flags.string('leader-elect-strategy') ?? OLDEST_EMULATION_VERSION;
  const problems = validateCoordinatedLeaseStrategy(strategy, 'strategy');
  if (problems.length) throw bad('leader-elect-strategy', strategy, problems.map((p) => p.message).join('; '));
  const gcPeriodMs = flags.durationMs('leasecandidate-gc-period') ?? 0;
  if (gcPeriodMs <= 0)
    throw bad('leasecandidate-gc-period', flags.string('leasecandidate-gc-period') ?? '', 'must be positive');
  const shards = flags.int('shards') ?? DEFAULT_SHARDS;
  if (shards < 1 || shards > MAX_SHARDS) {
    throw bad('shards', String(shards), `must be between 1 and ${MAX_SHARDS}`);
  }
  return {
    candidate: { binaryVersion, emulationVersion, strategy },
    gcPeriodMs,
    shards: flags.bool('sharding') ? shards : undefined,
  };
}
