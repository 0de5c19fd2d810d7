/**
 * CertificateSigningRequest (`certificates.<suffix>/v1`, cluster-scoped): create, update, `/status` and
 * `/approval` validation, and the condition timestamps the server fills in.
 *
 * Create: the request is one `CERTIFICATE REQUEST` PEM block whose self-signature verifies; signerName is a
 * signer name (the legacy-unknown signer is refused); expirationSeconds >= 600; usages are required, known
 * and unique. Conditions: type required; Approved, Denied and Failed only with status True; Approved and
 * Denied exclusive; one condition per type. `status.certificate`: `CERTIFICATE` blocks only, no headers, each
 * parseable. Updates: the spec is immutable; Approved, Denied and Failed conditions are never removed;
 * Approved and Denied change only through `/approval`; the certificate is set only through `/status` and
 * only once. Problems that already exist in the stored object are tolerated, as the reference does.
 */

import {
  child,
  deepEqual,
  duplicate,
  type FieldError,
  forbidden,
  goQuote,
  index,
  invalid,
  notSupported,
  required,
} from '../../api/field-errors.ts';
import { certificateParseError } from '../../pki/certificate.ts';
import { validateObjectMeta, validateObjectMetaUpdate, validateSignerName } from './common.ts';
import type { ValidationContext } from './context.ts';
import { decodePem } from './pem.ts';
import { absent, arr, bytes, checkShape, int, isObj, type Obj, obj, rootProblem, str, topLevel } from './raw.ts';
import { checkCertificateRequest } from './x509.ts';

/** The key usages a request may name, in the reference's (sorted) order. */
export const KEY_USAGES: readonly string[] = [
  'any',
  'cert sign',
  'client auth',
  'code signing',
  'content commitment',
  'crl sign',
  'data encipherment',
  'decipher only',
  'digital signature',
  'email protection',
  'encipher only',
  'ipsec end system',
  'ipsec tunnel',
  'ipsec user',
  'key agreement',
  'key encipherment',
  'microsoft sgc',
  'netscape sgc',
  'ocsp signing',
  's/mime',
  'server auth',
  'signing',
  'timestamping',
];

export const MIN_EXPIRATION_SECONDS = 600;

const DECISION_TYPES = ['Approved', 'Denied', 'Failed'];
const TRUE_ONLY = ['True'];
const ALL_STATUSES = ['False', 'True', 'Unknown'];
const SPEC_FIELDS = ['request', 'signerName', 'expirationSeconds', 'usages', 'username', 'uid', 'groups', 'extra'];

const SHAPE = topLevel({
  spec: {
    fields: {
      request: 'bytes',
      signerName: 'string',
      expirationSeconds: 'int32',
      usages: { items: 'string' },
      username: 'string',
      uid: 'string',
      groups: { items: 'string' },
      extra: { values: { items: 'string' } },
    },
  },
  status: {
    fields: {
      certificate: 'bytes',
      conditions: {
        items: {
          fields: {
            type: 'string',
            status: 'string',
            reason: 'string',
            message: 'string',
            lastUpdateTime: 'time',
            lastTransitionTime: 'time',
          },
        },
      },
    },
  },
});

interface Options {
  /** Approved and Denied conditions may be added or changed (the `/approval` subresource). */
  allowSettingApprovalConditions: boolean;
  /** `status.certificate` may be set (the `/status` subresource). */
  allowSettingCertificate: boolean;
  allowBothApprovedAndDenied: boolean;
  allowLegacySignerName: boolean;
  allowDuplicateConditionTypes: boolean;
  allowEmptyConditionType: boolean;
  allowArbitraryCertificate: boolean;
  allowUnknownUsages: boolean;
  allowDuplicateUsages: boolean;
  /** `spec.request` holds the stored bytes, parsed and verified when they were created: not checked again. */
  requestUnchanged: boolean;
}

