/** Every scenario, in the order they run. */
import type { Scenario } from '../scenario.ts';
import { clusterRoleScenarios } from './clusterrole.ts';
import { csrScenarios } from './csr.ts';
import { pdbScenarios } from './pdb.ts';
import { statefulSetScenarios } from './statefulset.ts';

export const SCENARIOS: Scenario[] = [
  ...csrScenarios,
  ...pdbScenarios,
  ...statefulSetScenarios,
  ...clusterRoleScenarios,
];
