/**
 * The certificate controllers' configuration (under `certificates` in the component configuration), the
 * signer start-up rules (reference §3.1).
 */
import { type Naming, naming } from '../../src/api/naming.ts';
import { DEFAULT_CERT_TTL_MS } from './signing/policy.ts';

export const SIGNER_KEYS = [
  'nodeAgentServing',
  'apiServerClientNodeAgent',
  'apiServerClient',
  'legacyUnknown',
] as const;
export type SignerKey = (typeof SIGNER_KEYS)[number];

export interface FilePair {
  certFile?: string;
  keyFile?: string;
}

export interface SigningConfig extends FilePair {
  /** Pairs for one signer each; cannot be combined with the single pair. */
  perSigner: Partial<Record<SignerKey, FilePair>>;
  /** Maximum certificate lifetime (`--cluster-signing-duration`). */
  durationMs: number;
}

export interface ServingApprovalConfig {
  /** Approve node agent serving CSRs that pass every rule (off by default: no reference controller does it). */
  enabled: boolean;
  /** Regular expressions a DNS SAN may fully match when it is not the node's Hostname address. */
  dnsPatterns: string[];
  /** Longest lifetime approved; unset: the cluster signing duration. */
  maxDurationMs?: number;
}

export interface CertificatesConfig {
  signing: SigningConfig;
  servingApproval: ServingApprovalConfig;
  /** The serving CA the trust-bundle publisher publishes; the API client's CA when unset. */
  rootCaFile?: string;
}

export const DEFAULT_CERTIFICATES_CONFIG: CertificatesConfig = {
  signing: { perSigner: {}, durationMs: DEFAULT_CERT_TTL_MS },
  servingApproval: { enabled: false, dnsPatterns: [] },
};

/** The `certificates` part of a component configuration, with defaults for what is missing. */
export function certificatesConfig(config: Record<string, unknown>): CertificatesConfig {
  const given = (config.certificates ?? {}) as Partial<CertificatesConfig>;
  return {
    signing: { ...DEFAULT_CERTIFICATES_CONFIG.signing, ...given.signing },
    servingApproval: { ...DEFAULT_CERTIFICATES_CONFIG.servingApproval, ...given.servingApproval },
    rootCaFile: given.rootCaFile,
  };
}

// ---------------------------------------------------------------------------------------------
// the signer start-up rules

/** The flag family of each signer's pair, with the node agent and API server words of the default naming. */
export function signerFlagFamily(key: SignerKey, n: Naming = naming()): string {
  switch (key) {
    case 'nodeAgentServing':
      return `cluster-signing-${n.nodeAgent}-serving`;
    case 'apiServerClientNodeAgent':
      return `cluster-signing-${n.nodeAgent}-client`;
    case 'apiServerClient':
      return `cluster-signing-${n.apiServer}-client`;
    case 'legacyUnknown':
      return 'cluster-signing-legacy-unknown';
  }
}

/** Options validation: every problem, in the reference's words. */
export function validateSigningConfig(c: SigningConfig): string[] {
  const errors: string[] = [];
  const single = Boolean(c.certFile || c.keyFile);
  const anyPerSigner = SIGNER_KEYS.some((k) => c.perSigner[k]?.certFile || c.perSigner[k]?.keyFile);
  if (single && anyPerSigner) {
    errors.push(
      'cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags at the same time',
    );
  }
  for (const k of SIGNER_KEYS) {
    const pair = c.perSigner[k] ?? {};
    const problem = pairProblem(pair);
    if (problem) errors.push(`${JSON.stringify(signerFlagFamily(k))}: ${problem}`);
  }
  if (!(c.durationMs > 0)) errors.push('--cluster-signing-duration must be positive');
  return errors;
}

function pairProblem(pair: FilePair): string | undefined {
  if (!pair.certFile && pair.keyFile) return 'cannot specify key without cert';
  if (pair.certFile && !pair.keyFile) return 'cannot specify cert without key';
  return undefined;
}

export interface SigningPlan {
  /** The loops to run, each with its signer name and CA files. */
  loops: { key: SignerKey; signer: string; certFile: string; keyFile: string }[];
  /** Signers without a loop, and why (logged at start). */
  skipped: { signer: string; why: string }[];
}

/** Which signing loops start (reference §3.1 decision table); throws on the combinations that are errors. */
export function signingPlan(c: SigningConfig, n: Naming): SigningPlan {
  const errors = validateSigningConfig(c);
  const anyPerSigner = SIGNER_KEYS.some((k) => c.perSigner[k]?.certFile || c.perSigner[k]?.keyFile);
  if (c.certFile && c.keyFile && anyPerSigner)
    throw new Error('cannot specify default and per controller certs at the same time');
  if (errors.length) throw new Error(errors.join('; '));
  if (c.certFile && c.keyFile) {
    return {
      loops: SIGNER_KEYS.map((key) => ({ key, signer: n.signers[key], certFile: c.certFile!, keyFile: c.keyFile! })),
      skipped: [],
    };
  }
  const plan: SigningPlan = { loops: [], skipped: [] };
  for (const key of SIGNER_KEYS) {
    const pair = c.perSigner[key];
    if (pair?.certFile && pair.keyFile) {
      plan.loops.push({ key, signer: n.signers[key], certFile: pair.certFile, keyFile: pair.keyFile });
    } else {
      plan.skipped.push({ signer: n.signers[key], why: 'no CA files configured for it' });
    }
  }
  return plan;
}