const conditionsOf = (o: unknown): Obj[] => (arr(obj(obj(o)?.status)?.conditions) ?? []).filter(isObj);
const usagesOf = (o: unknown): unknown[] => arr(obj(obj(o)?.spec)?.usages) ?? [];
const certificateOf = (o: unknown): string => str(obj(obj(o)?.status)?.certificate) ?? '';
const requestOf = (o: unknown): Buffer | undefined => bytes(obj(obj(o)?.spec)?.request);

/** Same bytes in both requests: a comparison, where checking the request again means parsing and verifying it. */
function sameRequest(next: unknown, old: unknown): boolean {
  const a = requestOf(next);
  const b = requestOf(old);
  return a !== undefined && b !== undefined && a.equals(b);
}

function hasDuplicates(values: unknown[]): boolean {
  return new Set(values).size !== values.length;
}

function options(next: unknown, old: unknown | undefined, ctx: ValidationContext): Options {
  const oldConditions = old === undefined ? [] : conditionsOf(old);
  const oldTypes = oldConditions.map((c) => c.type);
  const oldUsages = old === undefined ? [] : usagesOf(old);
  return {
    allowSettingApprovalConditions: false,
    allowSettingCertificate: false,
    allowBothApprovedAndDenied: oldTypes.includes('Approved') && oldTypes.includes('Denied'),
    allowLegacySignerName: old !== undefined && obj(obj(old)?.spec)?.signerName === ctx.naming.signers.legacyUnknown,
    allowDuplicateConditionTypes: hasDuplicates(oldTypes),
    allowEmptyConditionType: oldTypes.some((t) => !t),
    allowArbitraryCertificate:
      old !== undefined &&
      (certificateOf(next) === certificateOf(old) ||
        certificateProblem(bytes(obj(obj(old)?.status)?.certificate)) !== undefined),
    allowUnknownUsages: oldUsages.some((u) => typeof u !== 'string' || !KEY_USAGES.includes(u)),
    allowDuplicateUsages: hasDuplicates(oldUsages),
    requestUnchanged: old !== undefined && sameRequest(next, old),
  };
}

/** The reason a `status.certificate` value is refused, or `undefined` when it is acceptable. */
function certificateProblem(data: Buffer | undefined): string | undefined {
  if (!data || data.length === 0) return undefined;
  let rest = data.toString('latin1');
  let blocks = 0;
  for (;;) {
    const next = decodePem(rest);
    if (!next) break;
    const { block } = next;
    if (block.type !== 'CERTIFICATE') return `only CERTIFICATE PEM blocks are allowed, found ${goQuote(block.type)}`;
    if (Object.keys(block.headers).length) return 'no PEM block headers are permitted';
    blocks++;
    if (block.bytes.length === 0) return 'found CERTIFICATE PEM block containing 0 certificates';
    const malformed = certificateParseError(block.bytes);
    if (malformed) return malformed;
    rest = next.rest;
  }
  return blocks === 0 ? 'must contain at least one CERTIFICATE PEM block' : undefined;
}

/** The reason a `spec.request` value is refused, or `undefined` when it is one verified request. */
async function requestProblem(data: Buffer): Promise<string | undefined> {
  const first = decodePem(data.toString('latin1'));
  if (first?.block.type !== 'CERTIFICATE REQUEST') return 'PEM block type must be CERTIFICATE REQUEST';
  if (decodePem(first.rest)) return 'must contain exactly one PEM block';
  return checkCertificateRequest(first.block.bytes);
}

