/**
 * The controller manager's component configuration: a typed structure, and a schema that says for every field
 * its kind (which decides how §2.6 merges it), its type, its default and the command-line flag that sets it.
 * The schema is checked against the TypeScript interfaces at compile time: `struct<T>()` needs one field
 * description per property of `T`, of the kind that property's type calls for.
 *
 * Durations are milliseconds in memory and Go duration strings (`15s`, `8760h0m0s`) in files and on `/configz`.
 */
import { isIP } from 'node:net';
import { DAEMON_NAME, type Naming } from '../api/naming.ts';
import type { FlagSpec, FlagType } from '../cli/flags.ts';
import { DEFAULT_ALWAYS_ALLOW_PATHS, pathMatcher } from '../diagnostics/auth.ts';
import { REFERENCE_SERVING_FLAG_NAMES, type ServingFlagNames } from '../diagnostics/options.ts';
import { DEFAULT_BIND_ADDRESS, DEFAULT_SECURE_PORT } from '../diagnostics/server.ts';
import type { LoggingFormat } from '../log/logger.ts';
import type { FeatureGates } from './features.ts';

// ---------------------------------------------------------------------------------------------
// The typed structure

export interface ClientConnectionConfiguration {
  /** Requests per second to the API server (the reference's float32). */
  qps: number;
  /** Requests allowed above `qps` in a burst. */
  burst: number;
  /** What watches of the kinds read from protobuf ask for: Kubernetes protobuf (the default) or JSON. */
  contentType: KubeApiContentType;
  /**
   * HTTP headers added to every API request, by lower-cased name; a name with several values is sent as several
   * header lines. For authenticating front proxies and gateways that want a header of their own, and for
   * impersonation headers such as `Impersonate-Group`, which take one line per group.
   */
  extraHeaders: Record<string, string[]>;
}

export type KubeApiContentType = 'application/vnd.kubernetes.protobuf' | 'application/json';

export interface LeaderElectionConfiguration {
  leaderElect: boolean;
  /** Milliseconds. */
  leaseDuration: number;
  /** Milliseconds. */
  renewDeadline: number;
  /** Milliseconds. */
  retryPeriod: number;
  resourceLock: string;
  /** Empty: the flavor's component name. */
  resourceName: string;
  /** Empty: the flavor's system namespace. */
  resourceNamespace: string;
  releaseOnCancel: boolean;
}

export interface GenericControllerManagerConfiguration {
  clientConnection: ClientConnectionConfiguration;
  leaderElection: LeaderElectionConfiguration;
  /** `*` (all enabled by default), `name` (enable), `-name` (disable). */
  controllers: string[];
  /** Each controller's requests authenticate as its own service account (kube-controller-manager's flag). */
  useServiceAccountCredentials: boolean;
}

export interface SignerFilesConfiguration {
  certFile: string;
  keyFile: string;
}

export interface CSRSigningControllerConfiguration {
  clusterSigningCertFile: string;
  clusterSigningKeyFile: string;
  nodeAgentServingSignerConfiguration: SignerFilesConfiguration;
  nodeAgentClientSignerConfiguration: SignerFilesConfiguration;
  apiServerClientSignerConfiguration: SignerFilesConfiguration;
  legacyUnknownSignerConfiguration: SignerFilesConfiguration;
  /** Milliseconds: the longest lifetime of an issued certificate. */
  clusterSigningDuration: number;
}

export interface NodeAgentServingApprovalConfiguration {
  enabled: boolean;
  /** Regular expressions, each matched against a whole DNS name. */
  dnsNamePatterns: string[];
  /** 0: no limit of its own (the signer's `clusterSigningDuration` still applies). */
  maxExpirationSeconds: number;
}

export interface CSRApprovingControllerConfiguration {
  nodeAgentServing: NodeAgentServingApprovalConfiguration;
}

export interface ClusterTrustBundlePublisherConfiguration {
  /**
   * The cluster's root CA bundle (the reference's `serviceAccountController.rootCAFile`): published as the API
   * server serving signer's trust bundle and as the root CA ConfigMap in every namespace; empty: the API client's CA.
   */
  rootCAFile: string;
}

export interface APIServiceAvailabilityConfiguration {
  /** Verify the backend's serving certificate in the discovery probe (caBundle, else the system roots). */
  probeVerifyTLS: boolean;
}

export interface LoggingConfiguration {
  format: LoggingFormat;
  verbosity: number;
}

