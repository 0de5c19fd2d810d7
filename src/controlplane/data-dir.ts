/**
 * One data directory, both flavors. A control plane of one flavor cannot read the other's objects (their API
 * groups differ) nor share its kubeconfig (its server, its names), so each flavor keeps everything (the CA, the
 * service account key, the kubeconfigs, the store, the examples) in a directory of its own:
 *
 * - the top level of `--data-dir` belongs to the flavor recorded in its `flavor` file; a directory made before
 *   that file existed belongs to the flavor of the objects its store holds (then recorded), and a new one to the
 *   flavor that starts first in it;
 * - any other flavor lives in `<data-dir>/<flavor>/`.
 *
 * So switching `--api-flavor` on one data directory starts the other flavor's own cluster beside the first,
 * and switching back finds the first as it was.
 */
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type FlavorName, isFlavorName } from '../api/naming.ts';
import { openLevelStore } from './kv-level.ts';
import { flavorOfResources, storedResources } from './persistence.ts';

const MARKER = 'flavor';

/** Where a flavor's files are, given the flavor the top level belongs to (undefined: nobody's yet). */
export function flavorDirectory(dataDir: string, flavor: FlavorName, owner: FlavorName | undefined): string {
  return owner === undefined || owner === flavor ? dataDir : join(dataDir, flavor);
}

/** The directory this flavor's control plane uses in `dataDir`, claiming the top level if it is nobody's yet. */
export async function dataDirFor(dataDir: string, flavor: FlavorName): Promise<string> {
  const owner = (await recordedFlavor(dataDir)) ?? (await legacyStoreFlavor(dataDir)) ?? flavor;
  await record(dataDir, owner);
  const dir = flavorDirectory(dataDir, flavor, owner);
  if (dir !== dataDir) await record(dir, flavor);
  return dir;
}

async function recordedFlavor(dir: string): Promise<FlavorName | undefined> {
  const text = await readFile(join(dir, MARKER), 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (text === undefined) return undefined;
  const flavor = text.trim();
  if (!isFlavorName(flavor)) {
    throw new Error(`${join(dir, MARKER)} names no flavor ("${flavor}"): it must hold orch or kubernetes`);
  }
  return flavor;
}

/** The flavor of the objects in a store made before the top level was recorded, if there is such a store. */
async function legacyStoreFlavor(dataDir: string): Promise<FlavorName | undefined> {
  const store = join(dataDir, 'store');
  if (!(await stat(join(store, 'CURRENT')).catch(() => undefined))) return undefined;
  const kv = await openLevelStore(store);
  try {
    return flavorOfResources(await storedResources(kv));
  } finally {
    await kv.close();
  }
}

async function record(dir: string, flavor: FlavorName): Promise<void> {
  if ((await recordedFlavor(dir)) === flavor) return;
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, MARKER), `${flavor}\n`);
}
