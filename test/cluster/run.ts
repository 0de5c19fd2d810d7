/**
 * `npm run cluster [-- --nodes N]`: a real Kubernetes control plane with kwok nodes on loopback (see
 * local-cluster.ts), in `.orch/cluster/`, until Ctrl-C or SIGTERM stops every child.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from '../support/daemons.ts';
import { startLocalCluster } from './local-cluster.ts';

const { values } = parseArgs({ options: { nodes: { type: 'string', default: '3' } } });
const nodes = Number(values.nodes);
if (!Number.isInteger(nodes) || nodes < 0 || nodes > 1000) {
  console.error(`--nodes: want an integer from 0 to 1000, got "${values.nodes}"`);
  process.exit(2);
}

const dir = join(ROOT, '.orch', 'cluster');
const relative = '.orch/cluster';
let cluster: Awaited<ReturnType<typeof startLocalCluster>>;
try {
  cluster = await startLocalCluster({ dir, nodes, log: (line) => console.log(`cluster: ${line}`) });
} catch (error) {
  console.error(`cluster: ${(error as Error).message} (logs in ${relative}/logs/)`);
  process.exit(1);
}

let stopping = false;
const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`cluster: ${signal}, stopping every process`);
  await cluster.stop();
  process.exit(0);
};
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));

console.log(
  [
    `cluster ready at ${cluster.server}; in another terminal:`,
    `  export KUBECONFIG=${relative}/kubeconfig`,
    '  kubectl version && kubectl get nodes',
    `  node bin/orch-controller-manager.js --kubeconfig ${relative}/kubeconfig`,
  ].join('\n'),
);