export interface ServingConfiguration {
  bindAddress: string;
  /** 0 disables serving. */
  securePort: number;
  certFile: string;
  keyFile: string;
  clientCAFile: string;
  alwaysAllowPaths: string[];
}

export interface ControllerManagerConfiguration {
  generic: GenericControllerManagerConfiguration;
  /** Gates set by files and flags; gates not named here keep their defaults. */
  featureGates: Record<string, boolean>;
  /** Workers per controller, by controller name. */
  concurrency: Record<string, number>;
  csrSigningController: CSRSigningControllerConfiguration;
  csrApprovingController: CSRApprovingControllerConfiguration;
  clusterTrustBundlePublisherController: ClusterTrustBundlePublisherConfiguration;
  apiServiceAvailabilityController: APIServiceAvailabilityConfiguration;
  logging: LoggingConfiguration;
  serving: ServingConfiguration;
}

// ---------------------------------------------------------------------------------------------
// Field descriptions

export type ScalarType = 'string' | 'int' | 'float' | 'bool' | 'duration';

export interface FlagBinding {
  name: string;
  section: string;
  usage: string;
  /** A deprecated second name; when both are given, `name` wins. */
  alias?: { name: string; usage: string };
  /** List flags: split each value on commas, as the reference's string slices do (default true). */
  splitCommas?: boolean;
  /** An int field holding whole seconds, set by a duration flag (`--x=1h`). */
  durationSeconds?: boolean;
}

interface Described {
  doc: string;
}

/** A single value: a file's value replaces the one before. */
export interface ScalarField<V> extends Described {
  kind: 'scalar';
  type: ScalarType;
  default: V;
  flag?: FlagBinding;
  /** Allowed strings. */
  oneOf?: readonly string[];
  /** Bounds of a number (a duration in milliseconds). */
  min?: number;
  max?: number;
  check?: (value: V) => string | undefined;
}

/** A list: a file's list replaces the one before, whole. */
export interface ListField<V> extends Described {
  kind: 'list';
  item: ScalarType;
  default: readonly V[];
  /** Repeatable and comma-separated on the command line; given at all, it replaces the list. */
  flag?: FlagBinding;
  checkItem?: (item: V) => string | undefined;
}

/** A map of scalars: merged per key. */
export interface MapField<V> extends Described {
  kind: 'map';
  value: ScalarType;
  default: Readonly<Record<string, V>>;
  /** A `Name=value,...` flag merged per key over the files (only for boolean values). */
  flag?: FlagBinding;
  /** Flags that each set one key, e.g. `--concurrent-<name>-syncs`. */
  keyFlags?: readonly { key: string; flag: FlagBinding }[];
  min?: number;
  checkEntry?: (key: string, value: V) => string | undefined;
}

/** A map of string lists: merged per key, each key's list replaced whole. */
export interface MapListField<V> extends Described {
  kind: 'mapList';
  item: ScalarType;
  default: Readonly<Record<string, readonly V[]>>;
  /** Keys are compared after this (e.g. lower-casing header names). */
  normalizeKey?: (key: string) => string;
  checkKey?: (key: string) => string | undefined;
  checkItem?: (item: V) => string | undefined;
}

/** An embedded structure: merged field by field. */
export interface StructField<T> extends Described {
  kind: 'struct';
  fields: { [K in keyof T]-?: Field<T[K]> };
}

/** The description a property of type `T` calls for. */
export type Field<T> = [T] extends [string | number | boolean]
  ? ScalarField<T>
  : [T] extends [readonly (infer U)[]]
    ? ListField<U>
    : [T] extends [Record<string, readonly (infer U)[]>]
      ? MapListField<U>
      : StructField<T> | MapField<T[keyof T]>;

/** The untyped view the decoder and merger walk. */
export type AnyField = ScalarField<any> | ListField<any> | MapField<any> | MapListField<any> | AnyStruct;
export interface AnyStruct extends Described {
  kind: 'struct';
  fields: Record<string, AnyField>;
}

export type ConfigSchema = StructField<ControllerManagerConfiguration>;

export function asAnyStruct<T>(schema: StructField<T>): AnyStruct {
  return schema as unknown as AnyStruct;
}

type ScalarOptions<V> = Partial<Pick<ScalarField<V>, 'flag' | 'oneOf' | 'min' | 'max' | 'check'>>;

