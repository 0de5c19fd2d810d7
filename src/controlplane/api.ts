/**
 * The REST semantics of the embedded control plane, independent of HTTP: the verbs of spec §4 over
 * the storage, with metadata handling, optimistic concurrency, subresources, defaulting, validation,
 * admission, dry runs, paging, exact-version reads and watches.
 */

import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { labelSelectorAsString } from '../api/labels.ts';
import type { KubeList, KubeObject, LabelSelector, Status } from '../api/meta.ts';
import { objectKey, randomNameSuffix } from '../api/meta.ts';
import { group, type Naming } from '../api/naming.ts';
import { apiVersionOf, isPodResource, type ResourceRegistry, type ResourceType } from '../api/registry.ts';
import { type MapNode, type Node, schemaFor } from '../api/schema.ts';
import { jsonEqual } from '../util/equal.ts';
import { rfc3339 } from '../util/time.ts';
import type { AdmissionAttributes, AdmissionPlugin, Operation, UserInfo } from './admission.ts';
import {
  ApplyConflict,
  type ApplyResult,
  applyConfiguration,
  type FieldOwner,
  type ManagedFieldsEntry,
  managerLabel,
  recordUpdate,
} from './apply/managed-fields.ts';
import { decodeContinue, encodeContinue, keyOfStart, listPrefix, listScope, startOfKey } from './continue-token.ts';
import {
  BODY_MEDIA_TYPES,
  decodeBody,
  fieldValidationWarnings,
  isBlank,
  JsonSyntaxError,
  strictDecodingError,
  UnsupportedMediaTypeError,
  unrecognizedObject,
} from './decode.ts';
import {
  ApiError,
  badRequest,
  CONTINUE_EXPIRED_MESSAGE,
  conflict,
  type FieldProblem,
  forbidden,
  internalError,
  invalid,
  invalidOptions,
  notFound,
  objectDetails,
  STALE_OBJECT,
  tooLargeResourceVersion,
  unsupportedMediaType,
  unsupportedPatchType,
} from './errors.ts';
import { generationChanged } from './generation.ts';
import { isNamespaceType, withNameLabel } from './namespace-label.ts';
import {
  type ListOptions,
  parseDryRun,
  parseListOptions,
  parseResourceVersion,
  parseWriteOptions,
  queryBool,
  type WriteOptions,
} from './options.ts';
import { applyPatch, PATCH_CONTENT_TYPES } from './patch/index.ts';
import { settlePodQosClass } from './pod-qos.ts';
import type { PodLogSource } from './pod-streams.ts';
import type { ResourceRequest } from './request-info.ts';
import { buildSelection, type Selection } from './selection.ts';
import { allocateServiceIPs, keepAllocatedIPs } from './service-ips.ts';
import { type Snapshot, StaleWrite, type Storage } from './storage.ts';
import { withEmptyStructs } from './struct-defaults.ts';
import { validateNonnegativeField } from './validation/common.ts';
import { isObj, schemaShapeErrors } from './validation/raw.ts';

/** Validation and defaulting of objects, by resource. Problems are rendered field errors. */
export interface ObjectValidation {
  defaults(rt: ResourceType, obj: KubeObject): void;
  validate(
    op: Operation,
    rt: ResourceType,
    obj: KubeObject,
    old: KubeObject | undefined,
    subresource: string | undefined,
  ): FieldProblem[] | Promise<FieldProblem[]>;
}

export interface ApiOptions {
  /** The control plane's logger. */
  log: Logger;
  now: () => Date;
  /** How long a list's continue token stays valid. */
  continueTtlMs: number;
  features: (gate: string) => boolean;
  validation?: ObjectValidation;
  admission: AdmissionPlugin[];
}

/** A successful answer: the HTTP status, its body, and `Warning` header texts. */
export interface Reply {
  status: number;
  body: unknown;
  warnings: string[];
  /** Annotations admission gave the request's audit event. */
  auditAnnotations?: Record<string, string>;
}

/** What admission adds to a write's answer: `Warning` texts and the audit event's annotations. */
interface AdmissionEffects {
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

const noEffects = (): AdmissionEffects => ({ warnings: [], auditAnnotations: {} });

export interface RequestBody {
  text: string;
  contentType: string;
  /** The client's User-Agent: its first part names the field manager of writes that give none. */
  userAgent?: string;
}

/** Handlers of subresources the generic code does not serve (e.g. pod eviction). */
export type SubresourceHandler = (
  api: ApiServer,
  req: ResourceRequest,
  query: URLSearchParams,
  body: RequestBody | undefined,
  user: UserInfo,
) => Promise<Reply>;

/**
 * How often a write without a precondition tries again after another write got in first (the
 * reference retries without a limit): only a livelock guard (the unconditional-writes test, 12 clients on one
 * object under load, needed at most 97).
 */
const UNPINNED_WRITE_ATTEMPTS = 1000;
/**
 * Kinds whose PUT (main resource and subresources) must name the resourceVersion it was computed from, as the
 * reference's strategies that allow no unconditional update: a PodDisruptionBudget's status is only written from
 * what the writer last read.
 */
const CONDITIONAL_UPDATES_ONLY = new Set(['PodDisruptionBudget']);
/** Subresources served here; others (e.g. eviction) go to `subresourceHandlers`. */
const GENERIC_SUBRESOURCES = ['status', 'approval', 'scale'];

export class ApiServer {
  readonly naming: Naming;
  readonly subresourceHandlers = new Map<string, SubresourceHandler>();
  /** The node agents' container logs, for `pods/log` (the simulated nodes set it when they start). */
  podLogs?: PodLogSource;

  constructor(
    readonly registry: ResourceRegistry,
    readonly storage: Storage,
    readonly options: ApiOptions,
  ) {
    this.naming = registry.naming;
  }

  private get metaGroup(): string {
    return this.naming.protocol.metaGroup;
  }

  // ---- reads ----

  get(req: ResourceRequest, query: URLSearchParams): KubeObject {
    const requested = parseResourceVersion(query.get('resourceVersion') ?? '');
    const current = this.storage.currentRv();
    if (requested > current) throw tooLargeResourceVersion(requested, current);
    const obj = this.read(req.rt, keyOf(req));
    return req.subresource === 'scale' ? this.toScale(obj) : obj;
  }

