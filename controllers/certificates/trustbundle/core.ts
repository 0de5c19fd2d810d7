/**
 * The API server serving trust-bundle publisher's pure core (reference §5.2): the bundle's name from its bytes,
 * and the writes that make the signer's bundles exactly one, holding the current CA bytes verbatim.
 */
import { createHash } from 'node:crypto';
import type { ClusterTrustBundle } from '../../../src/api/types/certificates.ts';
import { parsesAsCertificate } from '../../../src/pki/certificate.ts';
import { splitPemBlocks } from '../../../src/pki/pem.ts';

/** `<signer with "/" as ":">:<hex of the first 12 bytes of SHA-256 of the bundle>`. */
export function bundleName(signer: string, bundle: string): string {
  const digest = createHash('sha256').update(bundle, 'utf8').digest('hex').slice(0, 24);
  return `${signer.replaceAll('/', ':')}:${digest}`;
}

/** Whether the bytes hold at least one certificate and every CERTIFICATE block parses. */
export function bundleProblem(bundle: string): string | undefined {
  let blocks: ReturnType<typeof splitPemBlocks>;
  try {
    blocks = splitPemBlocks(bundle).filter((b) => b.type === 'CERTIFICATE');
  } catch (err) {
    return (err as Error).message;
  }
  if (!blocks.length) return 'no certificate found';
  const malformed = blocks.findIndex((b) => !parsesAsCertificate(b.der));
  return malformed < 0 ? undefined : `certificate ${malformed} does not parse`;
}

export interface PublishPlan {
  create?: ClusterTrustBundle;
  /** The existing bundle with only `spec.trustBundle` replaced. */
  update?: ClusterTrustBundle;
  /** Names of the signer's other bundles. */
  delete: string[];
}

export function publishPlan(signer: string, bundle: string, existing: readonly ClusterTrustBundle[]): PublishPlan {
  const name = bundleName(signer, bundle);
  const current = existing.find((b) => b.metadata.name === name);
  const plan: PublishPlan = {
    delete: existing
      .filter((b) => b.metadata.name !== name && b.spec?.signerName === signer)
      .map((b) => b.metadata.name!),
  };
  if (!current) {
    plan.create = { metadata: { name }, spec: { signerName: signer, trustBundle: bundle } };
  } else if (current.spec?.trustBundle !== bundle) {
    plan.update = { ...current, spec: { ...current.spec, trustBundle: bundle } };
  }
  return plan;
}
