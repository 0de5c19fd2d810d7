/** The disruption controller: PodDisruptionBudget status from pods and workload scales. */
export { DisruptionReconciler, disruptionControllerDefinition } from './controller.ts';