  list(req: ResourceRequest, query: URLSearchParams): KubeList {
    const opts = parseListOptions(query, false, this.metaGroup);
    const sel = this.selection(req, query);
    const rt = req.rt;
    this.failOnCorrupt(rt, sel);
    const prefix = listPrefix(rt, sel.namespace);
    const scope = listScope(prefix, query);
    const now = this.options.now().getTime();
    const takeSnapshot = () => this.storage.snapshot(rt, now, scope, sel.namespace);
    let source: readonly KubeObject[];
    let listRv: number;
    let startAfter = '';
    let snapshot: Snapshot | undefined;
    if (opts.continueToken) {
      const token = decodeContinue(this.metaGroup, opts.continueToken, prefix);
      snapshot = token.snap ? this.storage.takeSnapshot(token.snap) : undefined;
      // Another list's snapshot would hand this request objects it was not authorized for.
      if (snapshot && snapshot.scope !== scope) {
        throw badRequest(
          'invalid continue token: it continues a list with other selectors: send the labelSelector, fieldSelector and shardSelector of the list it came from',
        );
      }
      if (token.snap && (!snapshot || now - snapshot.createdAt > this.options.continueTtlMs)) {
        const fresh = encodeContinue(this.metaGroup, { rv: 0, start: token.start, prefix });
        throw new ApiError(410, 'Expired', CONTINUE_EXPIRED_MESSAGE, undefined, fresh);
      }
      snapshot ??= takeSnapshot();
      source = snapshot.items;
      listRv = snapshot.rv;
      startAfter = keyOfStart(sel.namespace, token.start);
    } else {
      ({ source, rv: listRv } = this.readAt(rt, opts, sel.namespace));
      if (opts.limit > 0 && source.length > opts.limit) {
        snapshot = takeSnapshot();
        if (snapshot.rv === listRv) source = snapshot.items;
      }
    }
    const items: KubeObject[] = [];
    let i = startAfter ? upperBound(source, startAfter) : 0;
    for (; i < source.length; i++) {
      const obj = source[i];
      if (!sel.matches(obj)) continue;
      if (opts.limit > 0 && items.length === opts.limit) break;
      items.push(obj);
    }
    const metadata: KubeList['metadata'] = { resourceVersion: String(listRv) };
    if (opts.limit > 0 && i < source.length) {
      const last = items.length ? objectKey(items[items.length - 1].metadata) : startAfter;
      snapshot ??= takeSnapshot();
      const start = startOfKey(sel.namespace, last);
      metadata.continue = encodeContinue(this.metaGroup, { rv: listRv, start, prefix, snap: snapshot.id });
      if (!sel.filtered) metadata.remainingItemCount = source.length - i;
    }
    return { apiVersion: apiVersionOf(rt), kind: `${rt.kind}List`, metadata, items };
  }

  /** Current objects, or those at an exact resourceVersion, per the list options. */
  private readAt(rt: ResourceType, opts: ListOptions, namespace?: string): { source: KubeObject[]; rv: number } {
    const current = this.storage.currentRv();
    const requested = parseResourceVersion(opts.resourceVersion);
    if (requested > current) throw tooLargeResourceVersion(requested, current);
    if (opts.resourceVersionMatch === 'Exact') {
      return { source: this.storage.listAt(rt, Number(requested), namespace), rv: Number(requested) };
    }
    return { source: this.storage.list(rt, namespace), rv: current };
  }

  selection(req: ResourceRequest, query: URLSearchParams): Selection {
    return buildSelection(req.rt, req.namespace, query, {
      name: req.name,
      shardingEnabled: this.options.features('ShardedListAndWatch'),
      metaGroup: this.metaGroup,
    });
  }

  watchOptions(query: URLSearchParams): ListOptions {
    return parseListOptions(query, true, this.metaGroup, this.options.features('WatchList'));
  }

  // ---- writes ----