function scalar<V extends string | number | boolean>(
  type: ScalarType,
  def: V,
  doc: string,
  opts: ScalarOptions<V>,
): ScalarField<V> {
  return { kind: 'scalar', type, default: def, doc, ...opts };
}

const str = (def: string, doc: string, opts: ScalarOptions<string> = {}) => scalar<string>('string', def, doc, opts);
const int = (def: number, doc: string, opts: ScalarOptions<number> = {}) => scalar<number>('int', def, doc, opts);
const float = (def: number, doc: string, opts: ScalarOptions<number> = {}) => scalar<number>('float', def, doc, opts);
const bool = (def: boolean, doc: string, opts: ScalarOptions<boolean> = {}) => scalar<boolean>('bool', def, doc, opts);
/** Milliseconds in memory, a Go duration string in files. */
const duration = (def: number, doc: string, opts: ScalarOptions<number> = {}) =>
  scalar<number>('duration', def, doc, opts);
const oneOf = <V extends string>(values: readonly V[], def: V, doc: string, opts: ScalarOptions<V> = {}) =>
  scalar<V>('string', def, doc, { ...opts, oneOf: values });

function struct<T>(doc: string, fields: { [K in keyof T]-?: Field<T[K]> }): StructField<T> {
  return { kind: 'struct', doc, fields };
}

// ---------------------------------------------------------------------------------------------
// Durations in Go's spelling

