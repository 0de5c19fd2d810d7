/**
 * LeaseCandidate (`coordination.<suffix>/v1beta1`, namespaced).
 *
 * leaseName required and immutable; binaryVersion required, strict semantic version (no leading `v`);
 * emulationVersion a strict semantic version, at most binaryVersion, required with strategy
 * `OldestEmulationVersion`; strategy required: `OldestEmulationVersion` or a prefixed qualified name.
 */
import semver from 'semver';
import { type FieldError, invalid, required, validateImmutableField } from '../../api/field-errors.ts';
import { validateCoordinatedLeaseStrategy } from '../../api/lease-strategy.ts';
import { isConfigMapKey, validateObjectMeta, validateObjectMetaUpdate } from './common.ts';
import type { ValidationContext } from './context.ts';
import { checkShape, isObj, type Obj, obj, rootProblem, str, topLevel } from './raw.ts';

const SHAPE = topLevel({
  spec: {
    fields: {
      leaseName: 'string',
      pingTime: 'time',
      renewTime: 'time',
      binaryVersion: 'string',
      emulationVersion: 'string',
      strategy: 'string',
    },
  },
});

/** Semantic Versioning 2.0.0, exactly: no `v` prefix, no leading zeros, no surrounding spaces. */
const STRICT_SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

/** A strictly parsed semantic version, or `undefined`. */
export function parseStrictSemver(v: string): semver.SemVer | undefined {
  if (!STRICT_SEMVER.test(v)) return undefined;
  return semver.parse(v) ?? undefined;
}

function validateSpec(spec: Obj): FieldError[] {
  const errs: FieldError[] = [];
  if (!str(spec.leaseName)) errs.push(required('spec.leaseName'));

  const emulation = str(spec.emulationVersion) ?? '';
  let ev: semver.SemVer | undefined;
  if (emulation) {
    ev = parseStrictSemver(emulation);
    if (!ev) errs.push(invalid('spec.emulationVersion', emulation, 'must be a valid semantic version'));
  }
  const binary = str(spec.binaryVersion) ?? '';
  let bv: semver.SemVer | undefined;
  if (!binary) {
    errs.push(required('spec.binaryVersion'));
  } else {
    bv = parseStrictSemver(binary);
    if (!bv) errs.push(invalid('spec.binaryVersion', binary, 'must be a valid semantic version'));
  }
  if (binary && emulation && semver.lt(bv ?? '0.0.0', ev ?? '0.0.0')) {
    errs.push(invalid('spec.binaryVersion', binary, 'must be greater than or equal to `emulationVersion`'));
  }

  const strategy = str(spec.strategy) ?? '';
  if (!strategy) {
    errs.push(required('spec.strategy'));
  } else {
    if (strategy === 'OldestEmulationVersion' && (!ev || semver.eq(ev, '0.0.0'))) {
      errs.push(required('spec.emulationVersion', "must be specified when `strategy` is 'OldestEmulationVersion'"));
    }
    errs.push(...validateCoordinatedLeaseStrategy(strategy, 'spec.strategy'));
  }
  return errs;
}

export function validateLeaseCandidateCreate(o: unknown, _ctx?: ValidationContext): FieldError[] {
  const root = rootProblem(o);
  if (root.length) return root;
  const lc = o as Obj;
  const errs = checkShape(o, SHAPE, '');
  errs.push(...validateObjectMeta(lc.metadata, true, (name) => isConfigMapKey(name)));
  errs.push(...validateSpec(obj(lc.spec) ?? {}));
  return errs;
}

export function validateLeaseCandidateUpdate(o: unknown, old: unknown, _ctx?: ValidationContext): FieldError[] {
  if (!isObj(o)) return rootProblem(o);
  const errs = checkShape(o, SHAPE, '');
  errs.push(...validateObjectMetaUpdate(o.metadata, obj(old)?.metadata));
  errs.push(...validateSpec(obj(o.spec) ?? {}));
  const leaseName = str(obj(o.spec)?.leaseName) ?? '';
  const oldLeaseName = str(obj(obj(old)?.spec)?.leaseName) ?? '';
  errs.push(...validateImmutableField(leaseName, oldLeaseName, 'spec.leaseName'));
  return errs;
}
