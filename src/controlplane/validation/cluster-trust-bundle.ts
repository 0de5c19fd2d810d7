/**
 * ClusterTrustBundle (`certificates.<suffix>/v1`, cluster-scoped).
 *
 * Name: with a signerName, `<signerName with '/' → ':'>:<DNS subdomain>`; without one, a DNS subdomain with no
 * `:`. signerName (when set) is a signer name and immutable. trustBundle: at most 1 MiB of PEM; only
 * `CERTIFICATE` blocks, no headers, each a parseable X.509 CA certificate; at least one; no duplicates.
 * On update the bundle is re-checked only when it changed.
 */

import { child, type FieldError, invalid, required, tooLong, validateImmutableField } from '../../api/field-errors.ts';
import {
  byteLength,
  type NameFn,
  nameIsDNSSubdomain,
  validateObjectMeta,
  validateObjectMetaUpdate,
  validateSignerName,
} from './common.ts';
import type { ValidationContext } from './context.ts';
import { decodePem } from './pem.ts';
import { absent, checkShape, isObj, type Obj, obj, rootProblem, str, topLevel } from './raw.ts';
import { basicConstraints, parseCertificate } from './x509.ts';

/** The largest trust bundle accepted, in bytes. */
export const MAX_TRUST_BUNDLE_SIZE = 1024 * 1024;

const SHAPE = topLevel({ spec: { fields: { signerName: 'string', trustBundle: 'string' } } });

/** The name rule for a bundle of the given signer (`prefix` = the value is a generateName). */
export function clusterTrustBundleNameFn(signerName: string): NameFn {
  return (name, prefix) => {
    if (!signerName) {
      if (name.includes(':')) return ['ClusterTrustBundle without signer name must not have ":" in its name'];
      return nameIsDNSSubdomain(name, prefix);
    }
    const requiredPrefix = `${signerName.replaceAll('/', ':')}:`;
    if (!name.startsWith(requiredPrefix)) {
      return [`ClusterTrustBundle for signerName ${signerName} must be named with prefix ${requiredPrefix}`];
    }
    return nameIsDNSSubdomain(name.slice(requiredPrefix.length), prefix);
  };
}

/** Problems of a PEM trust bundle, each reported at `path` with the value omitted. */
export function validateTrustBundle(path: string, bundle: string): FieldError[] {
  if (byteLength(bundle) > MAX_TRUST_BUNDLE_SIZE) return [tooLong(path, MAX_TRUST_BUNDLE_SIZE)];
  const errs: FieldError[] = [];
  const omitted = '<value omitted>';
  const seen = new Map<string, number[]>();
  let rest = bundle;
  let i = -1;
  for (;;) {
    const next = decodePem(rest);
    if (!next) break;
    rest = next.rest;
    i++;
    const { block } = next;
    if (block.type !== 'CERTIFICATE') {
      errs.push(invalid(path, omitted, `entry ${i} has bad block type: ${block.type}`));
      continue;
    }
    if (Object.keys(block.headers).length) {
      errs.push(invalid(path, omitted, `entry ${i} has PEM block headers`));
      continue;
    }
    const parsed = parseCertificate(block.bytes);
    if (!parsed.ok) {
      errs.push(invalid(path, omitted, `entry ${i} does not parse as X.509`));
      continue;
    }
    const bc = basicConstraints(parsed.cert);
    if (!bc.ca) {
      errs.push(invalid(path, omitted, `entry ${i} does not have the CA bit set`));
      continue;
    }
    if (!bc.present) {
      errs.push(invalid(path, omitted, `entry ${i} has invalid basic constraints`));
      continue;
    }
    const der = block.bytes.toString('base64');
    seen.set(der, [...(seen.get(der) ?? []), i]);
  }
  // A malformed block already explains the problem: no duplicate or emptiness errors on top.
  if (errs.length) return errs;
  if (seen.size === 0) errs.push(invalid(path, omitted, 'at least one trust anchor must be provided'));
  for (const indices of seen.values()) {
    if (indices.length > 1)
      errs.push(invalid(path, omitted, `duplicate trust anchor (indices [${indices.join(' ')}])`));
  }
  return errs;
}

function validate(o: unknown, parseBundle: boolean): FieldError[] {
  const root = rootProblem(o);
  if (root.length) return root;
  const ctb = o as Obj;
  const errs = checkShape(o, SHAPE, '');
  const spec = obj(ctb.spec);
  if (!spec && absent(ctb.spec)) errs.push(required('spec'));
  const signerName = str(spec?.signerName) ?? '';
  errs.push(...validateObjectMeta(ctb.metadata, false, clusterTrustBundleNameFn(signerName)));
  if (signerName) errs.push(...validateSignerName(child('spec', 'signerName'), signerName));
  if (spec && parseBundle) {
    const bundle = spec.trustBundle;
    if (typeof bundle === 'string' || absent(bundle))
      errs.push(...validateTrustBundle(child('spec', 'trustBundle'), str(bundle) ?? ''));
  }
  return errs;
}

export function validateClusterTrustBundleCreate(o: unknown, _ctx?: ValidationContext): FieldError[] {
  return validate(o, true);
}

export function validateClusterTrustBundleUpdate(o: unknown, old: unknown, _ctx?: ValidationContext): FieldError[] {
  const spec = obj(obj(o)?.spec);
  const oldSpec = obj(obj(old)?.spec);
  const errs = validate(o, spec?.trustBundle !== oldSpec?.trustBundle);
  if (!isObj(o)) return errs;
  errs.push(...validateObjectMetaUpdate(o.metadata, obj(old)?.metadata));
  errs.push(
    ...validateImmutableField(str(spec?.signerName) ?? '', str(oldSpec?.signerName) ?? '', child('spec', 'signerName')),
  );
  return errs;
}
