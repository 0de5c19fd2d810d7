/** A typed client for one resource: paths from the registry, raw JSON objects in and out. */
import type { KubeList, KubeObject, Status, WatchEvent } from '../api/meta.ts';
import { apiVersionOf, groupVersionPath, type ResourceType } from '../api/registry.ts';
import { readsProtobuf, UnknownProtobufField } from './protobuf/decode.ts';
import type { RequestOptions, Transport } from './transport.ts';

export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';

const PATCH_MEDIA: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  shardSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'NotOlderThan' | 'Exact';
}

export interface WatchOptions extends Omit<ListOptions, 'limit' | 'continue'> {
  allowWatchBookmarks?: boolean;
  sendInitialEvents?: boolean;
  timeoutSeconds?: number;
  /**
   * The caller has no use for managedFields (an informer that drops them): a kind the client can read from
   * protobuf is asked for as protobuf, as kube-controller-manager asks for it, and read without them.
   */
  withoutManagedFields?: boolean;
}

export interface WriteOptions {
  dryRun?: boolean;
  fieldManager?: string;
  fieldValidation?: 'Ignore' | 'Warn' | 'Strict';
  force?: boolean;
  signal?: AbortSignal;
  caller?: string;
}

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
  signal?: AbortSignal;
  caller?: string;
}

/** A list page whose items are parsed when asked for. */
export interface ListPage<T extends KubeObject> {
  metadata: KubeList<T>['metadata'];
  items(): T[];
}

/**
 * A list answer's metadata, parsed from the text before `"items"` (where the reference and we write
 * it), its items left for later; the whole text is parsed at once when the head does not stand alone.
 */
function pageOf<T extends KubeObject>(text: string): ListPage<T> {
  const itemsAt = text.indexOf('"items":');
  if (itemsAt > 0) {
    try {
      const head = JSON.parse(`${text.slice(0, itemsAt)}"items":null}`) as Partial<KubeList<T>>;
      if (head.metadata) return { metadata: head.metadata, items: () => (JSON.parse(text) as KubeList<T>).items ?? [] };
    } catch {
      // "items" was not a top-level key, or not where the head ends: parse it whole below.
    }
  }
  const list = JSON.parse(text) as KubeList<T>;
  return { metadata: list.metadata, items: () => list.items ?? [] };
}

export class ResourceClient<T extends KubeObject = KubeObject> {
  readonly apiVersion: string;
  /** Whether watches may ask for protobuf: until the server sends a field the client's tables lack. */
  private protobuf: boolean;

  constructor(
    readonly client: Transport,
    readonly rt: ResourceType,
  ) {
    this.apiVersion = apiVersionOf(rt);
    this.protobuf = readsProtobuf(this.apiVersion, rt.kind);
  }

  /** Collection path, for one namespace or (namespace undefined) across all of them. */
  path(namespace?: string, name?: string, subresource?: string): string {
    let p = groupVersionPath(this.rt);
    if (this.rt.namespaced && namespace) p += `/namespaces/${encodeURIComponent(namespace)}`;
    p += `/${this.rt.plural}`;
    if (name !== undefined) p += `/${encodeURIComponent(name)}`;
    if (subresource) p += `/${subresource}`;
    return p;
  }

  async get(
    namespace: string | undefined,
    name: string,
    opts: { signal?: AbortSignal; caller?: string } = {},
  ): Promise<T> {
    return (await this.client.request<T>('GET', this.path(namespace, name), opts)).body;
  }

  /** One page of a list. */
  async list(
    namespace?: string,
    opts: ListOptions & { signal?: AbortSignal; caller?: string } = {},
  ): Promise<KubeList<T>> {
    const { signal, caller, ...query } = opts;
    return (
      await this.client.request<KubeList<T>>('GET', this.path(namespace), { query: { ...query }, signal, caller })
    ).body;
  }

  /**
   * One page of a list, its metadata read ahead of its items: a caller can ask for the next page
   * while it parses this one's.
   */
  async listPage(
    namespace?: string,
    opts: ListOptions & { signal?: AbortSignal; caller?: string } = {},
  ): Promise<ListPage<T>> {
    const { signal, caller, ...query } = opts;
    const req = { query: { ...query }, signal, caller, decode: pageOf };
    return (await this.client.request<ListPage<T>>('GET', this.path(namespace), req)).body;
  }

  /** Every page of a list, following continue tokens. */
  async listAll(
    namespace?: string,
    opts: Omit<ListOptions, 'continue'> & { signal?: AbortSignal; caller?: string; pageSize?: number } = {},
  ): Promise<{ items: T[]; resourceVersion: string }> {
    const { pageSize = 500, ...rest } = opts;
    const items: T[] = [];
    let token: string | undefined;
    let resourceVersion = '';
    do {
      const page = await this.list(namespace, { ...rest, limit: pageSize, continue: token });
      items.push(...page.items);
      token = page.metadata.continue || undefined;
      resourceVersion = page.metadata.resourceVersion ?? resourceVersion;
      if (token) {
        delete rest.resourceVersion;
        delete rest.resourceVersionMatch;
      }
    } while (token);
    return { items, resourceVersion };
  }

