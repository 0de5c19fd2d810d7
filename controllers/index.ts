/** Every controller the daemon can run: the CLI selects from this list with `--controllers`. */
import type { ControllerDefinition } from '../src/controller/controller.ts';
import { statusControllerDefinition } from './admissionpolicy/index.ts';
import { apiServiceAvailabilityController } from './apiservice/index.ts';
import { certificateControllers } from './certificates/index.ts';
import { clusterRoleAggregationController } from './clusterroleaggregation/index.ts';
import { disruptionControllerDefinition } from './disruption/index.ts';
import { leaderElectionControllers } from './leaderelection/index.ts';
import { rootCaPublisherController } from './rootcacertpublisher/index.ts';
import { serviceAccountController } from './serviceaccount/index.ts';
import { statefulSetControllerDefinition } from './statefulset/index.ts';

export const controllerDefinitions: ControllerDefinition[] = [
  disruptionControllerDefinition,
  statefulSetControllerDefinition,
  ...certificateControllers,
  ...leaderElectionControllers,
  statusControllerDefinition,
  apiServiceAvailabilityController,
  clusterRoleAggregationController,
  serviceAccountController,
  rootCaPublisherController,
];
