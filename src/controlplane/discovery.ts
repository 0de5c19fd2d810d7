/**
 * Discovery documents built from the registry: the legacy forms (`/api`, `/api/v1`, `/apis`,
 * `/apis/<group>[/<version>]`) and the aggregated form (`APIGroupDiscoveryList`) kubectl prefers.
 */

import { createHash } from 'node:crypto';
import { group } from '../api/naming.ts';
import { apiVersionOf, type Column, type ResourceRegistry, type ResourceType } from '../api/registry.ts';
import { humanDuration } from '../util/time.ts';

export const AGGREGATED_MEDIA = (discoveryGroup: string) =>
  `application/json;g=${discoveryGroup};v=v2;as=APIGroupDiscoveryList`;

/** Subresource verbs: status and scale are read and written; approval written; binding, eviction and token created. */
const SUBRESOURCE_VERBS: Record<string, string[]> = {
  status: ['get', 'patch', 'update'],
  scale: ['get', 'patch', 'update'],
  approval: ['get', 'patch', 'update'],
  binding: ['create'],
  eviction: ['create'],
  token: ['create'],
  log: ['get'],
  exec: ['create', 'get'],
  attach: ['create', 'get'],
  portforward: ['create', 'get'],
};

/** The option kinds of the pod stream subresources, in the core group (`pods/log` answers with text, as Pod). */
const POD_STREAM_KINDS: Record<string, string> = {
  exec: 'PodExecOptions',
  attach: 'PodAttachOptions',
  portforward: 'PodPortForwardOptions',
};

function subresourceKind(
  registry: ResourceRegistry,
  rt: ResourceType,
  sub: string,
): { group: string; version: string; kind: string } {
  if (sub === 'token') return { group: group(registry.naming, 'authentication'), version: 'v1', kind: 'TokenRequest' };
  if (sub === 'scale') return { group: 'autoscaling', version: 'v1', kind: 'Scale' };
  if (sub === 'eviction') return { group: 'policy', version: 'v1', kind: 'Eviction' };
  if (sub === 'binding') return { group: '', version: 'v1', kind: 'Binding' };
  return { group: rt.group, version: rt.version, kind: POD_STREAM_KINDS[sub] ?? rt.kind };
}

/** `/api`: the core version, and the address clients of any network reach this server at (`host:port`). */
export function apiVersions(serverAddress: string): object {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

/** The reference's storage version hash: the first 8 bytes of the SHA-256 of `<group>/<version>/<kind>`, base64. */
export function storageVersionHash(rt: ResourceType): string {
  const stored = rt.storedAs?.rt ?? rt;
  const gvk = `${stored.group}/${stored.storageVersion ?? stored.version}/${stored.kind}`;
  return createHash('sha256').update(gvk).digest().subarray(0, 8).toString('base64');
}

/** Resources in the reference's order: by name, each subresource right after its resource. */
const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export function resourceList(registry: ResourceRegistry, group: string, version: string): object | undefined {
  const rts = registry.groupVersion(group, version);
  if (rts.length === 0) return undefined;
  const resources: ({ name: string } & Record<string, unknown>)[] = [];
  for (const rt of rts) {
    resources.push({
      name: rt.plural,
      singularName: rt.singular,
      namespaced: rt.namespaced,
      kind: rt.kind,
      verbs: rt.verbs,
      ...(rt.shortNames.length ? { shortNames: rt.shortNames } : {}),
      ...(rt.categories.length ? { categories: rt.categories } : {}),
      ...(rt.virtual ? {} : { storageVersionHash: storageVersionHash(rt) }),
    });
    for (const sub of rt.subresources) {
      const k = subresourceKind(registry, rt, sub);
      resources.push({
        name: `${rt.plural}/${sub}`,
        singularName: '',
        namespaced: rt.namespaced,
        ...(k.group !== rt.group ? { group: k.group, version: k.version } : {}),
        kind: k.kind,
        verbs: SUBRESOURCE_VERBS[sub],
      });
    }
  }
  resources.sort(byName);
  // The reference's core list names no apiVersion; a group's does.
  return {
    kind: 'APIResourceList',
    ...(group ? { apiVersion: 'v1' } : {}),
    groupVersion: apiVersionOf(rts[0]),
    resources,
  };
}

function groupDoc(name: string, versions: string[]): object {
  const gvs = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { name, versions: gvs, preferredVersion: gvs[0] };
}

/** The named groups and their versions, preferred first: the registry's order unless an aggregator orders them. */
type Groups = { name: string; versions: string[] }[];

export function groupList(registry: ResourceRegistry, groups: Groups = registry.groups()): object {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: groups.map((g) => groupDoc(g.name, g.versions)),
  };
}

export function groupOne(
  registry: ResourceRegistry,
  name: string,
  groups: Groups = registry.groups(),
): object | undefined {
  const g = groups.find((x) => x.name === name);
  return g ? { kind: 'APIGroup', apiVersion: 'v1', ...groupDoc(g.name, g.versions) } : undefined;
}

/** The aggregated document for `/api` (core only) or `/apis` (every named group). */
/** A group version another server serves: its resources in the aggregated form, or Stale when it cannot be asked. */
export type ServedElsewhere = (group: string, version: string) => { resources: object[]; stale: boolean } | undefined;

