/**
 * ControllerRevisions of a StatefulSet, as the reference writes them: the data is the pod template as a
 * replace patch (`{"spec":{"template":{"$patch":"replace",...}}}`) in Go's canonical JSON (keys sorted at
 * every level, `<`, `>`, `&`, U+2028 and U+2029 escaped), the hash is 32-bit FNV-1 over those bytes and
 * the decimal collision count, written in the safe alphabet, and the name is `<set>-<hash>`.
 */
import type { KubeObject, OwnerReference } from '../../src/api/meta.ts';
import type { Naming } from '../../src/api/naming.ts';
import type { ControllerRevision, StatefulSet } from '../../src/api/types/apps.ts';

/** The reference caps the set-name part so that `<name>-<hash>` stays a valid object name. */
const MAX_NAME_PREFIX = 223;
/** apimachinery's safe alphabet: no vowels, no look-alike characters. */
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const FNV_OFFSET = 2166136261;
const FNV_PRIME = 16777619;

const GO_ESCAPES: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

/** Go's `encoding/json` output for a decoded value: map keys sorted, HTML characters escaped. */
export function canonicalJson(value: unknown): string {
  const sorted = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sorted);
    if (v === null || typeof v !== 'object') return v;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const item = (v as Record<string, unknown>)[k];
      if (item !== undefined) out[k] = sorted(item);
    }
    return out;
  };
  return JSON.stringify(sorted(value)).replace(/[<>&\u2028\u2029]/g, (c) => GO_ESCAPES[c]!);
}

/** 32-bit FNV-1 (multiply, then xor) over the given byte strings. */
export function fnv1(...parts: string[]): number {
  let h = FNV_OFFSET;
  for (const part of parts) {
    for (const byte of Buffer.from(part, 'utf8')) {
      h = Math.imul(h, FNV_PRIME) >>> 0;
      h = (h ^ byte) >>> 0;
    }
  }
  return h;
}

/** apimachinery's `SafeEncodeString`: each character to the safe alphabet by its code modulo 27. */
export function safeEncode(text: string): string {
  return [...text].map((c) => SAFE_ALPHABET[c.charCodeAt(0) % SAFE_ALPHABET.length]).join('');
}

/** The reference's `HashControllerRevision` for raw data and a collision count. */
export function revisionHash(data: string, collisionCount: number): string {
  return safeEncode(String(fnv1(data, String(collisionCount))));
}

/**
 * Canonical bytes by the decoded value they were made from or for. Every sync of a set compares its template with
 * its revisions; cached objects are replaced, never changed, so their bytes are worked out once per object.
 */
const bytesOf = new WeakMap<object, string>();
interface TemplateData {
  bytes: string;
  /** The new revision's `data`. */
  value: object;
  /** The hash of the bytes with the last collision count asked for. */
  hash?: { collisionCount: number; hash: string };
}
/** A template's revision data, by the template. */
const templateData = new WeakMap<object, TemplateData>();

function dataFor(set: StatefulSet): TemplateData {
  const template = set.spec.template;
  let data = templateData.get(template);
  if (!data) {
    const bytes = canonicalJson({ spec: { template: { ...template, $patch: 'replace' } } });
    data = { bytes, value: JSON.parse(bytes) as object };
    bytesOf.set(data.value, bytes);
    templateData.set(template, data);
  }
  return data;
}

/** The revision data of a set: its pod template as a replace patch, in canonical bytes. */
export const revisionData = (set: StatefulSet): string => dataFor(set).bytes;

export function revisionName(setName: string, hash: string): string {
  return `${setName.slice(0, MAX_NAME_PREFIX)}-${hash}`;
}

/** The raw bytes a stored revision carries (the API returns `data` decoded). */
export function dataOf(revision: ControllerRevision): string {
  const value = revision.data;
  if (typeof value === 'string') return value;
  if (value === null || typeof value !== 'object') return canonicalJson(value);
  let data = bytesOf.get(value);
  if (data === undefined) {
    data = canonicalJson(value);
    bytesOf.set(value, data);
  }
  return data;
}

/** The pod template a revision records. */
export function templateOf(revision: ControllerRevision): StatefulSet['spec']['template'] {
  const patch = JSON.parse(dataOf(revision)) as { spec?: { template?: Record<string, unknown> } };
  const { $patch: _replace, ...template } = patch.spec?.template ?? {};
  return template as StatefulSet['spec']['template'];
}

/** A controlling owner reference (`controller` and `blockOwnerDeletion` set) to an object. */
export function controllerRefTo(apiVersion: string, kind: string, obj: KubeObject): OwnerReference {
  return {
    apiVersion,
    kind,
    name: obj.metadata.name ?? '',
    uid: obj.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

export const setOwnerRef = (set: KubeObject) => controllerRefTo('apps/v1', 'StatefulSet', set);

/** A new revision object for the set's current template (the reference's `newRevision`). */
export function newRevision(n: Naming, set: StatefulSet, number: number, collisionCount: number): ControllerRevision {
  const data = dataFor(set);
  if (data.hash?.collisionCount !== collisionCount) {
    data.hash = { collisionCount, hash: revisionHash(data.bytes, collisionCount) };
  }
  const { hash } = data.hash;
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: revisionName(set.metadata.name ?? '', hash),
      namespace: set.metadata.namespace,
      labels: { ...set.spec.template.metadata?.labels, [n.labels.revisionHash]: hash },
      ...(set.metadata.annotations ? { annotations: { ...set.metadata.annotations } } : {}),
      ownerReferences: [setOwnerRef(set)],
    },
    data: data.value,
    revision: number,
  };
}

/**
 * The reference's `EqualRevision`: hash labels that are both plain integers and differ settle it;
 * otherwise the data bytes decide.
 */
export function equalRevision(n: Naming, a: ControllerRevision, b: ControllerRevision): boolean {
  const ha = a.metadata.labels?.[n.labels.revisionHash];
  const hb = b.metadata.labels?.[n.labels.revisionHash];
  const int32 = (h: string | undefined) => h !== undefined && /^-?\d+$/.test(h) && Math.abs(Number(h)) < 2 ** 31;
  if (int32(ha) && int32(hb) && ha !== hb) return false;
  return dataOf(a) === dataOf(b);
}

/** Ascending by `.revision`; ties: older first, then by name (the reference's stable sort). */
export function sortRevisions(revisions: ControllerRevision[]): ControllerRevision[] {
  return [...revisions].sort(
    (a, b) =>
      (a.revision ?? 0) - (b.revision ?? 0) ||
      (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
      (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
  );
}
