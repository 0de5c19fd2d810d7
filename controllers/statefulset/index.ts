/** The StatefulSet controller: ordinal pods, claims and revisions of StatefulSets. */
export { StatefulSetReconciler, statefulSetControllerDefinition } from './controller.ts';