  /** `applied`: the managed fields of an apply that creates the object (an Update is recorded otherwise). */
  async create(
    req: ResourceRequest,
    query: URLSearchParams,
    body: RequestBody | undefined,
    user: UserInfo,
    applied?: ManagedFieldsEntry[],
  ): Promise<Reply> {
    if (req.subresource) return this.subresource(req, query, body, user);
    const opts = parseWriteOptions(query, 'CreateOptions', this.metaGroup);
    const decoded = this.decode(req.rt, body, opts);
    const rt = req.rt;
    let object = this.withTypeMeta(rt, decoded.object);
    const warnings = decoded.warnings;
    if (rt.namespaced) {
      const meta = object.metadata;
      if (meta.namespace && req.namespace && meta.namespace !== req.namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      meta.namespace = req.namespace ?? meta.namespace;
      if (!meta.namespace)
        throw badRequest('the server could not find the requested resource: a namespace is required');
      this.requireLiveNamespace(meta.namespace, rt, meta.name ?? '');
    } else {
      object.metadata = withoutFields(object.metadata, ['namespace']);
    }
    if (rt.virtual) return this.review(rt, object, user, warnings, this.fieldOwner(req, opts, body));
    const meta = withoutFields(object.metadata, NOT_SET_BY_CREATE);
    object.metadata = meta;
    if (rt.hasStatus) object = withoutFields(object, ['status']);
    if (!meta.name && meta.generateName) meta.name = meta.generateName + randomNameSuffix();
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339(this.options.now());
    if (rt.hasGeneration) meta.generation = 1;
    // Defaults first, as the reference's decoding applies them: managed fields include them, and not what the
    // create itself sets (a namespace's finalizer, the first status).
    this.options.validation?.defaults(rt, object);
    if (isNamespaceType(rt)) object = withNameLabel(object, this.naming.labels.metadataName);
    object = withEmptyStructs(object, false);
    const managedFields =
      applied ?? recordUpdate(undefined, withoutEmptySpec(object), this.fieldOwner(req, opts, body));
    object = withEmptyStructs(object);
    this.prepareCreate(rt, object);
    setManagedFields(object, managedFields);
    const effects = { warnings, auditAnnotations: {} };
    await this.admitAndValidate('CREATE', rt, undefined, object, undefined, user, opts.dryRun, effects);
    if (opts.dryRun) return { status: 201, body: object, ...effects };
    return { status: 201, body: await this.storage.backend.create(rt, object), ...effects };
  }

  async update(
    req: ResourceRequest,
    query: URLSearchParams,
    body: RequestBody | undefined,
    user: UserInfo,
  ): Promise<Reply> {
    if (req.subresource && !GENERIC_SUBRESOURCES.includes(req.subresource)) {
      return this.subresource(req, query, body, user);
    }
    const opts = parseWriteOptions(query, 'UpdateOptions', this.metaGroup);
    const { object, warnings } = this.decode(req.subresource === 'scale' ? this.scaleType() : req.rt, body, opts);
    const meta = object.metadata;
    if (meta.name !== undefined && meta.name !== req.name) {
      throw badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${req.name})`);
    }
    if (req.rt.namespaced && meta.namespace && meta.namespace !== req.namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    const expectedRv = meta.resourceVersion || undefined;
    if (!expectedRv && CONDITIONAL_UPDATES_ONLY.has(req.rt.kind)) {
      const field = 'metadata.resourceVersion';
      const message = `${field}: Invalid value: 0: must be specified for an update`;
      // The reference names the resource where the kind goes: `poddisruptionbudgets.policy "x" is invalid`.
      throw invalid({ ...req.rt, kind: req.rt.plural }, req.name ?? '', [
        { type: 'FieldValueInvalid', field, message },
      ]);
    }
    const owner = this.fieldOwner(req, opts, body);
    const effects = { warnings, auditAnnotations: {} };
    const result = await this.write(req, user, opts.dryRun, expectedRv, () => object, updateOwnership(owner), effects);
    return { status: 200, body: this.view(req, result), ...effects };
  }

  async patch(
    req: ResourceRequest,
    query: URLSearchParams,
    body: RequestBody | undefined,
    user: UserInfo,
  ): Promise<Reply> {
    if (req.subresource && !GENERIC_SUBRESOURCES.includes(req.subresource)) {
      return this.subresource(req, query, body, user);
    }
    const contentType = (body?.contentType ?? '').split(';')[0].trim();
    if (!(PATCH_CONTENT_TYPES as readonly string[]).includes(contentType)) throw unsupportedPatchType();
    const isApply = contentType === 'application/apply-patch+yaml';
    const opts = parseWriteOptions(query, 'PatchOptions', this.metaGroup, isApply);
    const target = req.subresource === 'scale' ? this.scaleType() : req.rt;
    const { object: patch, warnings } = this.decodePatch(target, body, contentType, opts);
    const key = keyOf(req);
    const owner = this.fieldOwner(req, opts, body);
    const effects = { warnings, auditAnnotations: {} };
    if (isApply) {
      const force = opts.force ?? false;
      const config = applyPatchChecked(contentType, {} as KubeObject, patch, req.rt.kind);
      if (!config || typeof config !== 'object' || Array.isArray(config)) {
        throw badRequest('the apply configuration is not an object');
      }
      if (!this.storage.get(req.rt, key) && !req.subresource) {
        const { object, managedFields } = applyOrConflict({}, config, owner, force);
        const text = JSON.stringify(object);
        const body = { text, contentType: 'application/json' };
        const created = await this.create(req, query, body, user, managedFields).catch((err) => {
          // Created meanwhile (by another client, or on another control plane): apply onto it instead.
          if (err instanceof ApiError && err.reason === 'AlreadyExists') return undefined;
          throw err;
        });
        if (created) return { ...created, warnings: [...warnings, ...created.warnings] };
      }
      let applied: ApplyResult | undefined;
      const build = (current: KubeObject) => {
        applied = applyOrConflict(current, config, owner, force);
        return applied.object as KubeObject;
      };
      const result = await this.write(
        req,
        user,
        opts.dryRun,
        undefined,
        build,
        () => applied?.managedFields ?? [],
        effects,
      );
      return { status: 200, body: this.view(req, result), ...effects };
    }
    const build = (current: KubeObject) => {
      const patched = applyPatchChecked(contentType, current, patch, target.kind) as KubeObject;
      if (!patched || typeof patched !== 'object' || Array.isArray(patched)) {
        throw badRequest('the patch produced a value that is not an object');
      }
      patched.metadata ??= {};
      return patched;
    };
    const result = await this.write(req, user, opts.dryRun, undefined, build, updateOwnership(owner), effects);
    return { status: 200, body: this.view(req, result), ...effects };
  }

  /**
   * Read-modify-write of one object: `build` turns the current object (or Scale view) into the
   * requested one; the result is merged into the stored object per subresource, validated, admitted
   * and written with the resourceVersion precondition. A write that named no resourceVersion (nor put
   * one in its patch) never answers 409: on a failed compare it starts again from the current object.
   */
  private async write(
    req: ResourceRequest,
    user: UserInfo,
    dryRun: boolean,
    expectedRv: string | undefined,
    build: (current: KubeObject) => KubeObject,
    owned: (old: KubeObject, next: KubeObject) => ManagedFieldsEntry[],
    /** Receives admission's warnings and audit annotations. */
    effects: AdmissionEffects,
  ): Promise<KubeObject> {
    const rt = req.rt;
    const key = keyOf(req);
    // The first attempt starts from the cache (a hint: it may lag the store); a retry from the store.
    let current = await this.readForWrite(rt, key);
    let fresh = false;
    for (let attempt = 1; ; attempt++) {
      const old = current;
      const view = req.subresource === 'scale' ? this.toScale(old) : old;
      // The patch engines return fresh objects and never touch their input, so the stored object needs no copy.
      let requested = build(view);
      if (req.subresource === 'scale') checkScale(requested, req.name ?? '');
      // Defaults and empty structs before the comparison with the stored object (which has both): a request that
      // leaves them out changes nothing, and its spec is no new generation.
      if (!req.subresource) {
        this.options.validation?.defaults(rt, requested);
        requested = withEmptyStructs({ ...requested, apiVersion: old.apiVersion, kind: old.kind });
      }
      const pinnedRv =
        expectedRv ??
        (requested.metadata.resourceVersion !== view.metadata.resourceVersion
          ? requested.metadata.resourceVersion
          : undefined);
      const stale = pinnedRv !== undefined && pinnedRv !== old.metadata.resourceVersion;
      let next = stale ? undefined : this.merge(rt, req.subresource, old, requested);
      if (next && isNamespaceType(rt)) next = withNameLabel(next, this.naming.labels.metadataName);
      if (next) next = withEmptyStructs(next);
      if (next) setManagedFields(next, owned(old, next));
      const unchanged = next !== undefined && jsonEqual(withoutRv(next), withoutRv(old));
      // A conflict or a change of nothing, judged on the cache, may be the cache lagging: judge again on the store's.
      if ((stale || unchanged) && !fresh) {
        await this.storage.backend.caughtUp(rt);
        current = this.read(rt, key);
        fresh = true;
        continue;
      }
      if (!next) throw conflict(rt, req.name ?? '', STALE_OBJECT);
      if (unchanged) return old;
      await this.admitAndValidate('UPDATE', rt, req.subresource, next, old, user, dryRun, effects);
      if (dryRun) return next;
      // As the reference: an update removes an object only once nothing holds it, neither a finalizer
      // nor a pending grace period (a terminating pod's status writes must not delete it).
      const finalize =
        next.metadata.deletionTimestamp &&
        !next.metadata.finalizers?.length &&
        !old.metadata.deletionGracePeriodSeconds;
      try {
        if (finalize) return await this.storage.backend.remove(rt, key, old.metadata.resourceVersion);
        return await this.storage.backend.update(rt, next, old.metadata.resourceVersion);
      } catch (err) {
        const retriable = err instanceof ApiError && err.reason === 'Conflict' && pinnedRv === undefined;
        if (!retriable || attempt >= UNPINNED_WRITE_ATTEMPTS) throw err;
        current = err instanceof StaleWrite ? err.current : this.read(rt, key);
        fresh = true;
      }
    }
  }

  /** The object a write starts from: the cache's, or (when the cache does not show it yet) the store's. */
  private async readForWrite(rt: ResourceType, key: string): Promise<KubeObject> {
    if (this.storage.get(rt, key)) return this.read(rt, key);
    await this.storage.backend.caughtUp(rt);
    return this.read(rt, key);
  }

  /** The stored object that results from a write of `requested` through the main resource or a subresource. */
  private merge(rt: ResourceType, subresource: string | undefined, old: KubeObject, requested: KubeObject): KubeObject {
    if (subresource === 'status') return statusWrite(rt, old, requested);
    if (subresource === 'approval') {
      const status = { ...((old.status as object) ?? {}), conditions: (requested.status as any)?.conditions };
      return { ...statusWrite(rt, old, requested), status };
    }
    if (subresource === 'scale') {
      const replicas = (requested as any).spec?.replicas;
      const next: KubeObject = { ...old, spec: { ...(old.spec as object), replicas } };
      if (rt.hasGeneration && generationChanged(rt.kind, old, next)) {
        next.metadata = { ...old.metadata, generation: (old.metadata.generation ?? 0) + 1 };
      }
      return next;
    }
    const next: KubeObject = { ...requested, apiVersion: old.apiVersion, kind: old.kind };
    if (rt.hasStatus) next.status = old.status;
    // As the reference's CSR strategy: the main resource changes metadata only; the spec never changes and the
    // status through /status and /approval.
    if (rt.kind === 'CertificateSigningRequest') next.spec = old.spec;
    if (rt.group === '' && rt.kind === 'Service' && next.spec && old.spec) {
      next.spec = { ...(next.spec as object) };
      keepAllocatedIPs(next.spec as Record<string, unknown>, old.spec as Record<string, unknown>);
    }
    const m = requested.metadata;
    next.metadata = {
      ...m,
      name: old.metadata.name,
      namespace: old.metadata.namespace,
      uid: old.metadata.uid,
      creationTimestamp: old.metadata.creationTimestamp,
      deletionTimestamp: old.metadata.deletionTimestamp,
      deletionGracePeriodSeconds: old.metadata.deletionGracePeriodSeconds,
      resourceVersion: old.metadata.resourceVersion,
      generation: old.metadata.generation,
    };
    for (const k of Object.keys(next.metadata) as (keyof KubeObject['metadata'])[]) {
      if (next.metadata[k] === undefined) delete next.metadata[k];
    }
    if (rt.hasGeneration && generationChanged(rt.kind, old, next)) {
      next.metadata.generation = (old.metadata.generation ?? 0) + 1;
    }
    // As the reference's namespace strategy: an update keeps the finalizers (only `/finalize` changes them).
    if (isNamespaceType(rt)) next.spec = { ...(next.spec as object), finalizers: (old.spec as any)?.finalizers };
    return next;
  }

  /** Who owns what a write changes: the `fieldManager` option or the client's name, and the fields it tracks. */
  private fieldOwner(req: ResourceRequest, opts: WriteOptions, body: RequestBody | undefined): FieldOwner {
    const rt = req.rt;
    const apiVersion = apiVersionOf(rt);
    const tracked =
      req.subresource === 'status'
        ? allButSpec
        : rt.kind === 'CertificateSigningRequest'
          ? neitherSpecNorStatus
          : rt.hasStatus
            ? allButStatus
            : everyField;
    return this.owner(opts, body, apiVersion, rt.kind, req.subresource, tracked);
  }

  /**
   * Who a create through a subresource answering another kind (a service account's TokenRequest) records as the
   * owner of the fields its request sets.
   */
  subresourceOwner(
    req: ResourceRequest,
    query: URLSearchParams,
    body: RequestBody | undefined,
    kind: string,
    apiVersion: string,
  ): FieldOwner {
    const opts = parseWriteOptions(query, 'CreateOptions', this.metaGroup);
    return this.owner(opts, body, apiVersion, kind, req.subresource, allButStatus);
  }

  private owner(
    opts: WriteOptions,
    body: RequestBody | undefined,
    apiVersion: string,
    kind: string,
    subresource: string | undefined,
    tracked: FieldOwner['tracked'],
  ): FieldOwner {
    return {
      manager: opts.fieldManager ?? managerFromUserAgent(body?.userAgent),
      apiVersion,
      subresource,
      time: rfc3339(this.options.now()),
      schema: schemaFor(kind, apiVersion) ?? 'any',
      tracked,
    };
  }

  // ---- deletes ----

  async delete(
    req: ResourceRequest,
    query: URLSearchParams,
    body: RequestBody | undefined,
    user: UserInfo,
  ): Promise<Reply> {
    if (req.subresource) return this.subresource(req, query, body, user);
    const rt = req.rt;
    const key = keyOf(req);
    const opts = this.deleteOptions(query, body);
    if (this.storage.isCorrupt(rt, key)) {
      if (!opts.ignoreStoreReadErrorWithClusterBreakingPotential) throw this.corruptError(rt, key);
      if (!opts.dryRun) await this.storage.backend.remove(rt, key);
      return { status: 200, body: this.success(rt, req.name ?? ''), warnings: [] };
    }
    if (opts.ignoreStoreReadErrorWithClusterBreakingPotential) {
      throw invalidOptions(this.metaGroup, 'DeleteOptions', [
        {
          type: 'FieldValueInvalid',
          field: 'ignoreStoreReadErrorWithClusterBreakingPotential',
          message:
            'ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: is exclusively used to delete corrupt object(s), try again by removing this option',
        },
      ]);
    }
    // As a write without a resourceVersion: when another write got in first, the preconditions (if any)
    // are checked again on the object the store holds, and the delete tries again.
    let old = await this.readForWrite(rt, key);
    let fresh = false;
    for (let attempt = 1; ; attempt++) {
      const failed = preconditionFailure(old, opts.preconditions ?? {});
      if (failed && !fresh) {
        // The cache may lag what the client read: judge the preconditions on the store's object.
        await this.storage.backend.caughtUp(rt);
        old = this.read(rt, key);
        fresh = true;
        continue;
      }
      // The reference names the kind here, not the resource: `Operation cannot be fulfilled on ConfigMap "x"`.
      if (failed) throw conflict({ group: rt.group, plural: rt.kind }, req.name ?? '', failed);
      const effects = noEffects();
      await this.admitAndValidate('DELETE', rt, undefined, undefined, old, user, opts.dryRun, effects);
      let result: { deleted: boolean; object: KubeObject };
      try {
        result = await this.deleteObject(rt, old, opts);
      } catch (err) {
        if (!(err instanceof ApiError && err.reason === 'Conflict') || attempt >= UNPINNED_WRITE_ATTEMPTS) throw err;
        old = err instanceof StaleWrite ? err.current : this.read(rt, key);
        fresh = true;
        continue;
      }
      const body2 =
        result.deleted && !this.returnsDeleted(rt) ? this.success(rt, req.name ?? '', old.metadata.uid) : result.object;
      const status = !result.deleted && opts.orphanDependents === false ? 202 : 200;
      return { status, body: body2, ...effects };
    }
  }

  /** Kinds whose reference registry answers a DELETE with the deleted object rather than a Status. */
  private returnsDeleted(rt: ResourceType): boolean {
    if (rt.group === group(this.naming, 'storage')) return rt.kind === 'StorageClass';
    return rt.group === '' && RETURNS_DELETED_CORE.has(rt.kind);
  }

  /** Deletes now, or marks for deletion when finalizers or a grace period hold the object. */
  async deleteObject(
    rt: ResourceType,
    old: KubeObject,
    opts: DeleteOptions,
  ): Promise<{ deleted: boolean; object: KubeObject }> {
    const meta = old.metadata;
    const finalizers = [...(meta.finalizers ?? [])];
    const policy = opts.propagationPolicy ?? (opts.orphanDependents ? 'Orphan' : undefined);
    const addFinalizer = (f: string) => {
      if (!finalizers.includes(f)) finalizers.push(f);
    };
    if (policy === 'Orphan') addFinalizer('orphan');
    if (policy === 'Foreground') addFinalizer('foregroundDeletion');
    const grace = this.gracePeriod(rt, old, opts.gracePeriodSeconds);
    // A namespace is always emptied first (by the namespace controller), then removed.
    const namespace = isNamespaceType(rt);
    const immediate = finalizers.length === 0 && grace === 0 && !namespace;
    if (immediate && !isPodResource(rt)) {
      if (opts.dryRun) return { deleted: true, object: old };
      return { deleted: true, object: await this.storage.backend.remove(rt, objectKey(meta), meta.resourceVersion) };
    }
    const now = this.options.now();
    const marked: KubeObject = {
      ...old,
      metadata: { ...meta, finalizers: finalizers.length ? finalizers : undefined },
    };
    const deadline = new Date(now.getTime() + grace * 1000);
    const current = meta.deletionTimestamp ? Date.parse(meta.deletionTimestamp) : Number.POSITIVE_INFINITY;
    if (deadline.getTime() < current) {
      marked.metadata.deletionTimestamp = rfc3339(deadline);
      // The reference's namespace registry marks a namespace without a grace period.
      if (!namespace) marked.metadata.deletionGracePeriodSeconds = grace;
      // As the reference's store: only objects that carry a generation count the delete as a change of it.
      const generation = meta.generation ?? 0;
      if (!meta.deletionTimestamp && generation > 0) marked.metadata.generation = generation + 1;
    }
    if (!marked.metadata.finalizers) delete marked.metadata.finalizers;
    if (immediate) {
      // A pod's delete is graceful even with no grace left: as the reference's, it writes the deletion's marks,
      // then removes the object it wrote (watchers see both), and answers that.
      if (opts.dryRun) return { deleted: true, object: marked };
      const written = jsonEqual(marked, old)
        ? old
        : await this.storage.backend.update(rt, marked, meta.resourceVersion);
      const removed = await this.storage.backend.remove(rt, objectKey(meta), written.metadata.resourceVersion);
      return { deleted: true, object: removed };
    }
    if (namespace) marked.status = { ...(old.status as object), phase: 'Terminating' };
    if (jsonEqual(marked, old) || opts.dryRun) return { deleted: false, object: opts.dryRun ? marked : old };
    return { deleted: false, object: await this.storage.backend.update(rt, marked, meta.resourceVersion) };
  }

  /** Pods bound to a node and still running get their grace period; everything else goes at once. */
  private gracePeriod(rt: ResourceType, obj: KubeObject, requested: number | undefined): number {
    if (!isPodResource(rt)) return 0;
    const spec = (obj.spec ?? {}) as { nodeName?: string; terminationGracePeriodSeconds?: number };
    const phase = (obj.status as { phase?: string } | undefined)?.phase;
    if (!spec.nodeName || phase === 'Succeeded' || phase === 'Failed') return 0;
    return requested ?? spec.terminationGracePeriodSeconds ?? 30;
  }

  async deleteCollection(
    req: ResourceRequest,
    query: URLSearchParams,
    body: RequestBody | undefined,
    user: UserInfo,
  ): Promise<Reply> {
    const opts = this.deleteOptions(query, body);
    const listQuery = new URLSearchParams(query);
    for (const p of ['gracePeriodSeconds', 'propagationPolicy', 'orphanDependents', 'dryRun']) listQuery.delete(p);
    const listed = this.list(req, listQuery);
    const deleted: KubeObject[] = [];
    for (const obj of listed.items) {
      const current = this.storage.get(req.rt, objectKey(obj.metadata));
      if (!current) continue;
      await this.admitAndValidate('DELETE', req.rt, undefined, undefined, current, user, opts.dryRun, noEffects());
      deleted.push((await this.deleteObject(req.rt, current, opts)).object);
    }
    return { status: 200, body: { ...listed, items: deleted }, warnings: [] };
  }

  deleteOptions(query: URLSearchParams, body: RequestBody | undefined): DeleteOptions {
    let fromBody: Omit<Partial<DeleteOptions>, 'dryRun'> & { dryRun?: string[] } = {};
    if (body && !isBlank(body.text)) {
      try {
        fromBody = decodeBody(body.text, body.contentType, undefined).object as typeof fromBody;
      } catch (err) {
        throw badRequest(`invalid DeleteOptions: ${(err as Error).message}`);
      }
    }
    if (!isObj(fromBody)) throw badRequest('DeleteOptions: the body must be a JSON object');
    const problems: FieldProblem[] = schemaShapeErrors(fromBody, 'DeleteOptions');
    if (problems.length) throw invalidOptions(this.metaGroup, 'DeleteOptions', problems);
    const dryRun = parseDryRun(query, problems) || (fromBody.dryRun ?? []).includes('All');
    const num = (name: string) => {
      const v = query.get(name);
      return v === null ? undefined : Number(v);
    };
    const bool = (name: string) => queryBool(query.get(name));
    const opts: DeleteOptions = {
      dryRun,
      gracePeriodSeconds: num('gracePeriodSeconds') ?? fromBody.gracePeriodSeconds,
      propagationPolicy: (query.get('propagationPolicy') ??
        fromBody.propagationPolicy) as DeleteOptions['propagationPolicy'],
      orphanDependents: bool('orphanDependents') ?? fromBody.orphanDependents,
      preconditions: fromBody.preconditions,
      ignoreStoreReadErrorWithClusterBreakingPotential:
        bool('ignoreStoreReadErrorWithClusterBreakingPotential') ??
        fromBody.ignoreStoreReadErrorWithClusterBreakingPotential,
    };
    if (opts.gracePeriodSeconds !== undefined && !Number.isInteger(opts.gracePeriodSeconds)) {
      problems.push({
        type: 'FieldValueInvalid',
        field: 'gracePeriodSeconds',
        message: `gracePeriodSeconds: Invalid value: ${JSON.stringify(opts.gracePeriodSeconds)}: must be an integer`,
      });
    } else if (opts.gracePeriodSeconds !== undefined && opts.gracePeriodSeconds < 0) {
      // As the reference's delete path: a negative grace period is accepted and means one second.
      opts.gracePeriodSeconds = 1;
    }
    if (
      opts.propagationPolicy !== undefined &&
      !['Orphan', 'Background', 'Foreground'].includes(opts.propagationPolicy)
    ) {
      problems.push({
        type: 'FieldValueNotSupported',
        field: 'propagationPolicy',
        message: `propagationPolicy: Unsupported value: ${JSON.stringify(opts.propagationPolicy)}: supported values: "Foreground", "Background", "Orphan", "nil"`,
      });
    } else if (opts.propagationPolicy !== undefined && opts.orphanDependents !== undefined) {
      problems.push({
        type: 'FieldValueInvalid',
        field: 'propagationPolicy',
        message: `propagationPolicy: Invalid value: ${JSON.stringify(opts.propagationPolicy)}: orphanDependents and deletionPropagation cannot be both set`,
      });
    }
    if (opts.ignoreStoreReadErrorWithClusterBreakingPotential && opts.dryRun) {
      problems.push({
        type: 'FieldValueInvalid',
        field: 'ignoreStoreReadErrorWithClusterBreakingPotential',
        message:
          'ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .dryRun',
      });
    }
    if (problems.length) throw invalidOptions(this.metaGroup, 'DeleteOptions', problems);
    return opts;
  }

  // ---- helpers ----

  /** What a write through a subresource answers: the Scale view for `/scale`, the object otherwise. */
  private view(req: ResourceRequest, obj: KubeObject): KubeObject {
    return req.subresource === 'scale' ? this.toScale(obj) : obj;
  }

  read(rt: ResourceType, key: string): KubeObject {
    if (this.storage.isCorrupt(rt, key)) throw this.corruptError(rt, key);
    const obj = this.storage.get(rt, key);
    if (!obj) throw notFound(rt, key.slice(key.indexOf('/') + 1));
    return obj;
  }

  private corruptError(rt: ResourceType, key: string): ApiError {
    return internalError(
      `failed to decode the object ${key} of ${rt.plural}: data from the storage is not transformable or decodable; delete it with ignoreStoreReadErrorWithClusterBreakingPotential=true`,
    );
  }

  private failOnCorrupt(rt: ResourceType, sel: Selection): void {
    const keys = this.storage.corruptKeys(rt).filter((k) => !sel.namespace || k.startsWith(`${sel.namespace}/`));
    if (keys.length) {
      throw internalError(`failed to list ${rt.plural}: corrupt objects found in storage: ${keys.join(', ')}`);
    }
  }

  private success(rt: ResourceType, name: string, uid?: string): Status {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { ...objectDetails(rt.group, rt.plural, name), ...(uid ? { uid } : {}) },
    } as Status;
  }

  /**
   * New content only in a namespace that exists and is not being deleted: otherwise 403 on the created resource
   * with the reference's `NamespaceTerminating` cause, which controllers take as "nothing to retry".
   */
  private requireLiveNamespace(namespace: string, rt: ResourceType, name: string): void {
    const nsType = this.registry.resource('', 'v1', 'namespaces')!;
    const ns = this.storage.get(nsType, namespace);
    if (!ns) throw notFound(nsType, namespace);
    if (ns.metadata.deletionTimestamp) {
      const why = `unable to create new content in namespace ${namespace} because it is being terminated`;
      const cause = { reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated` };
      throw forbidden(rt, name, why, [{ ...cause, field: 'metadata.namespace' }]);
    }
  }

