/**
 * List `continue` tokens. As in the reference, a token is base64 (URL alphabet, unpadded) of JSON naming the list's revision and the
 * key to start after, relative to the key prefix of the list it came from (resource and namespace). Ours
 * also carries that prefix and the random id of the list snapshot it pages through. Nothing in a token can
 * widen a request: its prefix must be the request's own, its start key cannot climb out of that prefix, and
 * the snapshot it names must have been taken for the same resource, namespace and selectors.
 */
import { randomBytes } from 'node:crypto';
import type { ResourceType } from '../api/registry.ts';
import { badRequest } from './errors.ts';
import { decodeRawUrlBase64, goJsonSyntaxError } from './go-json.ts';

export interface ContinueToken {
  rv: number;
  /** The key to start after, relative to `prefix`. */
  start: string;
  /** The key prefix of the list: resource and namespace. */
  prefix: string;
  /** The list snapshot paged through; none in the fresh token of a 410, which lists the latest state. */
  snap?: string;
}

/** 128 random bits, base64url: an id nobody can guess from the ids they were given. */
const SNAPSHOT_ID = /^[A-Za-z0-9_-]{22}$/;

export function newSnapshotId(): string {
  return randomBytes(16).toString('base64url');
}

/** The key prefix a list reads: its resource, and its namespace when it lists one. */
export function listPrefix(rt: Pick<ResourceType, 'group' | 'plural'>, namespace: string | undefined): string {
  return `/${rt.group || 'core'}/${rt.plural}/${namespace ? `${namespace}/` : ''}`;
}

/** What a snapshot was taken for: a token continues only a request with the same prefix and selectors. */
export function listScope(prefix: string, query: URLSearchParams): string {
  const selectors = ['labelSelector', 'fieldSelector', 'shardSelector'].map((p) => query.get(p) ?? '');
  return JSON.stringify([prefix, ...selectors]);
}

/** The stored key (`namespace/name` or `name`) a start key relative to the prefix stands for, and back. */
export function keyOfStart(namespace: string | undefined, start: string): string {
  return namespace && start ? `${namespace}/${start}` : start;
}

export function startOfKey(namespace: string | undefined, key: string): string {
  return namespace && key.startsWith(`${namespace}/`) ? key.slice(namespace.length + 1) : key;
}

export function encodeContinue(metaGroup: string, t: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: `${metaGroup}/v1`, ...t })).toString('base64url');
}

/** Decodes a token for a request listing `prefix`: 400 for anything malformed or issued for another list. */
export function decodeContinue(metaGroup: string, token: string, prefix: string): ContinueToken {
  const invalid = (why: string) => badRequest(`invalid continue token: ${why}`);
  // Undecodable base64 or JSON in the reference's decoders' words.
  const data = decodeRawUrlBase64(token);
  if (typeof data === 'string') throw invalid(`continue key is not valid: ${data}`);
  const syntax = goJsonSyntaxError(data);
  if (syntax) throw invalid(`continue key is not valid: ${syntax}`);
  const t = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
  if (typeof t !== 'object' || t === null) throw invalid('not a JSON object');
  if (t.v !== `${metaGroup}/v1`)
    throw invalid(`continue key is not valid: incorrect encoded version (${metaGroup}/v1)`);
  if (typeof t.rv !== 'number' || !Number.isSafeInteger(t.rv) || t.rv < 0) {
    throw invalid('continue key is not valid: incorrect encoded start resourceVersion');
  }
  if (typeof t.start !== 'string' || !startKeyValid(t.start)) {
    throw invalid(`continue key is not valid: ${JSON.stringify(t.start)}`);
  }
  if (t.prefix !== prefix) {
    throw invalid(`it continues the list of ${JSON.stringify(t.prefix)}, not this list of ${JSON.stringify(prefix)}`);
  }
  if (t.snap !== undefined && (typeof t.snap !== 'string' || !SNAPSHOT_ID.test(t.snap))) {
    throw invalid('the list snapshot it names is not one this server issues');
  }
  return { rv: t.rv, start: t.start, prefix, snap: t.snap };
}

/** A start key that stays under its prefix: no leading or doubled `/`, no `.` or `..` segment (path-clean). */
export function startKeyValid(start: string): boolean {
  return start === '' || start.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}
