/** `certificates.<group suffix>/v1` shapes as raw JSON: CertificateSigningRequest and ClusterTrustBundle. */
import type { KubeObject } from '../meta.ts';
import type { Open } from './core.ts';

/** The key usages a CSR may request (spec §2.1). */
export type KeyUsage =
  | 'signing'
  | 'digital signature'
  | 'content commitment'
  | 'key encipherment'
  | 'key agreement'
  | 'data encipherment'
  | 'cert sign'
  | 'crl sign'
  | 'encipher only'
  | 'decipher only'
  | 'any'
  | 'server auth'
  | 'client auth'
  | 'code signing'
  | 'email protection'
  | 's/mime'
  | 'ipsec end system'
  | 'ipsec tunnel'
  | 'ipsec user'
  | 'timestamping'
  | 'ocsp signing'
  | 'microsoft sgc'
  | 'netscape sgc';

/**
 * Immutable after creation. Only `request`, `signerName`, `expirationSeconds` and `usages` can be set on
 * creation; `username`, `uid`, `groups` and `extra` are populated by the server.
 */
export interface CertificateSigningRequestSpec {
  /** Required: a `CERTIFICATE REQUEST` PEM block, base64-encoded once more in JSON. */
  request: string;
  /** Required qualified signer name; field selector `spec.signerName`. */
  signerName: string;
  /**
   * Requested validity in seconds; minimum 600. A signer may issue a different duration; built-in signers
   * honor it up to their configured maximum and older signers ignore it.
   */
  expirationSeconds?: number;
  /** Client certificates typically use digital signature, key encipherment, client auth. */
  usages?: KeyUsage[];
  /** Requesting user; server-populated, immutable. */
  username?: string;
  /** Requesting user's uid; server-populated, immutable. */
  uid?: string;
  /** Requesting user's groups; server-populated, immutable. */
  groups?: string[];
  /** Extra attributes of the requesting user; server-populated, immutable. */
  extra?: Record<string, string[]>;
}

export type CertificateSigningRequestConditionType = 'Approved' | 'Denied' | 'Failed';

export interface CertificateSigningRequestCondition {
  /**
   * `Approved`, `Denied` or `Failed` (custom types are allowed). Approved and Denied are mutually exclusive;
   * these conditions cannot be removed once added and only one of each type is allowed.
   */
  type: Open<CertificateSigningRequestConditionType>;
  /** `Approved`, `Denied` and `Failed` conditions may not be `False` or `Unknown`. */
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastUpdateTime?: string;
  /** Defaults to now when unset and a condition is added or its status changes. */
  lastTransitionTime?: string;
}

export interface CertificateSigningRequestStatus {
  /**
   * Issued PEM chain (base64-encoded once more in JSON): set by the signer via `/status` after an `Approved`
   * condition exists; immutable once set; stays empty when denied or failed. The first block is the issued
   * certificate, later blocks are intermediates.
   */
  certificate?: string;
  /** Added via `/approval` (Approved, Denied) or `/status` (Failed). */
  conditions?: CertificateSigningRequestCondition[];
}

/** A request for an x509 certificate from a named signer, approved or denied, then issued asynchronously (spec §2.1). Cluster-scoped. */
export interface CertificateSigningRequest extends KubeObject {
  spec: CertificateSigningRequestSpec;
  status?: CertificateSigningRequestStatus;
}

export interface ClusterTrustBundleSpec {
  /**
   * Optional associated signer. When non-empty the object name must be the signer name with `/` turned into
   * `:`, then `:` and a suffix; when empty the name must not carry such a prefix. Writing a bundle with a
   * signer needs verb `attest` on `signers` named after it. Field selector `spec.signerName`.
   */
  signerName?: string;
  /**
   * Required PEM bundle of CA certificates (basic constraints with the CA bit set); duplicates and PEM block
   * headers are rejected.
   */
  trustBundle: string;
}

/** A cluster-scoped set of x509 trust anchors, optionally tied to a signer (spec §2.5). */
export interface ClusterTrustBundle extends KubeObject {
  spec: ClusterTrustBundleSpec;
}