  /** The object with apiVersion and kind checked (or inferred from the endpoint) and written first, as the reference prints them. */
  private withTypeMeta(rt: ResourceType, obj: KubeObject): KubeObject {
    const apiVersion = apiVersionOf(rt);
    const given = { apiVersion: obj.apiVersion ?? apiVersion, kind: obj.kind ?? rt.kind };
    if (given.apiVersion !== apiVersion || given.kind !== rt.kind) {
      throw badRequest(
        `the API version in the data (${given.apiVersion}) does not match the expected API version (${apiVersion})` +
          (given.kind !== rt.kind ? `, or the kind (${given.kind}) does not match ${rt.kind}` : ''),
      );
    }
    const inPlace = obj.apiVersion === apiVersion && obj.kind === rt.kind && startsWithTypeMeta(obj);
    return inPlace ? obj : { ...given, ...obj, ...given };
  }

  /** Status starts empty on create (the request's is left out), except the phases the reference sets. */
  private prepareCreate(rt: ResourceType, obj: KubeObject): void {
    if (isNamespaceType(rt)) {
      obj.status = { phase: 'Active' };
      const spec = (obj.spec ?? {}) as { finalizers?: string[] };
      obj.spec = { ...spec, finalizers: spec.finalizers ?? [this.naming.namespaceFinalizer] };
    }
    if (isPodResource(rt)) obj.status = { phase: 'Pending' };
    if (rt.group === '' && rt.kind === 'Service' && obj.spec) {
      const inUse = new Set(this.storage.list(rt).flatMap((svc) => (svc.spec as any)?.clusterIPs ?? []));
      const problems = allocateServiceIPs(obj.spec as Record<string, unknown>, inUse);
      if (problems.length) throw invalid(rt, obj.metadata.name ?? '', problems);
    }
    // Volumes and claims start Pending (the reference's strategies; a volume also stamps the phase's time).
    if (rt.group === '' && rt.kind === 'PersistentVolumeClaim') obj.status = { phase: 'Pending' };
    if (rt.group === '' && rt.kind === 'PersistentVolume') {
      obj.status = { phase: 'Pending', lastPhaseTransitionTime: rfc3339(this.options.now()) };
    }
  }

