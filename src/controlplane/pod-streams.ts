/**
 * The pod subresources a node agent serves: `log`, `exec`, `attach`, `portforward`. The reference API
 * server passes them on to the pod's kubelet; here the only node agents are the simulated nodes, whose
 * containers write a log (their start, readiness and termination) and run nothing one could exec into.
 * So `pods/log` answers with that log (`container`, `tailLines`, `sinceSeconds`, `sinceTime`, `timestamps`,
 * `limitBytes`, `follow` as the reference honours them), and the streams answer a 400 that names the node.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isPodResource, POD_STREAM_SUBRESOURCES } from '../api/registry.ts';
import type { Pod } from '../api/types/core.ts';
import { badRequest, type FieldProblem, invalid } from './errors.ts';
import { queryBool } from './options.ts';
import type { ResourceRequest } from './request-info.ts';

export interface PodLogLine {
  /** Epoch ms. */
  at: number;
  text: string;
}

/** What node agents know of their containers' logs. */
export interface PodLogSource {
  /** Whether the named node is one of these agents. */
  runs(node: string): boolean;
  /** A container's log so far (undefined when the agent has none for it), and whether the container has ended. */
  read(uid: string, container: string): { lines: readonly PodLogLine[]; ended: boolean } | undefined;
  /** Calls `line` for each new line and `end` once when the container ends or its pod goes; returns the unsubscribe. */
  follow(uid: string, container: string, line: (l: PodLogLine) => void, end: () => void): () => void;
}

export interface LogOptions {
  container?: string;
  follow: boolean;
  timestamps: boolean;
  previous: boolean;
  tailLines?: number;
  sinceSeconds?: number;
  sinceTimeMs?: number;
  limitBytes?: number;
}

/** How long `follow=true` streams at most before the server ends it (the client may ask again). */
export const MAX_FOLLOW_MS = 10 * 60_000;

/** The query's log options, or the error naming the field and its rule (pure). */
export function parseLogOptions(podName: string, query: URLSearchParams): LogOptions {
  const problems: FieldProblem[] = [];
  const bool = (field: string) => queryBool(query.get(field)) ?? false;
  const int = (field: string, min: number, rule: string) => {
    const v = query.get(field);
    if (v === null || v === '') return undefined;
    if (!/^-?\d+$/.test(v)) throw badRequest(`${field}: invalid value "${v}": must be an integer`);
    const n = Number(v);
    if (n < min) problems.push({ type: 'FieldValueInvalid', field, message: `${field}: Invalid value: ${n}: ${rule}` });
    return n;
  };
  const opts: LogOptions = {
    container: query.get('container') || undefined,
    follow: bool('follow'),
    timestamps: bool('timestamps'),
    previous: bool('previous'),
    tailLines: int('tailLines', 0, 'must be greater than or equal to 0'),
    sinceSeconds: int('sinceSeconds', 1, 'must be greater than 0'),
    limitBytes: int('limitBytes', 1, 'must be greater than 0'),
  };
  const sinceTime = query.get('sinceTime');
  if (sinceTime) {
    const ms = Date.parse(sinceTime);
    if (Number.isNaN(ms)) throw badRequest(`sinceTime: invalid value "${sinceTime}": must be an RFC 3339 time`);
    opts.sinceTimeMs = ms;
    if (opts.sinceSeconds !== undefined)
      problems.push({
        type: 'FieldValueForbidden',
        field: 'sinceSeconds',
        message: 'sinceSeconds: Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified',
      });
  }
  if (problems.length) throw invalid({ group: '', plural: 'pods', kind: 'PodLogOptions' }, podName, problems);
  return opts;
}

/** The stored lines the options ask for, before any follow (pure). */
export function selectLines(lines: readonly PodLogLine[], opts: LogOptions, nowMs: number): PodLogLine[] {
  const since = opts.sinceTimeMs ?? (opts.sinceSeconds === undefined ? undefined : nowMs - opts.sinceSeconds * 1000);
  const recent = since === undefined ? [...lines] : lines.filter((l) => l.at >= since);
  return opts.tailLines === undefined ? recent : recent.slice(Math.max(0, recent.length - opts.tailLines));
}

