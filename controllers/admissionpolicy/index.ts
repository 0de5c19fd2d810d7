/** The ValidatingAdmissionPolicy status controller: type-check warnings in policy status. */
export { STATUS_CONTROLLER, statusControllerDefinition } from './controller.ts';