  private async admitAndValidate(
    operation: Operation,
    rt: ResourceType,
    subresource: string | undefined,
    object: KubeObject | undefined,
    oldObject: KubeObject | undefined,
    user: UserInfo,
    dryRun: boolean,
    effects: AdmissionEffects,
  ): Promise<void> {
    const meta = (object ?? oldObject)!.metadata;
    const attrs: AdmissionAttributes = {
      operation,
      rt,
      subresource,
      namespace: meta.namespace,
      name: meta.name ?? '',
      object,
      oldObject,
      user,
      dryRun,
      warnings: effects.warnings,
      auditAnnotations: effects.auditAnnotations,
    };
    await this.runAdmission('admit', attrs);
    if (object && isPodResource(rt) && (operation === 'UPDATE' || !subresource)) {
      settlePodQosClass(object, oldObject);
    }
    if (object) {
      const validation = this.options.validation;
      if (validation && !subresource) validation.defaults(rt, object);
      if (!object.metadata.name) {
        const problem: FieldProblem = {
          type: 'FieldValueRequired',
          field: 'metadata.name',
          message: 'metadata.name: Required value: name or generateName is required',
        };
        throw invalid(rt, '', [problem]);
      }
      const checked = validation?.validate(operation, rt, object, oldObject, subresource) ?? [];
      const problems = Array.isArray(checked) ? checked : await checked;
      if (problems.length) throw invalid(rt, object.metadata.name, problems);
    }
    await this.runAdmission('validate', attrs);
  }

