/** Typed raw-JSON shapes of every resource the control plane serves, grouped by API group. */
export type * from './admission.ts';
export type * from './apps.ts';
export type * from './authz.ts';
export type * from './certificates.ts';
export type * from './coordination.ts';
export type * from './core.ts';
export type * from './discovery.ts';
export type * from './events.ts';
export type * from './misc.ts';
export type * from './networking.ts';
export type * from './policy.ts';
export type * from './rbac.ts';
