/**
 * The facts a `/version` answer carries about this build, as the reference's version.Info names them. There is no
 * link step to stamp them into, so they are read once from the checkout the sources run from.
 */
import { execFileSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { rfc3339 } from './util/time.ts';

export interface BuildFacts {
  gitCommit: string;
  /** `clean` or `dirty` (tracked files changed), as the reference's build stamps it; empty when unknown. */
  gitTreeState: string;
  /**
   * The committer date of that commit (the reproducible build date, as SOURCE_DATE_EPOCH gives the reference's
   * builds). Without a checkout, the reference's value for a build nobody stamped: the Unix epoch.
   */
  buildDate: string;
}

export const UNSTAMPED: BuildFacts = { gitCommit: '', gitTreeState: '', buildDate: '1970-01-01T00:00:00Z' };

const PACKAGE_ROOT = fileURLToPath(new URL('../', import.meta.url));

let facts: BuildFacts | undefined;

/** Read once per process; a package that is no git checkout of its own (an image, an npm install) is unstamped. */
export function buildFacts(): BuildFacts {
  facts ??= readGit(PACKAGE_ROOT) ?? UNSTAMPED;
  return facts;
}

function readGit(root: string): BuildFacts | undefined {
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', root, ...args], {
      encoding: 'utf8',
      timeout: 2_000,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  try {
    // Only the package's own checkout, not one of a project it happens to be installed inside.
    if (realpathSync(git('rev-parse', '--show-toplevel').trim()) !== realpathSync(root)) return undefined;
    const [commit, seconds] = git('log', '-1', '--format=%H %ct').trim().split(' ');
    const dirty = git('status', '--porcelain', '--untracked-files=no').trim() !== '';
    return {
      gitCommit: commit,
      gitTreeState: dirty ? 'dirty' : 'clean',
      buildDate: rfc3339(new Date(Number(seconds) * 1000)),
    };
  } catch {
    return undefined;
  }
}

const GO_OS: Record<string, string> = { win32: 'windows', sunos: 'solaris' };
const GO_ARCH: Record<string, string> = { x64: 'amd64', ia32: '386', mipsel: 'mipsle' };

/** The platform in Go's GOOS/GOARCH words (`linux/amd64`), as clients of the reference parse it. */
export function goPlatform(platform: string = process.platform, arch: string = process.arch): string {
  return `${GO_OS[platform] ?? platform}/${GO_ARCH[arch] ?? arch}`;
}

/** The reference's version.Info, in its field order (the emulation fields only where a version emulates one). */
export interface VersionInfo {
  major: string;
  minor: string;
  emulationMajor?: string;
  emulationMinor?: string;
  minCompatibilityMajor?: string;
  minCompatibilityMinor?: string;
  gitVersion: string;
  gitCommit: string;
  gitTreeState: string;
  buildDate: string;
  goVersion: string;
  compiler: string;
  platform: string;
}

/**
 * Version information for `/version` from a semver such as `0.1.0`; `emulation` (`1.34`) is the API level emulated,
 * with the minimum compatibility one minor below it, as the reference defaults it.
 */
export function versionInfo(version: string, emulation?: string): VersionInfo {
  const [major = '', minor = ''] = /^v?(\d+)\.(\d+)/.exec(version)?.slice(1) ?? [];
  const [emulationMajor, emulationMinor] = emulation?.split('.') ?? [];
  return {
    major,
    minor,
    ...(emulation && {
      emulationMajor,
      emulationMinor,
      minCompatibilityMajor: emulationMajor,
      minCompatibilityMinor: String(Number(emulationMinor) - 1),
    }),
    gitVersion: version.startsWith('v') ? version : `v${version}`,
    ...buildFacts(),
    // The runtime stands where the reference names its Go toolchain.
    goVersion: process.version,
    compiler: 'node',
    platform: goPlatform(),
  };
}
