/**
 * Command-line flags of the diagnostics server that are not configuration fields (review cache TTLs), the
 * reference's names of the serving flags, and the flag values `/flagz` reports.
 */
import type { FlagSpec, Flags } from '../cli/flags.ts';

const SECTION = 'Secure serving and delegated auth';

export interface ServingFlagNames {
  securePort: string;
  bindAddress: string;
}

export const REFERENCE_SERVING_FLAG_NAMES: ServingFlagNames = {
  securePort: 'secure-port',
  bindAddress: 'bind-address',
};

/**
 * The review-cache flags. The serving flags themselves (port, address, certificates, client CA,
 * always-allowed paths) are fields of the component configuration and bound there.
 */
export function reviewCacheFlags(): FlagSpec[] {
  const ttl = (name: string, usage: string): FlagSpec => ({
    name,
    type: 'duration',
    section: SECTION,
    default: '10s',
    usage,
  });
  return [
    ttl('authentication-token-webhook-cache-ttl', 'How long TokenReview answers are cached.'),
    ttl('authorization-webhook-cache-authorized-ttl', 'How long allowed SubjectAccessReview answers are cached.'),
    ttl('authorization-webhook-cache-unauthorized-ttl', 'How long denied SubjectAccessReview answers are cached.'),
  ];
}

export interface ReviewCacheTtls {
  tokenTtlMs: number;
  allowTtlMs: number;
  denyTtlMs: number;
}

export function reviewCacheTtls(flags: Flags): ReviewCacheTtls {
  return {
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
