/**
 * The embedded store's refusals to open, apart from kv-level.ts so that a daemon given --kubeconfig can tell them
 * from other failures without loading LevelDB.
 */

/** The store's files are damaged: the control plane does not start on them. */
export class StoreDamaged extends Error {}

/** Another process holds the store's lock: a second control plane on the same data directory. */
export class StoreInUse extends Error {}

/** Refusals to start that are said in one line (what is wrong, where, and the way out), not a stack trace. */
export const startupRefusal = (err: unknown): err is Error => err instanceof StoreDamaged || err instanceof StoreInUse;
