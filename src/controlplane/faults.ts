/**
 * Fault injection for tests, reachable only in-process (never through flags or HTTP): failing
 * requests with 429/500, added latency, dropped watches, compacted history, corrupt objects, and
 * a server restart.
 */
import type { ResourceType } from '../api/registry.ts';

export interface FailureRule {
  code: 429 | 500 | 503;
  /** How many matching requests fail; Infinity until cleared. */
  count: number;
  retryAfterSeconds?: number;
  /** Which requests fail (default: all). */
  match?: (method: string, path: string) => boolean;
}

export interface FaultHooks {
  dropWatches(rt?: ResourceType): number;
  compact(rt?: ResourceType): Promise<void>;
  corrupt(rt: ResourceType, namespace: string | undefined, name: string): Promise<void>;
  restart(downMs: number): Promise<void>;
}

export class Faults {
  private rules: FailureRule[] = [];
  latencyMs = 0;
  /** Requests seen, by method and path, for tests that count traffic. */
  readonly requests: { method: string; path: string; at: number }[] = [];
  recordRequests = false;

  constructor(private readonly hooks: FaultHooks) {}

  failRequests(rule: FailureRule): void {
    this.rules.push({ ...rule });
  }

  clear(): void {
    this.rules = [];
    this.latencyMs = 0;
  }

  /** The failure a request should get, consuming one use of the first matching rule. */
  takeFailure(method: string, path: string): FailureRule | undefined {
    if (this.recordRequests) this.requests.push({ method, path, at: Date.now() });
    const rule = this.rules.find((r) => r.count > 0 && (!r.match || r.match(method, path)));
    if (rule) rule.count -= 1;
    return rule;
  }

  dropWatches(rt?: ResourceType): number {
    return this.hooks.dropWatches(rt);
  }

  compact(rt?: ResourceType): Promise<void> {
    return this.hooks.compact(rt);
  }

  corrupt(rt: ResourceType, namespace: string | undefined, name: string): Promise<void> {
    return this.hooks.corrupt(rt, namespace, name);
  }

  /** Stops serving (connections refused, open ones cut) for `downMs`, then serves again on the same port with the same storage. */
  restart(downMs: number): Promise<void> {
    return this.hooks.restart(downMs);
  }
}
