import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { buildFacts, goPlatform, versionInfo } from './build-info.ts';

describe('goPlatform', () => {
  it.each([
    ['linux', 'x64', 'linux/amd64'],
    ['linux', 'arm64', 'linux/arm64'],
    ['linux', 'ia32', 'linux/386'],
    ['linux', 's390x', 'linux/s390x'],
    ['darwin', 'arm64', 'darwin/arm64'],
    ['win32', 'x64', 'windows/amd64'],
  ])('names %s/%s as Go does: %s', (platform, arch, expected) => {
    expect(goPlatform(platform, arch)).toBe(expected);
  });
});

describe('versionInfo', () => {
  it('carries every field of the reference, in its order', () => {
    const info = versionInfo('v1.34.0+embedded.0.1.0', '1.34');
    expect(Object.keys(info)).toEqual([
      'major',
      'minor',
      'emulationMajor',
      'emulationMinor',
      'minCompatibilityMajor',
      'minCompatibilityMinor',
      'gitVersion',
      'gitCommit',
      'gitTreeState',
      'buildDate',
      'goVersion',
      'compiler',
      'platform',
    ]);
    expect(info).toMatchObject({
      major: '1',
      minor: '34',
      emulationMajor: '1',
      emulationMinor: '34',
      minCompatibilityMajor: '1',
      minCompatibilityMinor: '33',
      gitVersion: 'v1.34.0+embedded.0.1.0',
      goVersion: process.version,
      compiler: 'node',
    });
  });

  it('has no emulation fields where none is emulated', () => {
    expect(versionInfo('0.1.0')).not.toHaveProperty('emulationMajor');
  });
});

describe('buildFacts', () => {
  it("are the checkout's commit, tree state and commit date", () => {
    const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8' }).trim();
    const facts = buildFacts();
    expect(facts.gitCommit).toBe(git('rev-parse', 'HEAD'));
    expect(['clean', 'dirty']).toContain(facts.gitTreeState);
    expect(facts.buildDate).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Date.parse(facts.buildDate) / 1000).toBe(Number(git('log', '-1', '--format=%ct')));
  });
});