/** A line as the kubelet sends it: with `timestamps`, prefixed by its RFC 3339 time with nanoseconds. */
export function formatLine(l: PodLogLine, timestamps: boolean): string {
  if (!timestamps) return `${l.text}\n`;
  const iso = new Date(l.at).toISOString(); // …sss Z: the reference writes nine fraction digits
  return `${iso.slice(0, -1)}000000Z ${l.text}\n`;
}

/** The container a request means: the named one, or the pod's only one (pure; the reference's messages). */
export function containerOf(pod: Pod, requested: string | undefined): string {
  const names = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c) => c.name);
  const podName = pod.metadata.name;
  if (requested !== undefined) {
    if (!names.includes(requested)) throw badRequest(`container ${requested} is not valid for pod ${podName}`);
    return requested;
  }
  const main = (pod.spec?.containers ?? []).map((c) => c.name);
  if (main.length === 1) return main[0]!;
  throw badRequest(`a container name must be specified for pod ${podName}, choose one of: [${main.join(' ')}]`);
}

/** The node a stream would go to, or the 400 that says why there is none to reach. */
function nodeOf(pod: Pod, what: string, source: PodLogSource | undefined): string {
  const node = pod.spec?.nodeName;
  if (!node) throw badRequest(`pod ${pod.metadata.name} does not have a host assigned`);
  if (!source?.runs(node))
    throw badRequest(
      `pod ${pod.metadata.name} runs on node ${node}, which this control plane cannot reach: ${what} is not available`,
    );
  return node;
}

/** What serving a pod stream reads from the API server. */
export interface PodStreamHost {
  get(req: ResourceRequest, query: URLSearchParams): unknown;
  readonly podLogs?: PodLogSource;
  readonly options: { now: () => Date };
}

/** Serves `pods/<sub>` for a pod request (the subresources in `POD_STREAM_SUBRESOURCES`). */
export async function servePodStream(
  api: PodStreamHost,
  req: IncomingMessage,
  res: ServerResponse,
  info: ResourceRequest,
  query: URLSearchParams,
): Promise<void> {
  const sub = info.subresource ?? '';
  const pod = api.get({ ...info, subresource: undefined }, new URLSearchParams()) as Pod;
  const source = api.podLogs;
  if (sub !== 'log') {
    const node = nodeOf(pod, sub, source);
    throw badRequest(`pod ${pod.metadata.name} runs on simulated node ${node}: ${sub} is not available`);
  }
  const opts = parseLogOptions(pod.metadata.name ?? '', query);
  const container = containerOf(pod, opts.container);
  // As the reference: a pod no node runs yet has no log to stream, which is no error but an empty answer.
  if (!pod.spec?.nodeName) return void res.writeHead(204).end();
  nodeOf(pod, 'its log', source);
  if (opts.previous)
    throw badRequest(`previous terminated container "${container}" in pod "${pod.metadata.name}" not found`);
  const log = source!.read(pod.metadata.uid ?? '', container);
  if (!log) {
    const state = pod.status?.containerStatuses?.find((s) => s.name === container)?.state?.waiting?.reason;
    throw badRequest(
      `container "${container}" in pod "${pod.metadata.name}" is waiting to start: ${state ?? 'ContainerCreating'}`,
    );
  }
  let budget = opts.limitBytes ?? Number.POSITIVE_INFINITY;
  /** Writes a line within `limitBytes`; false once the limit is reached. */
  const write = (l: PodLogLine): boolean => {
    if (budget <= 0) return false;
    const bytes = Buffer.from(formatLine(l, opts.timestamps));
    const part = bytes.length > budget ? bytes.subarray(0, budget) : bytes;
    budget -= part.length;
    res.write(part);
    return budget > 0;
  };
  res.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' });
  for (const l of selectLines(log.lines, opts, api.options.now().getTime())) if (!write(l)) return void res.end();
  if (!opts.follow || log.ended) return void res.end();
  await new Promise<void>((resolve) => {
    let unsubscribe = () => {};
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      unsubscribe();
      req.off('close', finish);
      res.end();
      resolve();
    };
    const timer = setTimeout(finish, MAX_FOLLOW_MS);
    timer.unref();
    req.on('close', finish);
    unsubscribe = source!.follow(pod.metadata.uid ?? '', container, (l) => write(l) || finish(), finish);
  });
}

/** Whether a request is for one of the pod subresources served here. */
export const isPodStream = (info: ResourceRequest) =>
  isPodResource(info.rt) && (POD_STREAM_SUBRESOURCES as readonly string[]).includes(info.subresource ?? '');
