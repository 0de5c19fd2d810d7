/** Start-up of the embedded control plane from its flags (embedded-flags.ts), shared by both commands. */

import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { type FlavorName, naming } from '../api/naming.ts';
import { translateNames } from '../api/translate.ts';
import { ControlPlane, DEFAULT_CONTROL_PLANE_OPTIONS, type StorageKind } from '../controlplane/control-plane.ts';
import { dataDirFor } from '../controlplane/data-dir.ts';
import { startSimulatedNodes } from '../simulation/nodes.ts';
import type { EmbeddedFlagNames } from './embedded-flags.ts';
import { FlagError, type Flags } from './flags.ts';
import { assertPortFree, isAddressInUse, portInUse } from './ports.ts';

/** Starts an embedded control plane from flags and prints how to reach it. */
export async function startEmbedded(
  flags: Flags,
  featureGates: Record<string, boolean>,
  flavor: FlavorName,
  names: EmbeddedFlagNames,
  /** The daemon's logger, for the control plane's own messages. */
  log?: Logger,
): Promise<ControlPlane> {
  const host = flags.string(names.bind)!;
  const port = flags.int(names.port)!;
  // Checked before anything is written to the data directory.
  await assertPortFree(host, port, names.port);
  const dataDir = await dataDirFor(flags.string('data-dir')!, flavor);
  const cp = new ControlPlane({
    flavor,
    ...storageFlags(flags),
    host,
    port,
    dataDir,
    kubeconfigOut: flags.string('kubeconfig-out'),
    caCertFile: flags.string('ca-cert-file'),
    caKeyFile: flags.string('ca-key-file'),
    tokenAuthFile: flags.string('token-auth-file'),
    anonymousAuth: flags.bool('anonymous-auth'),
    auditLogPath: flags.string('audit-log-path'),
    log,
    featureGates,
    etcdCompactionIntervalMs: flags.durationMs('etcd-compaction-interval')!,
    continueTtlMs: flags.durationMs('continue-ttl')!,
    historySize: flags.int('watch-history')!,
    watch: { ...DEFAULT_CONTROL_PLANE_OPTIONS.watch, bookmarkIntervalMs: flags.durationMs('bookmark-interval')! },
  });
  try {
    await cp.start();
  } catch (err) {
    // Taken between the check and the start: the same one line.
    if (isAddressInUse(err)) throw portInUse(host, port, names.port);
    throw err;
  }
  const nodes = flags.int('simulated-nodes')!;
  if (nodes < 0) throw new FlagError(`invalid argument "${nodes}" for "--simulated-nodes" flag: must be 0 or more`);
  if (nodes > 0) cp.attach(await startSimulatedNodes(cp, nodes));
  for (const spec of flags.all('write-identity-kubeconfig')) {
    const identity = parseIdentitySpec(spec);
    if (!identity) {
      throw new FlagError(
        `invalid argument "${spec}" for "--write-identity-kubeconfig" flag: expected NAME=USER[:GROUP1,GROUP2]`,
      );
    }
    const { name, username, groups } = identity;
    const path = await cp.writeIdentityKubeconfig(`${dataDir}/${name}.kubeconfig`, { username, groups });
    console.log(`kubeconfig for ${username} written to ${path}`);
  }
  return cp;
}

/** `--storage` and `--etcd-servers`: etcd when servers are given, else the named store. */
function storageFlags(flags: Flags): { storage: StorageKind; etcdServers: string[]; etcdPrefix: string } {
  const storage = flags.string('storage')!;
  const etcdServers = flags
    .all('etcd-servers')
    .flatMap((s) => s.split(','))
    .filter(Boolean);
  const etcdPrefix = flags.string('etcd-prefix')!;
  if (storage !== 'embedded' && storage !== 'memory') {
    throw new FlagError(`invalid argument "${storage}" for "--storage" flag: must be embedded or memory`);
  }
  if (etcdServers.length > 0) {
    if (storage === 'memory') throw new FlagError('--etcd-servers cannot be combined with --storage=memory');
    return { storage: 'etcd', etcdServers, etcdPrefix };
  }
  return { storage, etcdServers, etcdPrefix };
}