/** Milliseconds as Go's `time.Duration.String()` writes them: `15s`, `1m30s`, `8760h0m0s`, `500ms`, `0s`. */
export function formatGoDuration(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(ms);
  const whole = Math.trunc(abs);
  const ns = BigInt(whole) * 1_000_000n + BigInt(Math.round((abs - whole) * 1e6));
  if (ns === 0n) return '0s';
  const decimal = (value: bigint, unit: bigint): string => {
    const int = value / unit;
    const frac = (value % unit)
      .toString()
      .padStart(unit.toString().length - 1, '0')
      .replace(/0+$/, '');
    return frac ? `${int}.${frac}` : `${int}`;
  };
  if (ns < 1_000n) return `${sign}${ns}ns`;
  if (ns < 1_000_000n) return `${sign}${decimal(ns, 1_000n)}µs`;
  if (ns < 1_000_000_000n) return `${sign}${decimal(ns, 1_000_000n)}ms`;
  const hours = ns / 3_600_000_000_000n;
  const minutes = (ns % 3_600_000_000_000n) / 60_000_000_000n;
  const seconds = decimal(ns % 60_000_000_000n, 1_000_000_000n);
  if (hours > 0n) return `${sign}${hours}h${minutes}m${seconds}s`;
  if (minutes > 0n) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${seconds}s`;
}

// ---------------------------------------------------------------------------------------------
// Version, kind and the /configz section

export const CONFIG_VERSION = 'v1alpha1';

/** `config.orch.io/v1alpha1` (from the flavor's config group). */
export function configApiVersion(n: Naming): string {
  return `${n.configGroup}/${CONFIG_VERSION}`;
}

/** `OrchControllerManagerConfiguration` (from the flavor's product word). */
export function configKind(n: Naming): string {
  return `${n.product.charAt(0).toUpperCase()}${n.product.slice(1)}ControllerManagerConfiguration`;
}

/** The `/configz` section name: `<component without dashes>.<configGroup>`, as the reference names its own. */
export function configzSectionName(n: Naming): string {
  return `${n.controllerManager.replaceAll('-', '')}.${n.configGroup}`;
}

// ---------------------------------------------------------------------------------------------
// The controller manager's schema

export const SECTIONS = {
  generic: 'Generic',
  election: 'Leader-election',
  logs: 'Logs',
  featureGate: 'Feature gate',
  controllers: 'Controllers',
  csrSigning: 'CSR signing controller',
  csrApproving: 'CSR approving controller',
  apiService: 'APIService availability controller',
  serving: 'Secure serving and delegated auth',
} as const;

/**
 * The flag type a float field uses: `flags.ts` has no float type yet, so the value is read as a string and
 * checked here. When `flags.ts` gains one, this is the only line to change.
 */
export const FLOAT_FLAG_TYPE: FlagType = 'string';

export interface SchemaControllerInfo {
  name: string;
  aliases: readonly string[];
  workers: number;
}

export interface SchemaOptions {
  /** Words in flag names (the node agent, the API server): flags are fixed before discovery picks a flavor. */
  naming: Naming;
  /** The controllers `--controllers` may name, and their default worker counts. */
  controllers: readonly SchemaControllerInfo[];
  /** The gate registry: `featureGates` keys and values are checked against it. */
  features: FeatureGates;
  /** Names of the port and address flags (the embedded control plane may already use the reference's). */
  servingFlagNames?: ServingFlagNames;
}

/** Header names the client sets itself, or that only a transport may set. */
const RESERVED_HEADERS = new Set([
  'accept',
  'authorization',
  'connection',
  'content-length',
  'content-type',
  'host',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'user-agent',
]);

const positive = (v: number) => (v > 0 ? undefined : 'must be greater than zero');

function signerFiles(what: string, flagWord: string): StructField<SignerFilesConfiguration> {
  const flag = (part: 'cert' | 'key', usage: string): FlagBinding => ({
    name: `cluster-signing-${flagWord}-${part}-file`,
    section: SECTIONS.csrSigning,
    usage,
  });
  return struct<SignerFilesConfiguration>(`The CA of the ${what} signer.`, {
    certFile: str('', `PEM CA certificate of the ${what} signer.`, {
      flag: flag('cert', `Filename containing a PEM-encoded X509 CA certificate used to issue ${what} certificates.`),
    }),
    keyFile: str('', `PEM private key of the ${what} signer.`, {
      flag: flag('key', `Filename containing a PEM-encoded private key used to sign ${what} certificates.`),
    }),
  });
}

export function controllerManagerSchema(options: SchemaOptions): ConfigSchema {
  const n = options.naming;
  const serving = options.servingFlagNames ?? REFERENCE_SERVING_FLAG_NAMES;
  const knownControllers = new Set(options.controllers.flatMap((c) => [c.name, ...c.aliases]));
  const controllerNames = new Set(options.controllers.map((c) => c.name));
  const gates = options.features;

  return struct<ControllerManagerConfiguration>('The controller manager configuration.', {
    generic: struct<GenericControllerManagerConfiguration>('Settings every controller shares.', {
      clientConnection: struct<ClientConnectionConfiguration>('How the daemon talks to the API server.', {
        qps: float(20, 'Requests per second to the API server.', {
          min: 0,
          flag: {
            name: 'kube-api-qps',
            section: SECTIONS.generic,
            usage: 'QPS to use while talking with the API server.',
          },
        }),
        burst: int(30, 'Requests allowed above qps in a burst.', {
          min: 0,
          flag: {
            name: 'kube-api-burst',
            section: SECTIONS.generic,
            usage: 'Burst to use while talking with the API server.',
          },
        }),
        contentType: oneOf<KubeApiContentType>(
          ['application/vnd.kubernetes.protobuf', 'application/json'],
          'application/vnd.kubernetes.protobuf',
          'What watches of the kinds read from protobuf (pods) ask for; requests are JSON either way.',
          {
            flag: {
              name: 'kube-api-content-type',
              section: SECTIONS.generic,
              usage:
                'Content type asked for in watches of pods, as the reference asks for its requests (requests here are ' +
                'JSON either way).',
            },
          },
        ),
        extraHeaders: {
          kind: 'mapList',
          item: 'string',
          default: {},
          doc: 'HTTP headers added to every API request; a header with several values is sent once per value.',
          normalizeKey: (k) => k.toLowerCase(),
          checkKey: (k) => {
            if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(k)) return 'not a valid HTTP header name';
            if (RESERVED_HEADERS.has(k.toLowerCase())) return 'is set by the client itself and cannot be added';
            return undefined;
          },
          checkItem: (v) => (/[\r\n\0]/.test(v) ? 'must not contain CR, LF or NUL' : undefined),
        },
      }),
      leaderElection: struct<LeaderElectionConfiguration>('The leader lease.', {
        leaderElect: bool(true, 'Acquire the leader lease before running controllers.', {
          flag: {
            name: 'leader-elect',
            section: SECTIONS.election,
            usage: 'Acquire a leader lease before running controllers.',
          },
        }),
        leaseDuration: duration(15_000, 'How long non-leaders wait after a renewal before taking over.', {
          check: positive,
          flag: {
            name: 'leader-elect-lease-duration',
            section: SECTIONS.election,
            usage: 'How long non-leaders wait after observing a renewal before taking over.',
          },
        }),
        renewDeadline: duration(10_000, 'How long the leader retries renewing before giving up.', {
          check: positive,
          flag: {
            name: 'leader-elect-renew-deadline',
            section: SECTIONS.election,
            usage: 'How long the leader retries renewing before giving up.',
          },
        }),
        retryPeriod: duration(2_000, 'Interval between acquire and renew attempts.', {
          check: positive,
          flag: {
            name: 'leader-elect-retry-period',
            section: SECTIONS.election,
            usage: 'Interval between acquire and renew attempts.',
          },
        }),
        resourceLock: oneOf(['leases'], 'leases', 'The kind of lock object; only Lease objects are supported.', {
          flag: {
            name: 'leader-elect-resource-lock',
            section: SECTIONS.election,
            usage:
              "The type of resource object that is used for locking during leader election. Supported option is 'leases'.",
          },
        }),
        resourceName: str(
          '',
          `Name of the Lease; empty means ${DAEMON_NAME} (not the component name, in both flavors).`,
          {
            flag: {
              name: 'leader-elect-resource-name',
              section: SECTIONS.election,
              usage: `Name of the Lease (default ${DAEMON_NAME}).`,
            },
          },
        ),
        resourceNamespace: str('', 'Namespace of the Lease; empty means the system namespace.', {
          flag: {
            name: 'leader-elect-resource-namespace',
            section: SECTIONS.election,
            usage: 'Namespace of the Lease (default the system namespace).',
          },
        }),
        releaseOnCancel: bool(true, 'Release the lease on graceful shutdown.', {
          flag: {
            name: 'leader-elect-release-on-cancel',
            section: SECTIONS.election,
            usage: 'Release the lease on graceful shutdown so a standby takes over at once.',
          },
        }),
      }),
      controllers: {
        kind: 'list',
        item: 'string',
        default: ['*'],
        doc: "Controllers to enable: '*' all on by default, 'foo' enables foo, '-foo' disables foo.",
        flag: {
          name: 'controllers',
          section: SECTIONS.generic,
          usage: "Controllers to enable: '*' all on by default, 'foo' enables foo, '-foo' disables foo.",
        },
        checkItem: (item: string) => {
          if (item === '*') return undefined;
          const name = item.startsWith('-') ? item.slice(1) : item;
          return knownControllers.has(name) ? undefined : `"${name}" is not in the list of known controllers`;
        },
      },
      useServiceAccountCredentials: bool(false, 'Each controller authenticates as its own service account.', {
        flag: {
          name: 'use-service-account-credentials',
          section: SECTIONS.generic,
          usage: 'If true, use individual service account credentials for each controller.',
        },
      }),
    }),
    featureGates: {
      kind: 'map',
      value: 'bool',
      default: {},
      doc: 'Feature gates to set; the others keep their defaults.',
      flag: { name: 'feature-gates', section: SECTIONS.featureGate, usage: gates.usage() },
      checkEntry: (name, value) => gates.problem(name, value),
    },
    concurrency: {
      kind: 'map',
      value: 'int',
      default: Object.fromEntries(options.controllers.map((c) => [c.name, c.workers])),
      doc: 'Workers per controller, by controller name.',
      min: 1,
      keyFlags: options.controllers.map((c) => ({
        key: c.name,
        flag: {
          name: `concurrent-${c.name}-syncs`,
          section: SECTIONS.controllers,
          usage: `Number of ${c.name} objects synced concurrently.`,
        },
      })),
      checkEntry: (name) => (controllerNames.has(name) ? undefined : `"${name}" is not a known controller`),
    },
    csrSigningController: struct<CSRSigningControllerConfiguration>('The certificate signer.', {
      clusterSigningCertFile: str('', 'PEM CA certificate for every signer without its own pair.', {
        flag: {
          name: 'cluster-signing-cert-file',
          section: SECTIONS.csrSigning,
          usage:
            'Filename containing a PEM-encoded X509 CA certificate used to issue cluster-scoped certificates. If specified, no more specific --cluster-signing-* flag may be specified.',
        },
      }),
      clusterSigningKeyFile: str('', 'PEM private key of clusterSigningCertFile.', {
        flag: {
          name: 'cluster-signing-key-file',
          section: SECTIONS.csrSigning,
          usage:
            'Filename containing a PEM-encoded RSA or ECDSA private key used to sign cluster-scoped certificates. If specified, no more specific --cluster-signing-* flag may be specified.',
        },
      }),
      nodeAgentServingSignerConfiguration: signerFiles(n.signers.nodeAgentServing, `${n.nodeAgent}-serving`),
      nodeAgentClientSignerConfiguration: signerFiles(n.signers.apiServerClientNodeAgent, `${n.nodeAgent}-client`),
      apiServerClientSignerConfiguration: signerFiles(n.signers.apiServerClient, `${n.apiServer}-client`),
      legacyUnknownSignerConfiguration: signerFiles(n.signers.legacyUnknown, 'legacy-unknown'),
      clusterSigningDuration: duration(8760 * 3_600_000, 'The longest lifetime of an issued certificate.', {
        check: positive,
        flag: {
          name: 'cluster-signing-duration',
          section: SECTIONS.csrSigning,
          usage:
            'The max length of duration signed certificates will be given. Individual CSRs may request shorter certs by setting spec.expirationSeconds.',
          alias: {
            name: 'experimental-cluster-signing-duration',
            usage: 'Deprecated: use --cluster-signing-duration.',
          },
        },
      }),
    }),
    csrApprovingController: struct<CSRApprovingControllerConfiguration>('The certificate approver.', {
      nodeAgentServing: struct<NodeAgentServingApprovalConfiguration>(
        `Opt-in approval of ${n.signers.nodeAgentServing} requests from nodes.`,
        {
          enabled: bool(false, 'Approve serving certificate requests that pass the checks below.', {
            flag: {
              name: `${n.nodeAgent}-serving-approval`,
              section: SECTIONS.csrApproving,
              usage: `Approve ${n.signers.nodeAgentServing} CSRs from the node itself whose SANs are its own addresses.`,
            },
          }),
          dnsNamePatterns: {
            kind: 'list',
            item: 'string',
            default: [],
            doc: "Regular expressions a DNS name may match whole when it is not the node's Hostname address.",
            flag: {
              name: `${n.nodeAgent}-serving-approval-dns-pattern`,
              section: SECTIONS.csrApproving,
              usage: "Regular expression a DNS SAN may match besides the node's Hostname address (repeatable).",
              // A pattern may hold commas (`a{1,3}`): one pattern per flag.
              splitCommas: false,
            },
            checkItem: (p: string) => {
              try {
                new RegExp(`^(?:${p})$`);
                return undefined;
              } catch (err) {
                return `not a valid regular expression: ${(err as Error).message}`;
              }
            },
          },
          maxExpirationSeconds: int(0, 'Longest spec.expirationSeconds approved; 0 for no limit.', {
            check: (v) => (v === 0 || v >= 600 ? undefined : 'must be 0 (no limit) or at least 600'),
            flag: {
              name: `${n.nodeAgent}-serving-approval-max-duration`,
              section: SECTIONS.csrApproving,
              usage: 'Longest serving certificate lifetime approved (default: --cluster-signing-duration).',
              durationSeconds: true,
            },
          }),
        },
      ),
    }),
    clusterTrustBundlePublisherController: struct<ClusterTrustBundlePublisherConfiguration>(
      "The publisher of the API server serving signer's trust bundle.",
      {
        rootCAFile: str('', "The cluster's root CA bundle to publish; empty: the API client's CA.", {
          flag: {
            name: 'root-ca-file',
            section: SECTIONS.csrSigning,
            usage:
              "The cluster's root CA bundle, published as the root CA ConfigMap's ca.crt in every namespace and as the API server serving signer's ClusterTrustBundle (default: the CA the API client trusts).",
          },
        }),
      },
    ),
    apiServiceAvailabilityController: struct<APIServiceAvailabilityConfiguration>(
      'The APIService availability check.',
      {
        probeVerifyTLS: bool(true, "Verify the backend's certificate in the discovery probe.", {
          flag: {
            name: 'apiservice-probe-verify-tls',
            section: SECTIONS.apiService,
            usage:
              "Verify an aggregated API server's certificate in the availability probe against spec.caBundle (the system roots when unset) unless insecureSkipTLSVerify is set; false probes without verification, as the reference does.",
          },
        }),
      },
    ),
    logging: struct<LoggingConfiguration>('Logs.', {
      format: oneOf<LoggingFormat>(['text', 'json'], 'text', 'Log format.', {
        flag: { name: 'logging-format', section: SECTIONS.logs, usage: 'Log format: text or json.' },
      }),
      verbosity: int(2, 'Log verbosity.', {
        min: 0,
        flag: { name: 'v', section: SECTIONS.logs, usage: 'Log verbosity.' },
      }),
    }),
    serving: struct<ServingConfiguration>('The diagnostics server (health, metrics, z-pages).', {
      bindAddress: str(DEFAULT_BIND_ADDRESS, 'Address to listen on.', {
        check: (v) => (isIP(v) ? undefined : 'must be an IP address'),
        flag: {
          name: serving.bindAddress,
          section: SECTIONS.serving,
          usage: 'The IP address on which to serve health, metrics and z-pages.',
        },
      }),
      securePort: int(DEFAULT_SECURE_PORT, 'HTTPS port; 0 disables serving.', {
        min: 0,
        max: 65535,
        flag: {
          name: serving.securePort,
          section: SECTIONS.serving,
          usage: 'The port on which to serve HTTPS with authentication and authorization. 0 disables serving.',
        },
      }),
      certFile: str('', 'Serving certificate (and intermediates).', {
        flag: {
          name: 'tls-cert-file',
          section: SECTIONS.serving,
          usage:
            'File with the serving certificate (and intermediates). Without it a self-signed certificate is made in memory.',
        },
      }),
      keyFile: str('', 'Private key of certFile.', {
        flag: {
          name: 'tls-private-key-file',
          section: SECTIONS.serving,
          usage: 'File with the private key of --tls-cert-file.',
        },
      }),
      clientCAFile: str('', 'CA bundle client certificates are verified against.', {
        flag: {
          name: 'client-ca-file',
          section: SECTIONS.serving,
          usage:
            'CA bundle that client certificates are verified against; the CN is the user, the O entries the groups.',
        },
      }),
      alwaysAllowPaths: {
        kind: 'list',
        item: 'string',
        default: [...DEFAULT_ALWAYS_ALLOW_PATHS],
        doc: 'Paths served without authorization; a trailing * matches a prefix.',
        flag: {
          name: 'authorization-always-allow-paths',
          section: SECTIONS.serving,
          usage: 'Paths served without authorization (a trailing * matches a prefix).',
        },
        checkItem: (p: string) => {
          if (!p.startsWith('/')) return 'must start with /';
          try {
            pathMatcher([p]);
            return undefined;
          } catch (err) {
            return (err as Error).message;
          }
        },
      },
    }),
  });
}

// ---------------------------------------------------------------------------------------------
// Defaults, flags, and a listing of the schema

/** A fresh configuration holding every default. */
export function defaultConfiguration(schema: ConfigSchema): ControllerManagerConfiguration {
  return defaultsOf(asAnyStruct(schema)) as ControllerManagerConfiguration;
}

export function defaultsOf(field: AnyField): unknown {
  switch (field.kind) {
    case 'scalar':
      return field.default;
    case 'list':
      return [...field.default];
    case 'map':
      return { ...field.default };
    case 'mapList':
      return Object.fromEntries(Object.entries(field.default).map(([k, v]) => [k, [...(v as unknown[])]]));
    case 'struct':
      return Object.fromEntries(Object.entries(field.fields).map(([k, f]) => [k, defaultsOf(f)]));
  }
}

export interface FlagTarget {
  /** The flag. */
  spec: FlagSpec;
  /** Field path in the configuration, e.g. `generic.leaderElection.leaseDuration` or `concurrency[csrsigning]`. */
  path: string;
  /** The path as names, e.g. `['concurrency', 'csrsigning']`. */
  segments: string[];
  field: AnyField;
  /** For a flag that sets one key of a map. */
  key?: string;
  /** For a deprecated alias: the flag that wins over it. */
  aliasOf?: string;
}

function scalarFlagType(type: ScalarType): FlagType {
  return type === 'float' ? FLOAT_FLAG_TYPE : type;
}

function renderScalar(type: ScalarType, value: unknown): string {
  return type === 'duration' ? formatGoDuration(value as number) : String(value);
}

/** Every flag the schema binds, with the field it sets, in schema order. */
export function flagTargets(schema: ConfigSchema): FlagTarget[] {
  const out: FlagTarget[] = [];
  const walk = (field: AnyField, segments: string[]) => {
    const path = fieldPath(segments);
    const make = (b: FlagBinding, type: FlagType, def: string | undefined): FlagSpec => ({
      name: b.name,
      type,
      section: b.section,
      usage: b.usage,
      ...(def !== undefined && def !== '' ? { default: def } : {}),
    });
    switch (field.kind) {
      case 'scalar': {
        if (!field.flag) return;
        const seconds = field.flag.durationSeconds === true;
        const type = seconds ? 'duration' : scalarFlagType(field.type);
        let def: string | undefined = renderScalar(field.type, field.default);
        if (seconds) def = field.default ? formatGoDuration(field.default * 1000) : undefined;
        const alias = field.flag.alias;
        if (alias) {
          const spec = make({ ...field.flag, ...alias }, type, undefined);
          out.push({ spec, path, segments, field, aliasOf: field.flag.name });
        }
        out.push({ spec: make(field.flag, type, def), path, segments, field });
        return;
      }
      case 'list':
        if (field.flag)
          out.push({ spec: make(field.flag, 'stringArray', field.default.join(',')), path, segments, field });
        return;
      case 'map':
        if (field.flag) out.push({ spec: make(field.flag, 'mapStringBool', undefined), path, segments, field });
        for (const kf of field.keyFlags ?? []) {
          const def = field.default[kf.key];
          out.push({
            spec: make(
              kf.flag,
              scalarFlagType(field.value),
              def === undefined ? undefined : renderScalar(field.value, def),
            ),
            path: fieldPath([...segments, kf.key], 1),
            segments: [...segments, kf.key],
            field,
            key: kf.key,
          });
        }
        return;
      case 'mapList':
        return;
      case 'struct':
        for (const [name, f] of Object.entries(field.fields)) walk(f, [...segments, name]);
        return;
    }
  };
  walk(asAnyStruct(schema), []);
  const seen = new Set<string>();
  for (const t of out) {
    if (seen.has(t.spec.name)) throw new Error(`configuration schema: flag --${t.spec.name} is bound twice`);
    seen.add(t.spec.name);
  }
  return out;
}

/** The flags that set configuration fields, for `parseFlags` and `usage`. */
export function configFlagSpecs(schema: ConfigSchema): FlagSpec[] {
  return flagTargets(schema).map((t) => t.spec);
}

/** `--config` and `--config-dir`. */
export function configFileFlagSpecs(): FlagSpec[] {
  return [
    {
      name: 'config',
      type: 'string',
      section: SECTIONS.generic,
      usage:
        'The path to the configuration file (YAML or JSON). Drop-ins from --config-dir, then command-line flags, override values from this file.',
    },
    {
      name: 'config-dir',
      type: 'string',
      section: SECTIONS.generic,
      usage:
        'Path to a directory of drop-in configuration files (*.conf, YAML or JSON), merged in lexical order of their names over --config.',
    },
  ];
}

/**
 * Renders a path the way the reference's field paths read: `a.b` for fields, `a[key]` for map keys and
 * `a[0]` for list items. `keyed` says how many trailing segments are map keys or indexes.
 */
export function fieldPath(segments: readonly string[], keyed = 0): string {
  let out = '';
  segments.forEach((s, i) => {
    if (i >= segments.length - keyed) out += `[${s}]`;
    else out += out ? `.${s}` : s;
  });
  return out;
}

export interface SchemaRow {
  path: string;
  kind: AnyField['kind'];
  type: string;
  default: string;
  flag: string;
}

/** One row per leaf field: kind, type, default (as a file would spell it) and flag. For docs and review. */
export function describeSchema(schema: ConfigSchema): SchemaRow[] {
  const flags = new Map<string, string[]>();
  for (const t of flagTargets(schema)) {
    const p = fieldPath(t.segments.slice(0, t.key === undefined ? t.segments.length : -1));
    flags.set(p, [...(flags.get(p) ?? []), `--${t.spec.name}`]);
  }
  const rows: SchemaRow[] = [];
  const walk = (field: AnyField, segments: string[]) => {
    const path = fieldPath(segments);
    const flag = (flags.get(path) ?? []).join(' ');
    switch (field.kind) {
      case 'struct':
        for (const [name, f] of Object.entries(field.fields)) walk(f, [...segments, name]);
        return;
      case 'scalar':
        rows.push({ path, kind: 'scalar', type: field.type, default: renderScalar(field.type, field.default), flag });
        return;
      case 'list':
        rows.push({ path, kind: 'list', type: `[]${field.item}`, default: JSON.stringify(field.default), flag });
        return;
      case 'map':
        rows.push({
          path,
          kind: 'map',
          type: `map[string]${field.value}`,
          default: JSON.stringify(field.default),
          flag,
        });
        return;
      case 'mapList':
        rows.push({
          path,
          kind: 'mapList',
          type: `map[string][]${field.item}`,
          default: JSON.stringify(field.default),
          flag,
        });
        return;
    }
  };
  walk(asAnyStruct(schema), []);
  return rows;
}