async function validateSpec(spec: Obj, opts: Options, ctx: ValidationContext): Promise<FieldError[]> {
  const errs: FieldError[] = [];
  const path = 'spec';
  const rawRequest = spec.request;
  const request = bytes(rawRequest);
  if (absent(rawRequest) || rawRequest === '') {
    errs.push(required(child(path, 'request')));
  } else if (request && !opts.requestUnchanged) {
    const problem = await requestProblem(request);
    if (problem) errs.push(invalid(child(path, 'request'), rawRequest, problem));
  }

  const usages = arr(spec.usages);
  if (!usages || usages.length === 0) errs.push(required(child(path, 'usages')));
  if (usages && !opts.allowUnknownUsages) {
    usages.forEach((u, i) => {
      if (typeof u === 'string' && !KEY_USAGES.includes(u))
        errs.push(notSupported(index(child(path, 'usages'), i), u, KEY_USAGES));
    });
  }
  if (usages && !opts.allowDuplicateUsages) {
    const seen = new Set<unknown>();
    usages.forEach((u, i) => {
      if (seen.has(u)) errs.push(duplicate(index(child(path, 'usages'), i), u));
      seen.add(u);
    });
  }

  const signerName = spec.signerName;
  if (typeof signerName === 'string' || absent(signerName)) {
    const name = str(signerName) ?? '';
    if (!opts.allowLegacySignerName && name === ctx.naming.signers.legacyUnknown) {
      errs.push(invalid(child(path, 'signerName'), name, 'the legacy signerName is not allowed via this API version'));
    } else {
      errs.push(...validateSignerName(child(path, 'signerName'), name));
    }
  }

  const expiration = int(spec.expirationSeconds);
  if (expiration !== undefined && expiration < MIN_EXPIRATION_SECONDS) {
    errs.push(
      invalid(
        child(path, 'expirationSeconds'),
        expiration,
        'may not specify a duration less than 600 seconds (10 minutes)',
      ),
    );
  }
  return errs;
}