  /**
   * Admission of a request that a subresource handler serves (an eviction, a token request): the plugins see its object under
   * the subresource, as the reference's REST handlers call admission before acting.
   */
  async admitSubresource(req: ResourceRequest, object: KubeObject, user: UserInfo, dryRun: boolean): Promise<void> {
    const attrs: AdmissionAttributes = {
      operation: 'CREATE',
      rt: req.rt,
      subresource: req.subresource,
      namespace: req.namespace,
      name: req.name ?? '',
      object,
      user,
      dryRun,
    };
    await this.runAdmission('admit', attrs);
    await this.runAdmission('validate', attrs);
  }

  private async runAdmission(phase: 'admit' | 'validate', attrs: AdmissionAttributes): Promise<void> {
    // Only a plugin's promise is awaited: most answer at once, and each await is a turn of the microtask queue.
    for (const plugin of this.options.admission) {
      const pending = plugin[phase]?.(attrs);
      if (pending) await pending;
    }
  }

  private decode(
    rt: ResourceType,
    body: RequestBody | undefined,
    opts: WriteOptions,
  ): { object: KubeObject; warnings: string[] } {
    const { object, warnings } = this.decodeChecked(rt, body, body?.contentType ?? 'application/json', opts, true);
    if (!object || typeof object !== 'object' || Array.isArray(object)) {
      throw badRequest('the body of the request must be a JSON object');
    }
    const obj = object as KubeObject;
    if (obj.metadata === undefined || obj.metadata === null) obj.metadata = {};
    if (typeof obj.metadata !== 'object' || Array.isArray(obj.metadata)) {
      throw badRequest('metadata: must be an object');
    }
    // A whole object is decoded into its kind there: a value of the wrong JSON type (a YAML 1.1 `yes` where a
    // string belongs, too) fails that decoding, 400, worded here by the field and the type it needs.
    const mistyped = schemaShapeErrors(obj, rt.kind, apiVersionOf(rt));
    if (mistyped.length) {
      const problems = mistyped.map((e) => e.message).join(', ');
      throw badRequest(`${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: ${problems}`);
    }
    return { object: obj, warnings };
  }

