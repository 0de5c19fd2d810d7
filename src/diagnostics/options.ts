/**
 * Command-line flags of the diagnostics server in the reference's names, turned into server options, and the
 * flag values `/flagz` reports. The port and address flags are named by the caller, since a binary with an
 * embedded control plane already uses `--secure-port` and `--bind-address` for that.
 */
import type { FlagSpec, Flags } from '../cli/flags.ts';
import { DEFAULT_ALWAYS_ALLOW_PATHS } from './auth.ts';
import { DEFAULT_BIND_ADDRESS, DEFAULT_SECURE_PORT, type DiagnosticsServerOptions } from './server.ts';

const SECTION = 'Secure serving and delegated auth';

export interface ServingFlagNames {
  securePort: string;
  bindAddress: string;
}

export const REFERENCE_SERVING_FLAG_NAMES: ServingFlagNames = {
  securePort: 'secure-port',
  bindAddress: 'bind-address',
};

export function diagnosticsFlags(names: ServingFlagNames = REFERENCE_SERVING_FLAG_NAMES): FlagSpec[] {
  return [
    {
      name: names.bindAddress,
      type: 'string',
      section: SECTION,
      default: DEFAULT_BIND_ADDRESS,
      usage: 'The IP address on which to serve health, metrics and z-pages.',
    },
    {
      name: names.securePort,
      type: 'int',
      section: SECTION,
      default: String(DEFAULT_SECURE_PORT),
      usage: 'The port on which to serve HTTPS with authentication and authorization. 0 disables serving.',
    },
    {
      name: 'tls-cert-file',
      type: 'string',
      section: SECTION,
      usage:
        'File with the serving certificate (and intermediates). Without it a self-signed certificate is made in memory.',
    },
    {
      name: 'tls-private-key-file',
      type: 'string',
      section: SECTION,
      usage: 'File with the private key of --tls-cert-file.',
    },
    {
      name: 'client-ca-file',
      type: 'string',
      section: SECTION,
      usage: 'CA bundle that client certificates are verified against; the CN is the user, the O entries the groups.',
    },
    {
      name: 'authentication-token-webhook-cache-ttl',
      type: 'duration',
      section: SECTION,
      default: '10s',
      usage: 'How long TokenReview answers are cached.',
    },
    {
      name: 'authorization-webhook-cache-authorized-ttl',
      type: 'duration',
      section: SECTION,
      default: '10s',
      usage: 'How long allowed SubjectAccessReview answers are cached.',
    },
    {
      name: 'authorization-webhook-cache-unauthorized-ttl',
      type: 'duration',
      section: SECTION,
      default: '10s',
      usage: 'How long denied SubjectAccessReview answers are cached.',
    },
    {
      name: 'authorization-always-allow-paths',
      type: 'stringArray',
      section: SECTION,
      default: DEFAULT_ALWAYS_ALLOW_PATHS.join(','),
      usage: 'Paths served without authorization (a trailing * matches a prefix).',
    },
  ];
}

export interface DiagnosticsFlagValues {
  server: Partial<DiagnosticsServerOptions>;
  tokenTtlMs: number;
  allowTtlMs: number;
  denyTtlMs: number;
}

/** Server options (without the reviewers, which need a client) and cache TTLs from parsed flags. */
export function diagnosticsOptionsFromFlags(
  flags: Flags,
  names: ServingFlagNames = REFERENCE_SERVING_FLAG_NAMES,
): DiagnosticsFlagValues {
  const given = flags.all('authorization-always-allow-paths');
  const paths = (given.length ? given : [flags.string('authorization-always-allow-paths') ?? ''])
    .flatMap((v) => v.split(','))
    .map((p) => p.trim())
    .filter(Boolean);
  return {
    server: {
      bindAddress: flags.string(names.bindAddress),
      securePort: flags.int(names.securePort),
      tlsCertFile: flags.string('tls-cert-file'),
      tlsPrivateKeyFile: flags.string('tls-private-key-file'),
      clientCaFile: flags.string('client-ca-file'),
      alwaysAllowPaths: paths,
    },
    tokenTtlMs: flags.durationMs('authentication-token-webhook-cache-ttl') ?? 10_000,
    allowTtlMs: flags.durationMs('authorization-webhook-cache-authorized-ttl') ?? 10_000,
    denyTtlMs: flags.durationMs('authorization-webhook-cache-unauthorized-ttl') ?? 10_000,
  };
}

/** What `/flagz` shows: every flag with its given value (the last one; lists joined) or its default. */
export function flagzValues(specs: readonly FlagSpec[], flags: Flags): Record<string, string> {
  const out: Record<string, string> = {};
  for (const spec of specs) {
    const given = flags.all(spec.name);
    if (spec.type === 'stringArray')
      out[spec.name] = `[${(given.length ? given : spec.default ? [spec.default] : []).join(',')}]`;
    else if (given.length === 0) out[spec.name] = spec.default ?? (spec.type === 'bool' ? 'false' : '');
    else if (spec.type === 'mapStringBool') out[spec.name] = given.join(',');
    else out[spec.name] = given[given.length - 1];
  }
  return out;
}
