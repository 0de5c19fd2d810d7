/**
 * The embedded control plane's aggregation layer, as the reference's kube-aggregator: a local
 * APIService for every group version this server serves (auto-registration, with the reference's
 * priorities, restored when changed or deleted), the discovery order those APIServices give, and
 * a proxy to the backend of every APIService that names a Service — served while its `Available`
 * condition is True, answered 503 with the condition's message otherwise.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { request } from 'node:https';
import type { Logger } from 'pino';
import {
  availableCondition,
  type BackendTls,
  backendTls,
  discoveryPath,
  isAvailable,
  isLocal,
  orderAPIServices,
  resolveBackend,
  sliceServiceName,
  type Target,
  transportErrorText,
} from '../api/apiservice.ts';
import type { KubeObject } from '../api/meta.ts';
import { group, type Naming } from '../api/naming.ts';
import type { ResourceRegistry, ResourceType } from '../api/registry.ts';
import type { Service } from '../api/types/core.ts';
import type { EndpointSlice } from '../api/types/discovery.ts';
import type { APIService } from '../api/types/misc.ts';
import { jsonEqual } from '../util/equal.ts';
import type { UserInfo } from './admission.ts';
import type { Authorizer } from './authz/rbac.ts';
import { forbiddenError, requestAttributes } from './authz/rbac.ts';
import { fromResourceList, type ServedElsewhere } from './discovery.ts';
import { ApiError, badRequest } from './errors.ts';
import { parseRequest } from './request-info.ts';
import type { Storage } from './storage.ts';

/** A served group with its versions, preferred first. */
export interface DiscoveryGroup {
  name: string;
  versions: string[];
}

const DEFAULT_GROUP_PRIORITY = 15_000;
/** How long a remote group version's resource list is reused by aggregated discovery. */
const DISCOVERY_REFRESH_MS = 10_000;
const DISCOVERY_TIMEOUT_MS = 5_000;
const DEFAULT_VERSION_PRIORITY = 9;

/**
 * The reference's priorities of the built-in groups (group prefix → groupPriorityMinimum, with the
 * versionPriority of each version). Groups it does not list get {@link DEFAULT_GROUP_PRIORITY}.
 */
function builtInPriorities(n: Naming): Map<string, { group: number; versions: Record<string, number> }> {
  const v1 = { v1: 15 };
  const entries: [string, number, Record<string, number>][] = [
    ['', 18_000, { v1: 1 }],
    [group(n, 'apiregistration'), 18_000, v1],
    ['apps', 17_800, v1],
    [group(n, 'events'), 17_750, v1],
    [group(n, 'authentication'), 17_700, v1],
    [group(n, 'authorization'), 17_600, v1],
    ['autoscaling', 17_500, v1],
    ['batch', 17_400, v1],
    [group(n, 'certificates'), 17_300, v1],
    [group(n, 'networking'), 17_200, v1],
    ['policy', 17_100, v1],
    [group(n, 'rbac.authorization'), 17_000, v1],
    [group(n, 'storage'), 16_800, v1],
    [group(n, 'admissionregistration'), 16_700, v1],
    [group(n, 'scheduling'), 16_600, v1],
    [group(n, 'coordination'), 16_500, { v1: 15, v1beta1: 13 }],
    [group(n, 'node'), 16_300, v1],
    [group(n, 'discovery'), 16_200, v1],
  ];
  return new Map(entries.map(([g, priority, versions]) => [g, { group: priority, versions }]));
}

/** The local APIServices for every group version in the registry. */
export function localAPIServices(registry: ResourceRegistry): APIService[] {
  const n = registry.naming;
  const priorities = builtInPriorities(n);
  const apiVersion = `${group(n, 'apiregistration')}/v1`;
  const seen = new Set<string>();
  const out: APIService[] = [];
  for (const rt of registry.all) {
    const name = `${rt.version}.${rt.group}`;
    if (seen.has(name)) continue;
    seen.add(name);
    const p = priorities.get(rt.group);
    out.push({
      apiVersion,
      kind: 'APIService',
      metadata: { name, labels: { [n.labels.autoManaged]: 'true' } },
      spec: {
        group: rt.group,
        version: rt.version,
        groupPriorityMinimum: p?.group ?? DEFAULT_GROUP_PRIORITY,
        versionPriority: p?.versions[rt.version] ?? DEFAULT_VERSION_PRIORITY,
      },
    });
  }
  return out;
}