function validateConditions(o: Obj, opts: Options): FieldError[] {
  const errs: FieldError[] = [];
  const path = 'status.conditions';
  const seen = new Set<string>();
  let hasApproved = false;
  let hasDenied = false;
  arr(obj(o.status)?.conditions)?.forEach((raw, i) => {
    const c = obj(raw);
    if (!c) return;
    const p = index(path, i);
    const type = str(c.type) ?? '';
    if (!opts.allowEmptyConditionType && !type) errs.push(required(child(p, 'type')));
    const allowed = DECISION_TYPES.includes(type) ? TRUE_ONLY : ALL_STATUSES;
    const status = str(c.status) ?? '';
    if (!status) errs.push(required(child(p, 'status')));
    else if (!allowed.includes(status)) errs.push(notSupported(child(p, 'status'), status, allowed));
    if (type === 'Approved') hasApproved = true;
    if (type === 'Denied') hasDenied = true;
    if (!opts.allowDuplicateConditionTypes) {
      if (seen.has(type)) errs.push(duplicate(child(p, 'type'), type));
      seen.add(type);
    }
  });
  // The reference's declarative union over the two decisions: one error on the list, naming both members.
  if (!opts.allowBothApprovedAndDenied && hasApproved && hasDenied) {
    const members = ['Approved', 'Denied'].map((t) => `conditions[{"type": "${t}"}]`);
    errs.push(
      invalid(
        path,
        `{${members.join(', ')}}`,
        `must specify at most one of: ${members.map((m) => `\`${m}\``).join(', ')}`,
      ),
    );
  }
  return errs;
}

async function validateObject(o: unknown, opts: Options, ctx: ValidationContext): Promise<FieldError[]> {
  const root = rootProblem(o);
  if (root.length) return root;
  const shapeErrs = checkShape(o, SHAPE, '');
  const csr = o as Obj;
  const errs: FieldError[] = [...shapeErrs, ...validateObjectMeta(csr.metadata, false, () => [])];
  if (!isObj(csr.spec)) {
    if (absent(csr.spec)) errs.push(required('spec'));
  } else {
    errs.push(...(await validateSpec(csr.spec, opts, ctx)));
  }
  errs.push(...validateConditions(csr, opts));
  if (!opts.allowArbitraryCertificate) {
    const problem = certificateProblem(bytes(obj(csr.status)?.certificate));
    if (problem) errs.push(invalid('status.certificate', '<certificate data>', problem));
  }
  return errs;
}

export async function validateCertificateSigningRequestCreate(
  o: unknown,
  ctx: ValidationContext,
): Promise<FieldError[]> {
  return validateObject(o, options(o, undefined, ctx), ctx);
}

function conditionsOfType(o: unknown, type: string): Obj[] {
  return conditionsOf(o).filter((c) => c.type === type);
}

async function validateUpdate(o: unknown, old: unknown, opts: Options, ctx: ValidationContext): Promise<FieldError[]> {
  const errs = await validateObject(o, opts, ctx);
  if (!isObj(o)) return errs;
  const spec = obj(o.spec) ?? {};
  const oldSpec = obj(obj(old)?.spec) ?? {};
  for (const f of SPEC_FIELDS) {
    if (!deepEqual(spec[f], oldSpec[f])) errs.push(invalid(child('spec', f), spec[f] ?? null, 'field is immutable'));
  }
  for (const t of DECISION_TYPES) {
    if (conditionsOfType(o, t).length < conditionsOfType(old, t).length) {
      errs.push(forbidden('status.conditions', `updates may not remove a condition of type ${goQuote(t)}`));
    }
  }
  if (!opts.allowSettingApprovalConditions) {
    for (const t of ['Approved', 'Denied']) {
      const before = conditionsOfType(old, t);
      const after = conditionsOfType(o, t);
      if (after.length < before.length) continue;
      if (after.length > before.length) {
        errs.push(forbidden('status.conditions', `updates may not add a condition of type ${goQuote(t)}`));
      } else if (!deepEqual(before, after)) {
        const diff = before
          .map((c, i) => (deepEqual(c, after[i]) ? '' : `\n- ${JSON.stringify(c)}\n+ ${JSON.stringify(after[i])}`))
          .join('');
        errs.push(forbidden('status.conditions', `updates may not modify a condition of type ${goQuote(t)}${diff}`));
      }
    }
  }
  if (certificateOf(o) !== certificateOf(old)) {
    if (!opts.allowSettingCertificate) {
      errs.push(forbidden('status.certificate', 'updates may not set certificate content'));
    } else if (certificateOf(old).length > 0) {
      errs.push(forbidden('status.certificate', 'updates may not modify existing certificate content'));
    }
  }
  errs.push(...validateObjectMetaUpdate(o.metadata, obj(old)?.metadata));
  return errs;
}

/** An update of the main resource: metadata only in effect (conditions and certificate may not change). */
export async function validateCertificateSigningRequestUpdate(
  o: unknown,
  old: unknown,
  ctx: ValidationContext,
): Promise<FieldError[]> {
  return validateUpdate(o, old, options(o, old, ctx), ctx);
}

/** An update through `/status`: the certificate may be set once; Failed and other conditions may be added. */
export async function validateCertificateSigningRequestStatusUpdate(
  o: unknown,
  old: unknown,
  ctx: ValidationContext,
): Promise<FieldError[]> {
  return validateUpdate(o, old, { ...options(o, old, ctx), allowSettingCertificate: true }, ctx);
}

/** An update through `/approval`: Approved or Denied conditions may be added. */
export async function validateCertificateSigningRequestApprovalUpdate(
  o: unknown,
  old: unknown,
  ctx: ValidationContext,
): Promise<FieldError[]> {
  return validateUpdate(o, old, { ...options(o, old, ctx), allowSettingApprovalConditions: true }, ctx);
}

/** A Kubernetes `Time`: RFC 3339 in UTC with second precision. */
export function formatTime(t: Date): string {
  return t.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Fills condition timestamps on `/status` and `/approval` writes: an unset `lastUpdateTime` becomes now; an
 * unset `lastTransitionTime` keeps the old condition's time when one of the same type and status existed,
 * otherwise becomes now.
 */
export function defaultCsrConditions(o: unknown, old: unknown, now: Date): void {
  const stamp = formatTime(now);
  const previous = conditionsOf(old);
  for (const c of conditionsOf(o)) {
    if (!str(c.lastUpdateTime)) c.lastUpdateTime = stamp;
    if (!str(c.lastTransitionTime)) {
      const same = previous.find((p) => p.type === c.type && p.status === c.status && str(p.lastTransitionTime));
      c.lastTransitionTime = same ? same.lastTransitionTime : stamp;
    }
  }
}
