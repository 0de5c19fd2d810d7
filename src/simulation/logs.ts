/**
 * The simulated containers' logs: per pod and container the last `LOG_RING_LINES` lines (older ones are
 * dropped), whether the container has ended, and who follows it. A pod's logs go when the pod goes.
 */
import type { PodLogLine, PodLogSource } from '../controlplane/pod-streams.ts';

/** Lines kept per container. */
export const LOG_RING_LINES = 1000;
/** Pods with a log at most: a line written just after its pod went would otherwise stay; the oldest goes first. */
const MAX_PODS = 10_000;
/** Followers per container at most: more are ended at once (each is an open HTTP response). */
const MAX_FOLLOWERS = 100;

interface ContainerLog {
  lines: PodLogLine[];
  ended: boolean;
  followers: Set<{ line: (l: PodLogLine) => void; end: () => void }>;
}

export class PodLogs implements PodLogSource {
  /** By pod UID, then container name. */
  private readonly logs = new Map<string, Map<string, ContainerLog>>();

  constructor(
    private readonly nodeNames: readonly string[],
    private readonly ringLines = LOG_RING_LINES,
  ) {}

  runs(node: string): boolean {
    return this.nodeNames.includes(node);
  }

  /** Adds a line to the container's log (a container that had ended has been started again). */
  append(uid: string, container: string, text: string): void {
    const log = this.containerLog(uid, container);
    const line = { at: Date.now(), text };
    log.ended = false;
    log.lines.push(line);
    if (log.lines.length > this.ringLines) log.lines.splice(0, log.lines.length - this.ringLines);
    for (const f of log.followers) f.line(line);
  }

  /** The container has exited: its followers' streams end. */
  end(uid: string, container: string): void {
    const log = this.logs.get(uid)?.get(container);
    if (!log) return;
    log.ended = true;
    this.endFollowers(log);
  }

  /** The pod is gone: its logs too. */
  drop(uid: string): void {
    for (const log of this.logs.get(uid)?.values() ?? []) this.endFollowers(log);
    this.logs.delete(uid);
  }

  read(uid: string, container: string) {
    const log = this.logs.get(uid)?.get(container);
    return log && { lines: log.lines, ended: log.ended };
  }

  follow(uid: string, container: string, line: (l: PodLogLine) => void, end: () => void): () => void {
    const log = this.logs.get(uid)?.get(container);
    if (!log || log.ended || log.followers.size >= MAX_FOLLOWERS) {
      end();
      return () => {};
    }
    const follower = { line, end };
    log.followers.add(follower);
    return () => log.followers.delete(follower);
  }

  private containerLog(uid: string, container: string): ContainerLog {
    if (!this.logs.has(uid) && this.logs.size >= MAX_PODS) this.drop(this.logs.keys().next().value ?? '');
    const pod = this.logs.get(uid) ?? new Map<string, ContainerLog>();
    this.logs.set(uid, pod);
    const log = pod.get(container) ?? { lines: [], ended: false, followers: new Set() };
    pod.set(container, log);
    return log;
  }

  private endFollowers(log: ContainerLog): void {
    const followers = [...log.followers];
    log.followers.clear();
    for (const f of followers) f.end();
  }
}
