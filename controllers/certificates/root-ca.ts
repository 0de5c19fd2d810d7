/**
 * The cluster's root CA as the daemon knows it, as kube-controller-manager's `--root-ca-file`: that file when
 * given, else the CA its API client trusts (the kubeconfig's `certificate-authority-data` or file; in a pod,
 * the service account's `ca.crt`). Both the serving trust-bundle publisher and the root CA ConfigMap publisher
 * publish it. A file is watched: a change reaches the publishers at once, without a restart.
 */
import { type FSWatcher, readFileSync, watch } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { ControllerContext } from '../../src/controller/controller.ts';
import type { Timer } from '../../src/util/clock.ts';
import { bundleProblem } from './trustbundle/core.ts';

/** Where the CA bytes come from: a file (watched), or bytes fixed for the process's life. */
export interface CaSource {
  read(): string;
  file?: string;
}

export function caSource(ctx: ControllerContext, rootCaFile: string | undefined): CaSource | undefined {
  if (rootCaFile) return { read: () => readFileSync(rootCaFile, 'utf8'), file: rootCaFile };
  const cluster = ctx.client.kubeConfig.getCurrentCluster();
  if (cluster?.caData) {
    const bytes = Buffer.from(cluster.caData, 'base64').toString('utf8');
    return { read: () => bytes };
  }
  if (cluster?.caFile) {
    const file = cluster.caFile;
    return { read: () => readFileSync(file, 'utf8'), file };
  }
  return undefined;
}

/**
 * Reads the CA once for a controller's start: its bytes, or why there are none (logged by the caller, which then
 * publishes nothing).
 */
export function readRootCa(source: CaSource | undefined): { bytes: string } | { problem: string } {
  if (!source) return { problem: 'no root CA (no --root-ca-file, no CA in the client configuration)' };
  let bytes: string;
  try {
    bytes = source.read();
  } catch (err) {
    return { problem: `cannot read the root CA: ${(err as Error).message}` };
  }
  const problem = bundleProblem(bytes);
  return problem ? { problem: `the root CA holds no usable certificate: ${problem}` } : { bytes };
}

/**
 * Re-reads a CA file when its directory changes (a swap replaces the inode); calls `changed` when its bytes differ
 * and hold usable certificates. Returns the stop function.
 */
export function watchCaFile(
  ctx: ControllerContext,
  file: string,
  initial: string,
  changed: (bytes: string) => void,
): () => void {
  let last = initial;
  let timer: Timer | undefined;
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dirname(resolve(file)), { persistent: false }, () => {
      if (timer) ctx.clock.clearTimeout(timer);
      timer = ctx.clock.setTimeout(() => {
        timer = undefined;
        let bytes: string;
        try {
          bytes = readFileSync(file, 'utf8');
        } catch {
          return; // mid-swap; the next event reads it again
        }
        if (bytes !== last && !bundleProblem(bytes)) {
          last = bytes;
          changed(bytes);
        }
      }, 50);
    });
    watcher.on('error', (err) => ctx.logger.warn({ file, err: String(err) }, 'watching the CA file failed'));
  } catch (err) {
    ctx.logger.warn({ file, err: String(err) }, 'cannot watch the CA file: changes need a restart');
  }
  return () => {
    watcher?.close();
    if (timer) ctx.clock.clearTimeout(timer);
  };
}