export interface AggregatorOptions {
  storage: Storage;
  registry: ResourceRegistry;
  /** Decides proxied requests (the attributes are parsed from the path, as for any request). */
  authorizer: Pick<Authorizer, 'authorize'>;
  /** Stores a new object with its server-set metadata (the control plane's `seed`). */
  seed: (obj: KubeObject) => Promise<unknown>;
  log: Logger;
}

export class Aggregator {
  private readonly apiServices: ResourceType;
  private readonly services: ResourceType;
  private readonly slices: ResourceType;
  private readonly desired = new Map<string, APIService>();
  private stopCommits: () => void = () => {};
  private restoring = false;
  private readonly remoteDiscovery = new Map<string, { at: number; resources: object[] }>();

  constructor(private readonly opts: AggregatorOptions) {
    const rt = (kind: string) => {
      const found = opts.registry.byKind(kind);
      if (!found) throw new Error(`the registry has no ${kind}`);
      return found;
    };
    this.apiServices = rt('APIService');
    this.services = rt('Service');
    this.slices = rt('EndpointSlice');
    for (const s of localAPIServices(opts.registry)) this.desired.set(s.metadata.name ?? '', s);
  }

  /** Registers the local APIServices and keeps them as registered. */
  async start(): Promise<void> {
    await this.restore();
    this.stopCommits = this.opts.storage.onCommit(({ rt, event }) => {
      if (rt !== this.apiServices || !this.desired.has(event.object.metadata.name ?? '')) return;
      // Outside the commit: storage is still notifying.
      if (!this.restoring) {
        this.restoring = true;
        setImmediate(() => {
          this.restoring = false;
          this.restore().catch((err) => this.opts.log.error({ err }, 'cannot restore the local APIServices'));
        });
      }
    });
  }

  stop(): void {
    this.stopCommits();
  }

  /** Another control plane on the same etcd may restore them too: a conflict means it did. */
  private async restore(): Promise<void> {
    const storage = this.opts.storage;
    for (const [name, want] of this.desired) {
      const have = storage.get(this.apiServices, name) as APIService | undefined;
      if (!have) await this.opts.seed(want);
      else if (!jsonEqual(have.spec, want.spec) || !jsonEqual(have.metadata.labels, want.metadata.labels)) {
        const update = { ...have, spec: want.spec, metadata: { ...have.metadata, labels: want.metadata.labels } };
        await storage.backend.update(this.apiServices, update, have.metadata.resourceVersion).catch((err) => {
          if (!(err instanceof ApiError && err.reason === 'Conflict')) throw err;
        });
      }
    }
  }

  private all(): APIService[] {
    return this.opts.storage.list(this.apiServices) as APIService[];
  }

  /** The named groups (the core group left out) in discovery order, with their versions. */
  discoveryGroups(): DiscoveryGroup[] {
    return orderAPIServices(this.all())
      .filter((g) => g.group !== '')
      .map((g) => ({ name: g.group, versions: g.versions.map((s) => s.spec?.version ?? '') }));
  }

  /** The remote APIService serving this path, if any: `/apis/<group>/<version>[/...]`. */
  remoteFor(path: string): APIService | undefined {
    // Most requests are for /api/...: none of them is split.
    if (!path.includes('apis/')) return undefined;
    const [apis, g, v] = path.split('/').filter(Boolean);
    if (apis !== 'apis' || !g || !v) return undefined;
    const s = this.opts.storage.get(this.apiServices, `${v}.${g}`) as APIService | undefined;
    return s && !isLocal(s) ? s : undefined;
  }

  /**
   * Asks every available remote group version for its resources (at most every
   * {@link DISCOVERY_REFRESH_MS}), for the aggregated discovery document; a backend that cannot
   * answer leaves its last answer, or none.
   */
  async refreshRemoteDiscovery(): Promise<void> {
    const now = performance.now();
    const due = this.all().filter((s) => {
      const cached = this.remoteDiscovery.get(s.metadata.name ?? '');
      return !isLocal(s) && isAvailable(s) && (!cached || now - cached.at > DISCOVERY_REFRESH_MS);
    });
    await Promise.all(
      due.map(async (s) => {
        const name = s.metadata.name ?? '';
        try {
          const list = JSON.parse(await this.fetch(s, discoveryPath(s)));
          this.remoteDiscovery.set(name, {
            at: now,
            resources: fromResourceList(list, s.spec?.group ?? '', s.spec?.version ?? ''),
          });
        } catch {
          this.remoteDiscovery.delete(name);
        }
      }),
    );
  }

