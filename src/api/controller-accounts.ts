/**
 * The reference's service accounts of the controllers this daemon runs (kube-controller-manager's client names,
 * `system:serviceaccount:<system namespace>:<name>` under `--use-service-account-credentials`), and so the names
 * of their bootstrap roles, `system:controller:<name>`.
 */
import type { Naming } from './naming.ts';

export const CONTROLLER_ACCOUNTS = {
  certificates: 'certificate-controller',
  disruption: 'disruption-controller',
  statefulSet: 'statefulset-controller',
  clusterRoleAggregation: 'clusterrole-aggregation-controller',
  serviceAccount: 'service-account-controller',
  rootCaPublisher: 'root-ca-cert-publisher',
  admissionPolicyStatus: 'validatingadmissionpolicy-status-controller',
} as const;

/** The serving trust-bundle publisher's, which carries the API server's name. */
export const trustBundlePublisherAccount = (n: Naming) => `${n.apiServer}-serving-clustertrustbundle-publisher`;

/** The prefix of the controllers' bootstrap ClusterRoles and bindings. */
export const CONTROLLER_ROLE_PREFIX = 'system:controller:';
