/**
 * The embedded control plane's flags, shared by both commands: apart from its start (embedded.ts), so that a daemon
 * given --kubeconfig parses them without loading the control plane, its store or LevelDB.
 */
import type { FlagSpec } from './flags.ts';

const SECTION = 'Embedded control plane';

/** What the API's port and address flags are called: the daemon keeps `--secure-port` for its own serving. */
export interface EmbeddedFlagNames {
  port: string;
  bind: string;
}

export const CONTROL_PLANE_FLAG_NAMES: EmbeddedFlagNames = { port: 'secure-port', bind: 'bind-address' };
export const DAEMON_FLAG_NAMES: EmbeddedFlagNames = { port: 'embedded-secure-port', bind: 'embedded-bind-address' };

export const embeddedFlags = (names: EmbeddedFlagNames): FlagSpec[] => [
  {
    name: names.port,
    type: 'int',
    section: SECTION,
    default: '6443',
    usage: 'HTTPS port of the API; 0 picks a free port and prints it.',
  },
  {
    name: names.bind,
    type: 'string',
    section: SECTION,
    default: '127.0.0.1',
    usage: 'Address the API listens on.',
  },
  {
    name: 'data-dir',
    type: 'string',
    section: SECTION,
    default: '.orch',
    usage:
      'Directory for the generated CA, the kubeconfigs and (with --storage=embedded) the objects; a flavor other than the one that made it keeps its own in <data-dir>/<flavor>.',
  },
  {
    name: 'storage',
    type: 'string',
    section: SECTION,
    default: 'embedded',
    usage:
      'Where objects are kept: embedded (<data-dir>/store, survives restarts) or memory (lost on exit); --etcd-servers selects etcd.',
  },
  {
    name: 'etcd-servers',
    type: 'stringArray',
    section: SECTION,
    usage: 'etcd client URLs (comma-separated or repeated) to store objects in, instead of the data directory.',
  },
  {
    name: 'etcd-prefix',
    type: 'string',
    section: SECTION,
    default: '/registry/',
    usage:
      'Prefix of every key the control plane writes in etcd; control planes given the same one serve the same objects.',
  },
  {
    name: 'etcd-compaction-interval',
    type: 'duration',
    section: SECTION,
    default: '5m',
    usage: "How often etcd's history is compacted (0 never).",
  },
  {
    name: 'kubeconfig-out',
    type: 'string',
    section: SECTION,
    usage: 'Where the admin kubeconfig is written (default <data-dir>/kubeconfig).',
  },
  {
    name: 'ca-cert-file',
    type: 'string',
    section: SECTION,
    usage: 'CA certificate to use instead of generating one (with --ca-key-file).',
  },
  { name: 'ca-key-file', type: 'string', section: SECTION, usage: 'Private key of --ca-cert-file.' },
  {
    name: 'token-auth-file',
    type: 'string',
    section: SECTION,
    usage: 'Static bearer tokens, CSV lines of token,user,uid,"group1,group2".',
  },
  {
    name: 'anonymous-auth',
    type: 'bool',
    section: SECTION,
    default: 'true',
    usage:
      'Serve requests without credentials as system:anonymous (group system:unauthenticated), which the default ' +
      'policy lets read only /healthz, /livez, /readyz and /version; false answers them 401.',
  },
  {
    name: 'write-identity-kubeconfig',
    type: 'stringArray',
    section: SECTION,
    usage:
      'NAME=USER:GROUP1,GROUP2 writes <data-dir>/NAME.kubeconfig for that identity (repeatable). USER may contain ' +
      "colons: the groups start at the first colon followed only by groups, each colon-free or 'system:...' " +
      '(node1=system:node:n1:system:nodes); end a USER with colons by ":" when it has no groups (s=system:kube-scheduler:).',
  },
  {
    name: 'continue-ttl',
    type: 'duration',
    section: SECTION,
    default: '5m',
    usage: 'How long a list continue token stays valid.',
  },
  {
    name: 'watch-history',
    type: 'int',
    section: SECTION,
    default: '5000',
    usage: 'Watch events kept per resource; older resume points answer 410.',
  },
  {
    name: 'simulated-nodes',
    type: 'int',
    section: SECTION,
    default: '3',
    usage: 'Simulated nodes that register, bind and run pods (Ready after a readiness delay); 0 for none.',
  },
  {
    name: 'audit-log-path',
    type: 'string',
    section: SECTION,
    usage: 'File every write is logged to, one audit Event (level Metadata) per line; none when unset.',
  },
  {
    name: 'bookmark-interval',
    type: 'duration',
    section: SECTION,
    default: '1m',
    usage: 'Interval of watch bookmarks for clients that allow them.',
  },
];
