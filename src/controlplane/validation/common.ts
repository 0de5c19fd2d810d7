/**
 * The common validators: ObjectMeta names by the DNS-name rules (src/api/dns-names.ts), labels and annotations
 * (their key and value rules are src/api/labels.ts's), label selectors, conditions and ObjectMeta, with the
 * reference's texts.
 *
 * String checks answer a list of problem texts (empty when valid); field checks answer FieldErrors.
 * Lengths are counted in UTF-8 bytes, as the reference does.
 */
import {
  DNS1123_LABEL_MAX,
  DNS1123_SUBDOMAIN_MAX,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  maxLenError,
  regexError,
} from '../../api/dns-names.ts';
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
  tooLong,
  validateImmutableField,
} from '../../api/field-errors.ts';
import { labelValueErrors, qualifiedNameErrors } from '../../api/labels.ts';
import { arr, int, type Obj, obj, str } from './raw.ts';

export const byteLength = (s: string): number => Buffer.byteLength(s, 'utf8');

export const EMPTY_ERROR = 'must be non-empty';

export function inclusiveRangeError(lo: number, hi: number): string {
  return `must be between ${lo} and ${hi}, inclusive`;
}

// ---------------------------------------------------------------------------------------------
// Other string formats (DNS names: src/api/dns-names.ts; label keys and values: src/api/labels.ts)

const CONFIG_MAP_KEY_FMT = '[-._a-zA-Z0-9]+';
const CONFIG_MAP_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";
const CONFIG_MAP_KEY_RE = new RegExp(`^${CONFIG_MAP_KEY_FMT}$`);