export function aggregated(
  registry: ResourceRegistry,
  legacy: boolean,
  named: Groups = registry.groups(),
  elsewhere: ServedElsewhere = () => undefined,
): object {
  const groups = legacy ? [{ name: '', versions: ['v1'] }] : named;
  const local = (group: string, version: string) => ({
    version,
    freshness: 'Current',
    resources: localResources(registry, group, version),
  });
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: `${registry.naming.protocol.discoveryGroup}/v2`,
    metadata: {},
    items: groups.map((g) => ({
      metadata: g.name ? { name: g.name } : {},
      versions: g.versions.map((version) => {
        const remote = elsewhere(g.name, version);
        return remote
          ? { version, freshness: remote.stale ? 'Stale' : 'Current', resources: remote.resources }
          : local(g.name, version);
      }),
    })),
  };
}

/** A response kind as the aggregated document names it: group and version left empty when they are the resource's. */
function responseKind(rt: ResourceType, k: { group: string; version: string; kind: string }) {
  const same = k.group === rt.group && k.version === rt.version;
  return same ? { group: '', version: '', kind: k.kind } : k;
}

function localResources(registry: ResourceRegistry, group: string, version: string): object[] {
  const rts = [...registry.groupVersion(group, version)].sort((a, b) => byName({ name: a.plural }, { name: b.plural }));
  return rts.map((rt) => ({
    resource: rt.plural,
    responseKind: responseKind(rt, rt),
    scope: rt.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: rt.singular,
    verbs: rt.verbs,
    ...(rt.shortNames.length ? { shortNames: rt.shortNames } : {}),
    ...(rt.categories.length ? { categories: rt.categories } : {}),
    ...(rt.subresources.length
      ? {
          subresources: [...rt.subresources].sort().map((sub) => ({
            subresource: sub,
            responseKind: responseKind(rt, subresourceKind(registry, rt, sub)),
            verbs: SUBRESOURCE_VERBS[sub],
          })),
        }
      : {}),
  }));
}

interface ListedResource {
  name: string;
  singularName?: string;
  namespaced?: boolean;
  group?: string;
  version?: string;
  kind?: string;
  verbs?: string[];
  shortNames?: string[];
  categories?: string[];
}

/** An `APIResourceList` (what a server answers at `/apis/<group>/<version>`) in the aggregated form. */
export function fromResourceList(list: { resources?: ListedResource[] }, group: string, version: string): object[] {
  const all = list.resources ?? [];
  const kindOf = (r: ListedResource) => ({
    group: r.group ?? group,
    version: r.version ?? version,
    kind: r.kind ?? '',
  });
  return all
    .filter((r) => !r.name.includes('/'))
    .map((r) => {
      const subresources = all
        .filter((s) => s.name.startsWith(`${r.name}/`))
        .map((s) => ({ subresource: s.name.slice(r.name.length + 1), responseKind: kindOf(s), verbs: s.verbs ?? [] }));
      return {
        resource: r.name,
        responseKind: kindOf(r),
        scope: r.namespaced ? 'Namespaced' : 'Cluster',
        singularResource: r.singularName ?? '',
        verbs: r.verbs ?? [],
        ...(r.shortNames?.length ? { shortNames: r.shortNames } : {}),
        ...(r.categories?.length ? { categories: r.categories } : {}),
        ...(subresources.length ? { subresources } : {}),
      };
    });
}

/**
 * A table in parts: everything but its rows (`rows` comes last in its JSON), and the row of one object, so that a
 * big list's rows can be made a few at a time.
 */
export function tableParts(
  registry: ResourceRegistry,
  rt: ResourceType,
  listMeta: object,
  includeObject: string,
  now: Date,
  /** The meta group's version asked for (`v1`, or the older `v1beta1`): the Table's and its rows' objects'. */
  version = 'v1',
): { head: object; row: (obj: { metadata: Record<string, any> }) => object } {
  const metaGroup = registry.naming.protocol.metaGroup;
  // Age comes last unless the resource places it (the reference shows it second for some kinds).
  const ageColumn: Column = {
    name: 'Age',
    type: 'string',
    description: 'Time since creation',
    value: (o) => age(o.metadata.creationTimestamp, now),
  };
  const nameColumn: Column = {
    name: 'Name',
    type: 'string',
    format: 'name',
    description: 'Name of the object',
    value: (o) => o.metadata.name,
  };
  const placed = rt.columns.some((c) => c.name === 'Age')
    ? rt.columns.map((c) => (c.name === 'Age' ? ageColumn : c))
    : rt.ownLayout
      ? rt.columns
      : [...rt.columns, ageColumn];
  const columns = rt.ownLayout ? placed : [nameColumn, ...placed];
  const columnDefinitions = columns.map((c) => ({
    name: c.name,
    type: c.type,
    format: c.format ?? '',
    description: c.description ?? c.name,
    priority: c.priority ?? 0,
  }));
  const row = (obj: { metadata: Record<string, any> }) => ({
    cells: columns.map((c) => cell(c.value(obj as never, now), c.empty)),
    object:
      includeObject === 'None'
        ? null
        : includeObject === 'Object'
          ? obj
          : partialObjectMetadata(metaGroup, obj, version),
  });
  return { head: { kind: 'Table', apiVersion: `${metaGroup}/${version}`, metadata: listMeta, columnDefinitions }, row };
}

/** An object's metadata alone, as the reference's `PartialObjectMetadata`. */
export function partialObjectMetadata(metaGroup: string, obj: { metadata: object }, version = 'v1'): object {
  return { kind: 'PartialObjectMetadata', apiVersion: `${metaGroup}/${version}`, metadata: obj.metadata };
}

function cell(v: unknown, empty = '<none>'): unknown {
  if (v === undefined || v === null || v === '') return empty;
  return typeof v === 'object' ? JSON.stringify(v) : v;
}

function age(timestamp: string | undefined, now: Date): string {
  return timestamp ? humanDuration(now.getTime() - Date.parse(timestamp)) : '<unknown>';
}
