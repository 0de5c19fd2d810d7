/**
 * `npm run k8s:build`: builds the pinned Kubernetes release's kube-apiserver, kube-controller-manager,
 * kube-scheduler and kubectl, with kwok and etcd, from the Go module proxy into the cache of `binaries.ts`.
 * (Debian's etcd 3.4 runs this kube-apiserver, but without the progress requests its watch-list needs: kwok's
 * informers then never sync.)
 *
 * Idempotent: a binary whose stamp (the hash of its module's go.mod and go.sum and of the build flags) matches
 * is not rebuilt. Each binary is linked to a temporary name and renamed into place, so a failed or interrupted
 * build leaves no half-written binary. Names given as arguments build only those binaries. The last line
 * printed is the bin directory.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { k8sBinDir, kubernetesRelease, TOOLS_DIR } from './binaries.ts';

interface Binary {
  name: string;
  /** The folder under tools/ of the module that pins it. */
  module: string;
  pkg: string;
  ldflags: string[];
}

const BUILD_TIMEOUT_MS = 60 * 60_000;

function versionFlags(release: string): string[] {
  const [major, minor] = release.slice(1).split('.');
  // What Kubernetes' own build stamps, so that `version` and discovery report the release rather than v0.0.0.
  const fields = { gitVersion: release, gitMajor: major, gitMinor: minor, gitTreeState: 'clean' };
  return ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].flatMap((pkg) =>
    Object.entries(fields).map(([field, value]) => `-X ${pkg}.${field}=${value}`),
  );
}

function binaries(release: string): Binary[] {
  const kubernetes = (name: string): Binary => ({
    name,
    module: 'k8s',
    pkg: `k8s.io/kubernetes/cmd/${name}`,
    ldflags: versionFlags(release),
  });
  return [
    kubernetes('kubectl'),
    kubernetes('kube-apiserver'),
    kubernetes('kube-controller-manager'),
    kubernetes('kube-scheduler'),
    { name: 'kwok', module: 'kwok', pkg: 'sigs.k8s.io/kwok/cmd/kwok', ldflags: [] },
    { name: 'etcd', module: 'etcd', pkg: 'go.etcd.io/etcd/server/v3', ldflags: [] },
  ];
}

function stampOf(binary: Binary): string {
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'go.sum']) hash.update(readFileSync(join(TOOLS_DIR, binary.module, file)));
  hash.update(binary.pkg).update(binary.ldflags.join(' '));
  return hash.digest('hex');
}

/** Runs `go build`; resolves with go's error output's first meaningful line on failure. */
function goBuild(binary: Binary, output: string): Promise<string | undefined> {
  const args = ['build', '-trimpath', '-buildvcs=false', '-o', output];
  if (binary.ldflags.length) args.push(`-ldflags=-s -w ${binary.ldflags.join(' ')}`);
  args.push(binary.pkg);
  return new Promise((resolve) => {
    const child = spawn('go', args, {
      cwd: join(TOOLS_DIR, binary.module),
      env: { ...process.env, CGO_ENABLED: '0' },
      stdio: ['ignore', 'inherit', 'pipe'],
      timeout: BUILD_TIMEOUT_MS,
    });
    const errors: string[] = [];
    let pending = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (line.startsWith('go: downloading ')) process.stderr.write(`  ${line}\n`);
        else if (line.trim()) errors.push(line);
      }
    });
    child.on('error', (err) => resolve(err.message));
    child.on('close', (code, signal) => {
      if (pending.trim()) errors.push(pending);
      if (code === 0) resolve(undefined);
      else resolve(errors.find((line) => !line.startsWith('#')) ?? `go build exited with ${code ?? signal}`);
    });
  });
}

async function main(names: string[]): Promise<number> {
  const release = kubernetesRelease();
  const binDir = k8sBinDir(release);
  const all = binaries(release);
  const unknown = names.filter((name) => !all.some((binary) => binary.name === name));
  if (unknown.length) {
    console.error(`k8s:build: unknown binary ${unknown.join(', ')} (known: ${all.map((b) => b.name).join(', ')})`);
    return 2;
  }
  mkdirSync(binDir, { recursive: true });
  let failed = 0;
  for (const binary of all.filter((b) => names.length === 0 || names.includes(b.name))) {
    const target = join(binDir, binary.name);
    const stampFile = join(binDir, `.${binary.name}.stamp`);
    const stamp = stampOf(binary);
    if (existsSync(target) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) {
      console.log(`k8s:build: ${binary.name} is built (${release})`);
      continue;
    }
    console.log(`k8s:build: building ${binary.name} from ${binary.pkg} (modules download on first use)...`);
    const started = Date.now();
    const partial = `${target}.partial-${process.pid}`;
    const error = await goBuild(binary, partial);
    if (error) {
      rmSync(partial, { force: true });
      console.error(`k8s:build: ${binary.name} failed: ${error}`);
      failed++;
      continue;
    }
    renameSync(partial, target);
    writeFileSync(stampFile, stamp);
    console.log(`k8s:build: ${binary.name} built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  console.log(binDir);
  return failed ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