export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX));
  if (!CONFIG_MAP_KEY_RE.test(value)) {
    errs.push(regexError(CONFIG_MAP_KEY_MSG, CONFIG_MAP_KEY_FMT, 'key.name', 'KEY_NAME', 'key-name'));
  }
  if (value === '.') errs.push("must not be '.'");
  else if (value === '..') errs.push("must not be '..'");
  else if (value.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

const PERCENT_FMT = '[0-9]+%';
const PERCENT_MSG = "a valid percent string must be a numeric string followed by an ending '%'";
const PERCENT_RE = new RegExp(`^${PERCENT_FMT}$`);

export function isValidPercent(value: string): string[] {
  return PERCENT_RE.test(value) ? [] : [regexError(PERCENT_MSG, PERCENT_FMT, '1%', '93%')];
}

export function isValidPortNum(port: number): string[] {
  return port >= 1 && port <= 65535 ? [] : [inclusiveRangeError(1, 65535)];
}

const HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";
const HTTP_PATH_RE = new RegExp(`^${HTTP_PATH_FMT}$`);

/** `acme.io/foo`: a DNS subdomain, `/`, then HTTP path characters. */
export function isDomainPrefixedPath(path: string, value: string): FieldError[] {
  if (value.length === 0) return [required(path)];
  const slash = value.indexOf('/');
  if (slash <= 0 || slash === value.length - 1) {
    return [invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  }
  const errs: FieldError[] = [];
  const host = value.slice(0, slash);
  for (const msg of isDNS1123Subdomain(host)) errs.push(invalid(path, host, msg));
  const rest = value.slice(slash + 1);
  if (!HTTP_PATH_RE.test(rest)) errs.push(invalid(path, rest, regexError('Invalid path', HTTP_PATH_FMT)));
  return errs;
}

/** A name usable as a URL path segment. */
export function isValidPathSegmentName(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  return isValidPathSegmentPrefix(name);
}

export function isValidPathSegmentPrefix(name: string): string[] {
  const errs: string[] = [];
  for (const bad of ['/', '%']) if (name.includes(bad)) errs.push(`may not contain '${bad}'`);
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Name functions for ObjectMeta (prefix = the value is a generateName)

export type NameFn = (name: string, prefix: boolean) => string[];

/** Replaces a trailing dash of a generateName, as the reference does (it also drops the character before). */
function maskTrailingDash(name: string): string {
  return name.endsWith('-') ? `${name.slice(0, Math.max(0, name.length - 2))}a` : name;
}

export const nameIsDNSSubdomain: NameFn = (name, prefix) => isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
export const nameIsDNSLabel: NameFn = (name, prefix) => isDNS1123Label(prefix ? maskTrailingDash(name) : name);
export const nameIsDNS1035Label: NameFn = (name, prefix) => isDNS1035Label(prefix ? maskTrailingDash(name) : name);
export const nameIsPathSegment: NameFn = (name, prefix) =>
  prefix ? isValidPathSegmentPrefix(name) : isValidPathSegmentName(name);
export const validateNamespaceName: NameFn = nameIsDNSLabel;

// ---------------------------------------------------------------------------------------------
// Field-level helpers

export const IS_NEGATIVE_ERROR = 'must be greater than or equal to 0';

export function validateNonnegativeField(value: number | undefined, path: string): FieldError[] {
  return value !== undefined && value < 0 ? [invalid(path, value, IS_NEGATIVE_ERROR)] : [];
}

/** Invalid for each qualified-name problem (the value shown is the whole name). */
export function validateQualifiedName(value: string, path: string): FieldError[] {
  return qualifiedNameErrors(value).map((msg) => invalid(path, value, msg));
}

export function validateLabelName(name: string, path: string): FieldError[] {
  return validateQualifiedName(name, path);
}

/** Label keys must be qualified names and values valid label values; errors are reported at the map path. */
export function validateLabels(labels: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const m = obj(labels);
  if (!m) return errs;
  for (const [k, v] of Object.entries(m)) {
    errs.push(...validateLabelName(k, path));
    if (typeof v === 'string') for (const msg of labelValueErrors(v)) errs.push(invalid(path, v, msg));
  }
  return errs;
}

export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

/** Annotation keys are qualified names (case-insensitive); keys and values together at most 256 KiB. */
export function validateAnnotations(annotations: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const m = obj(annotations);
  if (!m) return errs;
  let total = 0;
  for (const [k, v] of Object.entries(m)) {
    for (const msg of qualifiedNameErrors(k.toLowerCase())) errs.push(invalid(path, k, msg));
    total += byteLength(k) + (typeof v === 'string' ? byteLength(v) : 0);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT) errs.push(tooLong(path, TOTAL_ANNOTATION_SIZE_LIMIT));
  return errs;
}

export interface LabelSelectorOptions {
  /** Tolerates invalid values in In/NotIn expressions (only for existing data). */
  allowInvalidLabelValueInSelector?: boolean;
}

const OPERATORS = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist']);

export function validateLabelSelector(selector: unknown, path: string, opts: LabelSelectorOptions = {}): FieldError[] {
  const errs: FieldError[] = [];
  const sel = obj(selector);
  if (!sel) return errs;
  errs.push(...validateLabels(sel.matchLabels, child(path, 'matchLabels')));
  arr(sel.matchExpressions)?.forEach((raw, i) => {
    const p = index(child(path, 'matchExpressions'), i);
    const expr = obj(raw);
    if (!expr) return;
    const values = arr(expr.values) ?? [];
    const op = expr.operator;
    if (op === 'In' || op === 'NotIn') {
      if (values.length === 0)
        errs.push(required(child(p, 'values'), "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if (op === 'Exists' || op === 'DoesNotExist') {
      if (values.length > 0) {
        errs.push(forbidden(child(p, 'values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      }
    } else {
      errs.push(invalid(child(p, 'operator'), op ?? '', 'not a valid selector operator'));
    }
    errs.push(...validateLabelName(str(expr.key) ?? '', child(p, 'key')));
    if (!opts.allowInvalidLabelValueInSelector) {
      values.forEach((v, j) => {
        if (typeof v !== 'string') return;
        for (const msg of labelValueErrors(v)) errs.push(invalid(index(child(p, 'values'), j), v, msg));
      });
    }
  });
  return errs;
}

/** Whether the selector converts to a label selector at all (what the reference needs before matching). */
export function labelSelectorConvertible(selector: unknown): boolean {
  const sel = obj(selector);
  if (!sel) return true;
  for (const [k, v] of Object.entries(obj(sel.matchLabels) ?? {})) {
    if (qualifiedNameErrors(k).length || typeof v !== 'string' || labelValueErrors(v).length) return false;
  }
  for (const raw of arr(sel.matchExpressions) ?? []) {
    const expr = obj(raw);
    if (!expr || typeof expr.operator !== 'string' || !OPERATORS.has(expr.operator)) return false;
    if (qualifiedNameErrors(str(expr.key) ?? '').length) return false;
    const values = arr(expr.values) ?? [];
    if ((expr.operator === 'In' || expr.operator === 'NotIn') && values.length === 0) return false;
    if ((expr.operator === 'Exists' || expr.operator === 'DoesNotExist') && values.length > 0) return false;
    if (values.some((v) => typeof v !== 'string' || labelValueErrors(v).length)) return false;
  }
  return true;
}

/** Whether a selector has no requirements (matches everything). */
export function labelSelectorEmpty(selector: unknown): boolean {
  const sel = obj(selector);
  if (!sel) return false;
  return Object.keys(obj(sel.matchLabels) ?? {}).length + (arr(sel.matchExpressions)?.length ?? 0) === 0;
}

/** Label-selector matching; a missing selector matches nothing, an empty one everything. */
export function labelSelectorMatches(selector: unknown, labels: Record<string, string>): boolean {
  const sel = obj(selector);
  if (!sel) return false;
  for (const [k, v] of Object.entries(obj(sel.matchLabels) ?? {})) {
    if (labels[k] !== v) return false;
  }
  for (const raw of arr(sel.matchExpressions) ?? []) {
    const expr = obj(raw) ?? {};
    const k = str(expr.key) ?? '';
    const values = (arr(expr.values) ?? []).filter((v): v is string => typeof v === 'string');
    const has = Object.hasOwn(labels, k);
    switch (expr.operator) {
      case 'In':
        if (!has || !values.includes(labels[k])) return false;
        break;
      case 'NotIn':
        if (has && values.includes(labels[k])) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// metav1.Condition lists

const CONDITION_STATUSES = ['False', 'True', 'Unknown'];
const CONDITION_REASON_FMT = '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?';
const CONDITION_REASON_RE = new RegExp(`^${CONDITION_REASON_FMT}$`);
const CONDITION_REASON_MSG =
  "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'";

export function validateConditions(conditions: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  arr(conditions)?.forEach((raw, i) => {
    const p = index(path, i);
    const c = obj(raw);
    if (!c) return;
    const type = str(c.type) ?? '';
    if (seen.has(type)) errs.push(duplicate(child(p, 'type'), type));
    seen.add(type);
    errs.push(...validateLabelName(type, child(p, 'type')));
    const status = str(c.status) ?? '';
    if (!CONDITION_STATUSES.includes(status)) errs.push(notSupported(child(p, 'status'), status, CONDITION_STATUSES));
    const gen = int(c.observedGeneration);
    if (gen !== undefined && gen < 0) {
      errs.push(invalid(child(p, 'observedGeneration'), gen, 'must be greater than or equal to zero'));
    }
    if (!str(c.lastTransitionTime)) errs.push(required(child(p, 'lastTransitionTime'), 'must be set'));
    const reason = str(c.reason) ?? '';
    if (!reason) {
      errs.push(required(child(p, 'reason'), 'must be set'));
    } else {
      if (!CONDITION_REASON_RE.test(reason)) {
        errs.push(
          invalid(
            child(p, 'reason'),
            reason,
            regexError(
              CONDITION_REASON_MSG,
              CONDITION_REASON_FMT,
              'my_name',
              'MY_NAME',
              'MyName',
              'ReasonA,ReasonB',
              'ReasonA:ReasonB',
            ),
          ),
        );
      }
      if (byteLength(reason) > 1024) errs.push(tooLong(child(p, 'reason'), 1024));
    }
    const message = str(c.message) ?? '';
    if (byteLength(message) > 32 * 1024) errs.push(tooLong(child(p, 'message'), 32 * 1024));
  });
  return errs;
}

// ---------------------------------------------------------------------------------------------
// ObjectMeta

const FINALIZER_ORPHAN = 'orphan';
const FINALIZER_FOREGROUND = 'foregroundDeletion';

function validateOwnerReferences(refs: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  let firstController = '';
  for (const raw of arr(refs) ?? []) {
    const ref = obj(raw);
    if (!ref) continue;
    const apiVersion = str(ref.apiVersion) ?? '';
    const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
    if (!version) errs.push(invalid(child(path, 'apiVersion'), apiVersion, 'version must not be empty'));
    if (!str(ref.kind)) errs.push(invalid(child(path, 'kind'), ref.kind ?? '', 'must not be empty'));
    if (!str(ref.name)) errs.push(invalid(child(path, 'name'), ref.name ?? '', 'must not be empty'));
    if (!str(ref.uid)) errs.push(invalid(child(path, 'uid'), ref.uid ?? '', 'must not be empty'));
    if (apiVersion === 'v1' && ref.kind === 'Event') {
      errs.push(invalid(path, ref, '/v1, Kind=Event is disallowed from being an owner'));
    }
    if (ref.controller === true) {
      const current = `${str(ref.kind) ?? ''}/${str(ref.name) ?? ''}`;
      if (firstController) {
        errs.push(
          invalid(
            path,
            refs,
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
          ),
        );
      } else {
        firstController = current;
      }
    }
  }
  return errs;
}

function validateFinalizers(finalizers: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const list = (arr(finalizers) ?? []).filter((f): f is string => typeof f === 'string');
  for (const f of list) errs.push(...validateQualifiedName(f, path));
  if (list.includes(FINALIZER_ORPHAN) && list.includes(FINALIZER_FOREGROUND)) {
    errs.push(invalid(path, list, `finalizer ${FINALIZER_ORPHAN} and ${FINALIZER_FOREGROUND} cannot be both set`));
  }
  return errs;
}

function validateManagedFields(entries: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const list = arr(entries) ?? [];
  for (let i = 0; i < list.length; i++) {
    const e = obj(list[i]);
    if (!e) continue;
    const p = index(path, i);
    if (e.operation !== 'Apply' && e.operation !== 'Update') {
      errs.push(invalid(child(p, 'operation'), e.operation ?? '', 'must be `Apply` or `Update`'));
    }
    const fieldsType = str(e.fieldsType) ?? '';
    if (fieldsType && fieldsType !== 'FieldsV1')
      errs.push(invalid(child(p, 'fieldsType'), fieldsType, 'must be `FieldsV1`'));
    const manager = str(e.manager) ?? '';
    if (byteLength(manager) > 128) errs.push(tooLong(child(p, 'manager'), 128));
    const sub = str(e.subresource) ?? '';
    if (byteLength(sub) > 256) errs.push(tooLong(child(p, 'subresource'), 256));
  }
  return errs;
}

function validateMetaCommon(meta: Obj, namespaced: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const namespace = str(meta.namespace) ?? '';
  if (namespaced) {
    if (!namespace) errs.push(required(child(path, 'namespace')));
    else
      for (const msg of validateNamespaceName(namespace, false))
        errs.push(invalid(child(path, 'namespace'), namespace, msg));
  } else if (namespace) {
    errs.push(forbidden(child(path, 'namespace'), 'not allowed on this type'));
  }
  // Each rule finds nothing in an absent member: only those present are checked (and their paths made).
  const { generation, labels, annotations, ownerReferences, finalizers, managedFields } = meta;
  if (generation !== undefined) errs.push(...validateNonnegativeField(int(generation), child(path, 'generation')));
  if (labels !== undefined) errs.push(...validateLabels(labels, child(path, 'labels')));
  if (annotations !== undefined) errs.push(...validateAnnotations(annotations, child(path, 'annotations')));
  if (ownerReferences !== undefined) {
    errs.push(...validateOwnerReferences(ownerReferences, child(path, 'ownerReferences')));
  }
  if (finalizers !== undefined) errs.push(...validateFinalizers(finalizers, child(path, 'finalizers')));
  if (managedFields !== undefined) errs.push(...validateManagedFields(managedFields, child(path, 'managedFields')));
  return errs;
}

/** ObjectMeta on create: name (or generateName) by `nameFn`, namespace presence by scope, labels, annotations. */
export function validateObjectMeta(
  meta: unknown,
  namespaced: boolean,
  nameFn: NameFn,
  path = 'metadata',
): FieldError[] {
  const m = obj(meta);
  if (!m) return [required(child(path, 'name'), 'name or generateName is required')];
  const errs: FieldError[] = [];
  const generateName = str(m.generateName) ?? '';
  if (generateName) {
    for (const msg of nameFn(generateName, true)) errs.push(invalid(child(path, 'generateName'), generateName, msg));
  }
  const name = str(m.name) ?? '';
  if (!name) errs.push(required(child(path, 'name'), 'name or generateName is required'));
  else for (const msg of nameFn(name, false)) errs.push(invalid(child(path, 'name'), name, msg));
  errs.push(...validateMetaCommon(m, namespaced, path));
  return errs;
}

/** ObjectMeta on update: identity fields immutable, resourceVersion present, generation not decremented. */
export function validateObjectMetaUpdate(next: unknown, prev: unknown, path = 'metadata'): FieldError[] {
  const n = obj(next) ?? {};
  const o = obj(prev) ?? {};
  const errs: FieldError[] = [];
  if (o.deletionTimestamp) {
    const before = new Set((arr(o.finalizers) ?? []).filter((f) => typeof f === 'string'));
    const extra = [...new Set((arr(n.finalizers) ?? []).filter((f): f is string => typeof f === 'string'))]
      .filter((f) => !before.has(f))
      .sort();
    if (extra.length) {
      errs.push(
        forbidden(
          child(path, 'finalizers'),
          `no new finalizers can be added if the object is being deleted, found new finalizers []string{${extra.map((f) => JSON.stringify(f)).join(', ')}}`,
        ),
      );
    }
  }
  if (!str(n.resourceVersion))
    errs.push(invalid(child(path, 'resourceVersion'), n.resourceVersion ?? '', 'must be specified for an update'));
  const gen = int(n.generation) ?? 0;
  if (gen < (int(o.generation) ?? 0)) errs.push(invalid(child(path, 'generation'), gen, 'must not be decremented'));
  for (const f of ['name', 'namespace', 'uid', 'creationTimestamp']) {
    errs.push(...validateImmutableField(n[f] ?? '', o[f] ?? '', child(path, f)));
  }
  for (const f of ['deletionTimestamp', 'deletionGracePeriodSeconds']) {
    errs.push(...validateImmutableField(n[f] ?? null, o[f] ?? null, child(path, f)));
  }
  errs.push(...validateLabels(n.labels, child(path, 'labels')));
  errs.push(...validateAnnotations(n.annotations, child(path, 'annotations')));
  errs.push(...validateOwnerReferences(n.ownerReferences, child(path, 'ownerReferences')));
  errs.push(...validateFinalizers(n.finalizers, child(path, 'finalizers')));
  errs.push(...validateManagedFields(n.managedFields, child(path, 'managedFields')));
  return errs;
}

/** Whether two values are equal the way the reference compares API values. */
export const semanticEqual = deepEqual;

// ---------------------------------------------------------------------------------------------
// Signer names (CertificateSigningRequest, ClusterTrustBundle)

/** `example.com/signer-name`: a domain of at least two DNS labels, `/`, dot-separated DNS subdomains; at most 571 bytes. */
export function validateSignerName(path: string, signerName: string): FieldError[] {
  if (signerName.length === 0) return [required(path)];
  const segments = signerName.split('/');
  if (segments.length !== 2) {
    return [
      invalid(path, signerName, "must be a fully qualified domain and path of the form 'example.com/signer-name'"),
    ];
  }
  const errs: FieldError[] = [];
  const [domain, rest] = segments;
  if (byteLength(domain) > DNS1123_SUBDOMAIN_MAX) errs.push(tooLong(path, DNS1123_SUBDOMAIN_MAX));
  const domainLabels = domain.split('.');
  for (const label of domainLabels) {
    const msgs = isDNS1123Label(label);
    if (msgs.length) {
      for (const msg of msgs) errs.push(invalid(path, domain, `validating label ${goQuote(label)}: ${msg}`));
      break;
    }
  }
  if (domainLabels.length < 2)
    errs.push(invalid(path, domain, 'should be a domain with at least two segments separated by dots'));
  for (const label of rest.split('.')) {
    const msgs = isDNS1123Subdomain(label);
    if (msgs.length) {
      for (const msg of msgs) errs.push(invalid(path, rest, `validating label ${goQuote(label)}: ${msg}`));
      break;
    }
  }
  const maxSignerName = DNS1123_SUBDOMAIN_MAX + (DNS1123_SUBDOMAIN_MAX + DNS1123_LABEL_MAX + 1) + 1;
  if (byteLength(signerName) > maxSignerName) errs.push(tooLong(path, maxSignerName));
  return errs;
}
