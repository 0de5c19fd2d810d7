/**
 * `npm run conformance:diff` as a test: the corpus replayed against the embedded plane and a real kube-apiserver
 * must show no difference that tools/conformance/differences.yaml does not write down. Skipped, like the other
 * real-cluster suites, when the binaries are not built.
 */
import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/daemons.ts';
import { hasClusterBinaries } from './local-cluster.ts';

describe.skipIf(!hasClusterBinaries)('the embedded plane held to kube-apiserver', () => {
  it('differs only where differences.yaml says why', async () => {
    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', 'tools/conformance/run.ts'],
        { cwd: ROOT, timeout: 280_000, maxBuffer: 64 * 1024 * 1024 },
        (error, out) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout: out }),
      );
    });
    const lines = stdout.trim().split('\n');
    // A `✗` line and the indented lines under it: a difference nobody wrote down.
    let inside = false;
    const unexplained = lines.filter((line) => {
      inside = line.startsWith('✗') || (inside && line.startsWith('    '));
      return inside;
    });
    // The unexplained blocks are the message: each names the request and its differences.
    expect(unexplained.join('\n')).toBe('');
    expect(lines.at(-1)).toMatch(/^\d+ requests: \d+ identical, \d+ differ \(\d+ written down\)$/);
    expect(code).toBe(0);
  }, 300_000);
});
