/** The service account controller: a `default` ServiceAccount in every namespace. */
export { SERVICEACCOUNT_CONTROLLER, serviceAccountController } from './controller.ts';
