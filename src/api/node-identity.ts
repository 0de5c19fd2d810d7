/**
 * The names a node agent goes by: user `system:node:<node name>` in group `system:nodes`, as a client
 * certificate's common name and organization or as any other identity. The plane's Node authorizer, bootstrap
 * policy and NodeRestriction admission, the certificates controller's signers and approver, and the simulated
 * node agents all use these two, so they are defined once here.
 */

/** The group every node agent is in (the reference's `user.NodesGroup`). */
export const NODES_GROUP = 'system:nodes';
/** A node agent's user name is this prefix followed by its Node's name. */
export const NODE_USER_PREFIX = 'system:node:';
