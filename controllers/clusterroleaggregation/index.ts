/** ClusterRole aggregation: the rules of roles with an `aggregationRule`. */
export { CLUSTERROLE_AGGREGATION_CONTROLLER, clusterRoleAggregationController } from './controller.ts';