function storageDescription(cp: ControlPlane): string {
  const o = cp.options;
  if (o.storage === 'etcd') return `etcd ${o.etcdServers.join(',')} (prefix ${o.etcdPrefix})`;
  if (o.storage === 'memory') return 'memory (objects are lost on exit)';
  return `embedded, ${join(o.dataDir, 'store')} (at resourceVersion ${cp.storage.currentRv()})`;
}

const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A path as a person in the current directory would type it. */
function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

/**
 * Where the examples are for this plane's flavor: `examples/` itself (written in the `orch` flavor), or a copy
 * with the other flavor's names filled in, written to `<data-dir>/examples/`.
 */
export async function examplesFor(cp: ControlPlane): Promise<string> {
  const source = join(PACKAGE_ROOT, 'examples');
  const n = cp.registry.naming;
  if (n.flavor === 'orch') return source;
  const target = join(cp.options.dataDir, 'examples');
  await mkdir(target, { recursive: true });
  for (const file of (await readdir(source)).filter((f) => f.endsWith('.yaml'))) {
    const text = translateNames(await readFile(join(source, file), 'utf8'), naming('orch'), n);
    await writeFile(join(target, file), text);
  }
  return target;
}

/** What to try, every line a command that works against this plane (a test runs them all). */
export async function welcomeCommands(cp: ControlPlane): Promise<string[]> {
  const bin = shown(join(PACKAGE_ROOT, 'bin'));
  const orch = cp.registry.naming.flavor === 'orch';
  return [
    `export KUBECONFIG=${shown(cp.kubeconfigPath)} PATH="${isAbsolute(bin) ? bin : `$PWD/${bin}`}:$PATH"`,
    'kubectl api-resources',
    `kubectl apply -f ${shown(await examplesFor(cp))}/`,
    'kubectl get csr,pdb,statefulsets -A',
    // kubectl's own commands are hard-wired to the real names; the plugin speaks both flavors.
    orch ? 'kubectl orch auth whoami' : 'kubectl auth whoami',
    'kubectl orch why pdb/web -n demo',
    'kubectl get pods -n demo -w',
  ];
}

export async function printWelcome(cp: ControlPlane): Promise<void> {
  const commands = await welcomeCommands(cp);
  console.log(
    [
      `embedded control plane listening on ${cp.url} (flavor ${cp.registry.naming.flavor})`,
      `port: ${cp.port}`,
      `kubeconfig: ${cp.kubeconfigPath}`,
      `storage: ${storageDescription(cp)}`,
      '',
      'try, in another terminal (the `kubectl orch` plugin is in bin/):',
      ...commands.map((c) => `  ${c}`),
      '',
    ].join('\n'),
  );
}

/**
 * `NAME=USER[:GROUPS]` of `--write-identity-kubeconfig`. Both user and group names may contain colons
 * (`system:node:n1`, `system:nodes`), so the user ends at the first colon after which the rest is a comma-separated
 * list of groups, each either colon-free or starting with `system:`. A user name with colons and no groups
 * therefore ends with `:`. Undefined when NAME or USER is empty.
 */
export function parseIdentitySpec(spec: string): { name: string; username: string; groups: string[] } | undefined {
  const eq = spec.indexOf('=');
  const name = spec.slice(0, eq);
  const value = spec.slice(eq + 1);
  if (eq <= 0 || !value) return undefined;
  const isGroupList = (text: string) =>
    text.split(',').every((g) => g === '' || !g.includes(':') || g.startsWith('system:'));
  for (let colon = value.indexOf(':'); colon >= 0; colon = value.indexOf(':', colon + 1)) {
    const rest = value.slice(colon + 1);
    if (colon > 0 && isGroupList(rest)) {
      return { name, username: value.slice(0, colon), groups: rest.split(',').filter(Boolean) };
    }
  }
  return { name, username: value, groups: [] };
}
