/** `orch-controller-manager`: the daemon. With `--embedded` it brings its own control plane. */
import { FlagError, Flags, parseFlags, usage } from './flags.ts';
import { EMBEDDED_FLAGS, printWelcome, startEmbedded } from './embedded.ts';
import { runUntilSignal } from './signals.ts';

const SPECS = [
  { name: 'embedded', type: 'bool' as const, section: 'Generic', usage: 'Start an embedded control plane and run against it.' },
  { name: 'kubeconfig', type: 'string' as const, section: 'Generic', usage: 'Path to a kubeconfig (default $KUBECONFIG, then in-cluster).' },
  { name: 'feature-gates', type: 'mapStringBool' as const, section: 'Feature gate', usage: 'Gates of alpha/experimental features, as Name=true,...' },
  { name: 'help', type: 'bool' as const, section: 'Generic', usage: 'Show this help.' },
  ...EMBEDDED_FLAGS,
];

async function main(): Promise<void> {
  const flags = new Flags(SPECS, parseFlags(SPECS, process.argv.slice(2)));
  if (flags.bool('help')) {
    console.log(usage('orch-controller-manager', 'Runs the controllers that turn stored desired state into observed state.', SPECS));
    return;
  }
  if (!flags.bool('embedded')) {
    throw new FlagError('only --embedded is supported so far: the controllers arrive with the runtime');
  }
  const cp = await startEmbedded(flags, flags.mapStringBool('feature-gates'));
  printWelcome(cp);
  await runUntilSignal(() => cp.stop());
}

main().catch((err) => {
  console.error(err instanceof FlagError ? `Error: ${err.message}` : err);
  process.exit(1);
});
