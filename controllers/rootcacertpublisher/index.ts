/** The root CA publisher: the cluster's root CA as a ConfigMap in every namespace. */
export { ROOT_CA_PUBLISHER_CONTROLLER, rootCaPublisherController } from './controller.ts';
