/**
 * Where the Kubernetes binaries built from Go modules (`npm run k8s:build`) live, and which release they are.
 * The release is the one `tools/k8s/go.mod` requires; the cache sits outside the clone so that clean clones
 * and CI reuse it.
 */
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const TOOLS_DIR = dirname(dirname(fileURLToPath(import.meta.url)));

/** The pinned Kubernetes release, e.g. `v1.37.2`, read from the module that builds it. */
export function kubernetesRelease(): string {
  const goMod = readFileSync(join(TOOLS_DIR, 'k8s', 'go.mod'), 'utf8');
  const match = /^\s*(?:require )?k8s\.io\/kubernetes (v\d+\.\d+\.\d+)/m.exec(goMod);
  if (!match) throw new Error('tools/k8s/go.mod: no requirement of k8s.io/kubernetes vX.Y.Z');
  return match[1];
}

/** `$ORCH_K8S_CACHE/<release>/bin`, by default under `$HOME/.cache/orch-k8s`. */
export function k8sBinDir(release = kubernetesRelease()): string {
  const root = process.env.ORCH_K8S_CACHE || join(homedir(), '.cache', 'orch-k8s');
  return join(root, release, 'bin');
}

/** A built binary's path, or undefined when it has not been built. */
export function builtBinary(name: string): string | undefined {
  const path = join(k8sBinDir(), name);
  return existsSync(path) ? path : undefined;
}

/** kubectl for the suites: `$KUBECTL`, else the PATH's, else the one `npm run k8s:build` made. */
export function findKubectl(): string {
  if (process.env.KUBECTL) return process.env.KUBECTL;
  const onPath = (process.env.PATH ?? '').split(delimiter).some((dir) => isExecutable(join(dir, 'kubectl')));
  return onPath ? 'kubectl' : (builtBinary('kubectl') ?? 'kubectl');
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
