/** The APIService availability controller: the `Available` condition of every APIService. */
export { APISERVICE_CONTROLLER, type ApiServiceConfig, apiServiceAvailabilityController } from './controller.ts';
