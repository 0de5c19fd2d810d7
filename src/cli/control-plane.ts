/** `orch-control-plane`: the embedded control plane alone. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { isFlavorName } from '../api/naming.ts';
import { repairLevelStore } from '../controlplane/kv-level.ts';
import { startupRefusal } from '../controlplane/store-refusal.ts';
import { printWelcome, startEmbedded } from './embedded.ts';
import { CONTROL_PLANE_FLAG_NAMES, embeddedFlags } from './embedded-flags.ts';
import { FlagError, Flags, parseFlags, usage } from './flags.ts';
import { runUntilSignal } from './signals.ts';

const SPECS = [
  {
    name: 'api-flavor',
    type: 'string' as const,
    section: 'Embedded control plane',
    default: 'orch',
    usage: 'Naming flavor of groups, signers, labels and metrics: orch or kubernetes.',
  },
  ...embeddedFlags(CONTROL_PLANE_FLAG_NAMES),
  {
    name: 'feature-gates',
    type: 'mapStringBool' as const,
    section: 'Feature gate',
    usage: 'Gates of alpha/experimental features, as Name=true,... (e.g. ShardedListAndWatch=true).',
  },
  {
    name: 'repair-store',
    type: 'bool' as const,
    section: 'Embedded control plane',
    usage:
      'Repair the embedded store in <data-dir>/store after it refused to start as damaged (the control plane stopped), keeping what reads whole, then exit (README: Operations).',
  },
  { name: 'help', type: 'bool' as const, section: 'Generic', usage: 'Show this help.' },
];

async function main(): Promise<void> {
  const flags = new Flags(SPECS, parseFlags(SPECS, process.argv.slice(2)));
  if (flags.bool('help')) {
    console.log(
      usage(
        'orch-control-plane',
        'An in-process API server with the REST semantics of the cluster control API.',
        SPECS,
      ),
    );
    return;
  }
  if (flags.bool('repair-store')) {
    const store = join(flags.string('data-dir')!, 'store');
    if (!existsSync(store)) {
      throw new FlagError(`--repair-store: there is no store in ${store}`);
    }
    console.log(await repairLevelStore(store));
    return;
  }
  const flavor = flags.string('api-flavor')!;
  if (!isFlavorName(flavor))
    throw new FlagError(`invalid argument "${flavor}" for "--api-flavor" flag: must be orch or kubernetes`);
  const cp = await startEmbedded(flags, flags.mapStringBool('feature-gates'), flavor, CONTROL_PLANE_FLAG_NAMES);
  await printWelcome(cp);
  await runUntilSignal(() => cp.stop());
}

main().catch((err) => {
  console.error(err instanceof FlagError || startupRefusal(err) ? `Error: ${err.message}` : err);
  process.exit(1);
});