  /** What the aggregated discovery document says of a remote group version (`undefined` for local ones). */
  readonly servedElsewhere: ServedElsewhere = (g, v) => {
    const s = this.opts.storage.get(this.apiServices, `${v}.${g}`) as APIService | undefined;
    if (!s || isLocal(s)) return undefined;
    const cached = this.remoteDiscovery.get(s.metadata.name ?? '');
    return isAvailable(s) && cached ? { resources: cached.resources, stale: false } : { resources: [], stale: true };
  };

  /** The backend a remote APIService reaches now, or the 503 saying why there is none. */
  private backend(apiService: APIService): { target: Target; tls: BackendTls } {
    if (!isAvailable(apiService)) {
      throw unavailable(availableCondition(apiService)?.message || 'service unavailable');
    }
    const ref = apiService.spec?.service ?? {};
    const n = this.opts.registry.naming;
    const service = this.opts.storage.get(this.services, `${ref.namespace ?? ''}/${ref.name ?? ''}`) as
      | Service
      | undefined;
    const slices = (this.opts.storage.list(this.slices, ref.namespace ?? '') as EndpointSlice[]).filter(
      (s) => sliceServiceName(s, n) === ref.name,
    );
    const resolved = resolveBackend(apiService, service, slices);
    if ('failure' in resolved) throw unavailable(resolved.failure.message);
    const target = resolved.targets[Math.floor(Math.random() * resolved.targets.length)];
    return { target, tls: backendTls(apiService) };
  }

  /** GETs a path from a remote APIService's backend; rejects on a non-2xx answer or after the timeout. */
  private fetch(apiService: APIService, path: string): Promise<string> {
    const { target, tls } = this.backend(apiService);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: target.host,
          port: target.port,
          path,
          ca: tls.ca,
          rejectUnauthorized: tls.rejectUnauthorized,
          servername: tls.servername,
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c) => (body += c));
          res.on('end', () =>
            (res.statusCode ?? 0) < 300 ? resolve(body) : reject(new Error(`status ${res.statusCode}`)),
          );
          res.on('error', reject);
        },
      );
      req.setTimeout(DISCOVERY_TIMEOUT_MS, () => req.destroy(new Error('timed out')));
      req.on('error', reject);
      req.end();
    });
  }

  /** Authorizes and forwards a request, its path as sent, to the backend of a remote APIService. */
  async proxy(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    query: URLSearchParams,
    apiService: APIService,
    user: UserInfo,
  ) {
    // Authorized as sent, read as the reference reads any request path, before anything else is said about it.
    const method = req.method ?? 'GET';
    const attrs = requestAttributes(parseRequest(this.opts.registry, method, path, query), method);
    const decision = this.opts.authorizer.authorize(user, attrs);
    if (!decision.allowed) throw forbiddenError(user, attrs, decision.reason);
    const url = new URL(`${path}${query.size ? `?${query}` : ''}`, 'https://backend');
    // Dot segments would be resolved here and send the request somewhere other than where it was authorized.
    if (url.pathname !== path) throw badRequest(`the path ${JSON.stringify(path)} is not in its normal form`);
    const { target, tls } = this.backend(apiService);
    const headers = { ...req.headers, host: `${tls.servername}:${target.port}` };
    delete headers.authorization;
    await new Promise<void>((resolve, reject) => {
      const upstream = request(
        {
          host: target.host,
          port: target.port,
          method: req.method,
          path: url.pathname + url.search,
          headers: { ...headers, 'x-remote-user': user.username, 'x-remote-group': user.groups },
          ca: tls.ca,
          rejectUnauthorized: tls.rejectUnauthorized,
          servername: tls.servername,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          answer.on('end', resolve);
          answer.on('error', reject);
        },
      );
      upstream.on('error', (err) =>
        reject(unavailable(`error trying to reach service: ${transportErrorText(err, tls)}`)),
      );
      res.on('close', () => upstream.destroy());
      req.pipe(upstream);
    });
  }
}

function unavailable(message: string): ApiError {
  return new ApiError(503, 'ServiceUnavailable', message);
}