  private decodePatch(
    rt: ResourceType,
    body: RequestBody | undefined,
    contentType: string,
    opts: WriteOptions,
  ): { object: unknown; warnings: string[] } {
    // JSON patches are operation lists: field validation applies to the patched result's shape
    // in the reference; here it applies to merge-style patch documents, which name fields directly.
    const checked = contentType !== 'application/json-patch+json';
    return this.decodeChecked(rt, body, contentType, checked ? opts : { ...opts, fieldValidation: 'Ignore' });
  }

  /** `whole`: a create or update body, decoded into its kind (not a patch). */
  private decodeChecked(
    rt: ResourceType,
    body: RequestBody | undefined,
    contentType: string,
    opts: WriteOptions,
    whole = false,
  ): { object: unknown; warnings: string[] } {
    if (!body || isBlank(body.text)) throw badRequest('the request body is empty');
    const schema = schemaFor(rt.kind, apiVersionOf(rt));
    let decoded: ReturnType<typeof decodeBody>;
    try {
      decoded = decodeBody(body.text, contentType, schema);
    } catch (err) {
      if (err instanceof UnsupportedMediaTypeError) {
        throw unsupportedMediaType(BODY_MEDIA_TYPES);
      }
      if (whole && err instanceof JsonSyntaxError)
        throw badRequest(unrecognizedObject(rt.kind, err.message, body.text));
      throw badRequest((err as Error).message);
    }
    // Strategic merge patch directives ($patch, $retainKeys, $setElementOrder/<list>, ...) are syntax, not fields.
    const directives = contentType.split(';')[0].trim() === 'application/strategic-merge-patch+json';
    const unknown = directives
      ? decoded.unknown.filter((p) => !p.slice(p.lastIndexOf('.') + 1).startsWith('$'))
      : decoded.unknown;
    if (opts.fieldValidation === 'Strict' && (unknown.length || decoded.duplicate.length)) {
      const strict = strictDecodingError(unknown, decoded.duplicate);
      // A whole object (not a patch) is refused as the reference's decoder into its kind words it.
      const isPatch = contentType.includes('patch');
      throw badRequest(
        isPatch ? strict : `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: ${strict}`,
      );
    }
    // Ignore and Warn drop unknown fields, as decoding into the typed object does in the reference.
    if (schema && decoded.unknown.length) dropUnknownFields(decoded.object, schema, directives);
    if (opts.fieldValidation === 'Ignore') return { object: decoded.object, warnings: [] };
    // Strategic-merge directives (`$patch`, `$setElementOrder/...`) are instructions, not fields.
    if (contentType.startsWith('application/strategic-merge-patch+json')) {
      decoded.unknown = decoded.unknown.filter((path) => !/(^|\.)\$/.test(path));
    }
    return { object: decoded.object, warnings: fieldValidationWarnings(unknown, decoded.duplicate) };
  }

  private async subresource(
    req: ResourceRequest,
    query: URLSearchParams,
    body: RequestBody | undefined,
    user: UserInfo,
  ): Promise<Reply> {
    const handler = this.subresourceHandlers.get(`${req.rt.plural}/${req.subresource}`);
    if (!handler)
      throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
    return handler(this, req, query, body, user);
  }

  /** Review resources (access and token reviews) are answered by an admission-free evaluator. */
  reviewer?: (rt: ResourceType, obj: KubeObject, user: UserInfo) => Promise<KubeObject>;

  private async review(
    rt: ResourceType,
    obj: KubeObject,
    user: UserInfo,
    warnings: string[],
    owner: FieldOwner,
  ): Promise<Reply> {
    if (!this.reviewer) throw new ApiError(405, 'MethodNotAllowed', `${rt.plural} are not served`);
    const problems = schemaShapeErrors(obj, rt.kind, apiVersionOf(rt));
    if (problems.length) throw invalid(rt, obj.metadata.name ?? '', problems);
    // The reference's create handler records the request's fields before the review fills its status: a review
    // answered as the request itself (access and token reviews) carries them, a new object (rules, self) none.
    const managedFields = recordUpdate(undefined, obj, owner);
    const answer = await this.reviewer(rt, obj, user);
    if (answer === obj) setManagedFields(answer, managedFields);
    return { status: 201, body: answer, warnings };
  }

  private scaleType(): ResourceType {
    // Scale has no storage of its own; a synthetic type lets decoding find its schema.
    return { ...this.registry.byKind('Deployment')!, kind: 'Scale', group: 'autoscaling', version: 'v1' };
  }

  toScale(obj: KubeObject): KubeObject {
    const spec = (obj.spec ?? {}) as { replicas?: number; selector?: LabelSelector | Record<string, string> };
    const status = (obj.status ?? {}) as { replicas?: number };
    const sel = spec.selector;
    const selector =
      sel && ('matchLabels' in sel || 'matchExpressions' in sel)
        ? labelSelectorAsString(sel as LabelSelector)
        : labelSelectorAsString({ matchLabels: sel as Record<string, string> | undefined });
    const m = obj.metadata;
    return {
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: {
        name: m.name,
        namespace: m.namespace,
        uid: m.uid,
        resourceVersion: m.resourceVersion,
        creationTimestamp: m.creationTimestamp,
      },
      spec: { replicas: spec.replicas ?? 0 },
      status: { replicas: status.replicas ?? 0, selector },
    };
  }
}

export interface DeleteOptions {
  dryRun: boolean;
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  ignoreStoreReadErrorWithClusterBreakingPotential?: boolean;
}

export function keyOf(req: Pick<ResourceRequest, 'namespace' | 'name'>): string {
  return objectKey({ namespace: req.namespace, name: req.name });
}

/** Index of the first object whose key sorts after `key`. */
function upperBound(items: readonly KubeObject[], key: string): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (objectKey(items[mid].metadata) <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function withoutRv(obj: KubeObject): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion: undefined } };
}

/** Deletes the fields `node` does not know from a decoded body; `directives` keeps strategic merge patch keys. */
function dropUnknownFields(value: unknown, node: Node, directives: boolean): void {
  if (typeof node === 'string' || typeof value !== 'object' || value === null) return;
  if ('list' in node) {
    if (Array.isArray(value)) for (const item of value) dropUnknownFields(item, node.list, directives);
    return;
  }
  if (Array.isArray(value)) return;
  const obj = value as Record<string, unknown>;
  const fields = 'object' in node ? node.object : undefined;
  for (const key of Object.keys(obj)) {
    const child = fields === undefined ? (node as MapNode).map : Object.hasOwn(fields, key) ? fields[key] : undefined;
    if (child !== undefined) dropUnknownFields(obj[key], child, directives);
    else if (!(directives && key.startsWith('$'))) delete obj[key];
  }
}