  async watch(
    namespace: string | undefined,
    opts: WatchOptions,
    onEvent: (e: WatchEvent<T>) => void,
    signal: AbortSignal,
    caller?: string,
  ): Promise<void> {
    const { withoutManagedFields, ...query } = opts;
    const protobuf = this.protobuf && withoutManagedFields === true;
    try {
      await this.client.watch<T>(this.path(namespace), query, onEvent, signal, caller, protobuf);
    } catch (err) {
      // A newer server: its objects are read as JSON from now on, so none loses a field unseen.
      if (err instanceof UnknownProtobufField) this.protobuf = false;
      throw err;
    }
  }

  async create(obj: T, opts: WriteOptions = {}): Promise<T> {
    const ns = obj.metadata.namespace;
    return (await this.client.request<T>('POST', this.path(ns), this.write(obj, opts))).body;
  }

  async replace(obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.put(obj, undefined, opts);
  }

  async replaceStatus(obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.put(obj, 'status', opts);
  }

  /** Writes the approval conditions of a CertificateSigningRequest. */
  async replaceApproval(obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.put(obj, 'approval', opts);
  }

  async patch(
    namespace: string | undefined,
    name: string,
    patch: unknown,
    type: PatchType,
    opts: WriteOptions = {},
  ): Promise<T> {
    return this.patchSub(namespace, name, undefined, patch, type, opts);
  }

  async patchStatus(
    namespace: string | undefined,
    name: string,
    patch: unknown,
    type: PatchType,
    opts: WriteOptions = {},
  ): Promise<T> {
    return this.patchSub(namespace, name, 'status', patch, type, opts);
  }

  /** Server-side apply of a whole (partial) object under a field manager. */
  async apply(obj: T, fieldManager: string, opts: WriteOptions = {}): Promise<T> {
    const body = { apiVersion: this.apiVersion, kind: this.rt.kind, ...obj };
    return this.patch(obj.metadata.namespace, obj.metadata.name ?? '', body, 'apply', {
      force: true,
      ...opts,
      fieldManager,
    });
  }

  async getScale(namespace: string | undefined, name: string): Promise<KubeObject> {
    return (await this.client.request<KubeObject>('GET', this.path(namespace, name, 'scale'))).body;
  }

  async patchScale(namespace: string | undefined, name: string, replicas: number): Promise<KubeObject> {
    return (
      await this.client.request<KubeObject>('PATCH', this.path(namespace, name, 'scale'), {
        body: { spec: { replicas } },
        contentType: PATCH_MEDIA.merge,
      })
    ).body;
  }

  async delete(namespace: string | undefined, name: string, opts: DeleteOptions = {}): Promise<Status | T> {
    const { signal, caller, dryRun, ...body } = opts;
    const res = await this.client.request<Status | T>('DELETE', this.path(namespace, name), {
      body: { kind: 'DeleteOptions', apiVersion: 'v1', ...body },
      query: { dryRun: dryRun ? 'All' : undefined },
      signal,
      caller,
    });
    return res.body;
  }

  async deleteCollection(namespace: string | undefined, opts: ListOptions & DeleteOptions = {}): Promise<KubeList<T>> {
    const { signal, caller, dryRun, gracePeriodSeconds, propagationPolicy, preconditions: _p, ...query } = opts;
    const res = await this.client.request<KubeList<T>>('DELETE', this.path(namespace), {
      query: { ...query, dryRun: dryRun ? 'All' : undefined },
      body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds, propagationPolicy },
      signal,
      caller,
    });
    return res.body;
  }

  private async put(obj: T, subresource: string | undefined, opts: WriteOptions): Promise<T> {
    const m = obj.metadata;
    return (await this.client.request<T>('PUT', this.path(m.namespace, m.name, subresource), this.write(obj, opts)))
      .body;
  }

  private async patchSub(
    namespace: string | undefined,
    name: string,
    subresource: string | undefined,
    patch: unknown,
    type: PatchType,
    opts: WriteOptions,
  ): Promise<T> {
    const req = this.write(patch, opts);
    req.contentType = PATCH_MEDIA[type];
    return (await this.client.request<T>('PATCH', this.path(namespace, name, subresource), req)).body;
  }

  private write(body: unknown, opts: WriteOptions): RequestOptions {
    return {
      body,
      query: {
        dryRun: opts.dryRun ? 'All' : undefined,
        fieldManager: opts.fieldManager,
        fieldValidation: opts.fieldValidation,
        force: opts.force,
      },
      signal: opts.signal,
      caller: opts.caller,
    };
  }
}