/** Why a delete's preconditions do not hold for `old`, if they do not, in the reference's words. */
function preconditionFailure(old: KubeObject, pre: { uid?: string; resourceVersion?: string }): string | undefined {
  if (pre.uid && pre.uid !== old.metadata.uid) {
    return `the UID in the precondition (${pre.uid}) does not match the UID in record (${old.metadata.uid}). The object might have been deleted and then recreated`;
  }
  if (pre.resourceVersion && pre.resourceVersion !== old.metadata.resourceVersion) {
    return `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${old.metadata.resourceVersion}). The object might have been modified`;
  }
  return undefined;
}

/** Metadata a create ignores when the client sends it. */
const NOT_SET_BY_CREATE = ['resourceVersion', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink'];

/**
 * `obj` itself when it has none of `fields`, else a copy without them. Not `delete`: a create's object becomes the
 * stored one, and a deleted property would leave it in V8's slower dictionary layout.
 */
function withoutFields<T extends object>(obj: T, fields: readonly string[]): T {
  if (!fields.some((field) => Object.hasOwn(obj, field))) return obj;
  return Object.fromEntries(Object.entries(obj).filter(([key]) => !fields.includes(key))) as T;
}

const RETURNS_DELETED_CORE = new Set(['Pod', 'Service', 'ServiceAccount', 'PersistentVolume', 'PersistentVolumeClaim']);

/** Which top-level fields a write's managed fields track: through /status, all but the spec; else all but status. */
const allButSpec = (field: string) => field !== 'spec';
const allButStatus = (field: string) => field !== 'status';
const everyField = () => true;
/** A CSR's main resource: the reference resets spec there too, so its writes own neither (metadata only). */
const neitherSpecNorStatus = (field: string) => field !== 'spec' && field !== 'status';

/** Whether an object's first two keys are apiVersion and kind, in that order (as clients send them). */
function startsWithTypeMeta(obj: object): boolean {
  let position = 0;
  for (const key in obj) {
    if (key !== (position === 0 ? 'apiVersion' : 'kind')) return false;
    if (++position === 2) return true;
  }
  return false;
}

/**
 * The object whose fields a create's manager owns: an empty `spec` (a namespace's or a node's, filled in as an
 * empty struct) is owned by nobody, as the reference records it; empty structs inside one are owned.
 */
function withoutEmptySpec(object: KubeObject): KubeObject {
  const spec = object.spec;
  if (!spec || typeof spec !== 'object' || Object.keys(spec).length > 0) return object;
  const { spec: _spec, ...rest } = object;
  return rest as KubeObject;
}

/** Sets the managed fields of an object; an empty list leaves none. */
function setManagedFields(object: KubeObject, entries: ManagedFieldsEntry[]): void {
  if (entries.length > 0) object.metadata.managedFields = entries;
  else delete object.metadata.managedFields;
}

/**
 * The ownership an Update records. Managed fields the request sets replace the stored ones first (the
 * reference's way to reset them); a request without them keeps the stored ones.
 */
function updateOwnership(owner: FieldOwner) {
  return (old: KubeObject, next: KubeObject): ManagedFieldsEntry[] => {
    const given = next.metadata.managedFields;
    const base = given === undefined ? old : { ...old, metadata: { ...old.metadata, managedFields: given } };
    return recordUpdate(base, next, owner);
  };
}

/** An apply of `config` onto `live`, its conflicts answered 409 naming each field and its manager. */
function applyOrConflict(live: object, config: object, owner: FieldOwner, force: boolean): ApplyResult {
  try {
    return applyConfiguration(live as Record<string, unknown>, config as Record<string, unknown>, owner, force);
  } catch (err) {
    if (!(err instanceof ApplyConflict)) throw err;
    const causes = err.conflicts.map((c) => ({
      reason: 'FieldManagerConflict',
      message: `conflict with ${managerLabel(c)}`,
      field: c.path,
    }));
    // The reference's conflict Status names no object: its details hold the causes only.
    throw new ApiError(409, 'Conflict', err.message, { causes });
  }
}

/** The object metadata a write may change; the rest is the server's. */
const USER_METADATA = ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const;

/**
 * Metadata a status write leaves as it was, by kind, as the reference's status strategies reset it (a pod's
 * owners, which old kubelets corrupted; a Deployment's labels; all of an APIService's). Other kinds take the
 * request's metadata changes with its status, as the reference's generic status update does.
 */
const STATUS_KEEPS_METADATA: Readonly<Record<string, readonly (typeof USER_METADATA)[number][]>> = {
  Pod: ['ownerReferences'],
  Deployment: ['labels'],
  APIService: USER_METADATA,
};

/** The stored object after a write through `/status` (or a CSR's `/approval`): the request's status and metadata changes, the old spec. */
function statusWrite(rt: ResourceType, old: KubeObject, requested: KubeObject): KubeObject {
  const keeps = STATUS_KEEPS_METADATA[rt.kind] ?? [];
  const metadata = { ...old.metadata };
  for (const field of USER_METADATA) {
    const from = keeps.includes(field) ? old.metadata : requested.metadata;
    if (from?.[field] === undefined) delete metadata[field];
    else (metadata as Record<string, unknown>)[field] = from[field];
  }
  return { ...old, metadata, status: requested.status };
}

/** The reference validates a Scale before it touches the object: a negative count is the Scale's Invalid. */
function checkScale(scale: KubeObject, name: string): void {
  const replicas = (scale as { spec?: { replicas?: unknown } }).spec?.replicas;
  const problems = typeof replicas === 'number' ? validateNonnegativeField(replicas, 'spec.replicas') : [];
  if (problems.length) throw invalid({ group: 'autoscaling', plural: 'scales', kind: 'Scale' }, name, problems);
}

/** The field manager of a client that names none: its User-Agent up to the first `/`, as the reference. */
function managerFromUserAgent(userAgent: string | undefined): string {
  const name = (userAgent ?? '').split('/', 1)[0].trim();
  return name ? name.slice(0, 128) : 'unknown';
}

function applyPatchChecked(contentType: string, current: KubeObject, patch: unknown, kind: string): unknown {
  try {
    return applyPatch(contentType, current as never, patch, kind);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    const e = err as Error & { reason?: string };
    if (e.reason === 'UnsupportedMediaType') {
      throw new ApiError(415, 'UnsupportedMediaType', e.message);
    }
    // A JSON Patch that cannot be applied is the reference's 422 with empty details; the message names the path.
    if (e.reason === 'Invalid' && contentType === 'application/json-patch+json') {
      throw new ApiError(422, 'Invalid', e.message, {});
    }
    if (e.reason === 'Invalid') throw new ApiError(422, 'Invalid', e.message);
    if (e.reason === 'Conflict') throw new ApiError(409, 'Conflict', e.message);
    if (e.reason === 'RequestEntityTooLarge') throw new ApiError(413, 'RequestEntityTooLarge', e.message);
    throw badRequest(e.message);
  }
}
