import { describe, expect, it } from 'vitest';
import type { KubeList, WatchEvent } from '../api/meta.ts';
import type { LeaseCandidate, LeaseCandidateSpec } from '../api/types/coordination.ts';
import { StatusError } from '../client/errors.ts';
import type { ListOptions, WatchOptions } from '../client/resource.ts';
import { FakeClock } from '../util/clock.ts';
import { type LeaseCandidateApi, LeaseCandidateClient } from './candidate.ts';

const NS = 'orch-system';
const NAME = 'host-a_1111';
const EPOCH = Date.UTC(2026, 0, 2, 3, 4, 5);
const at = (ms: number) => new Date(EPOCH + ms).toISOString().replace(/Z$/, '000Z');

/** LeaseCandidates in memory, with watches that see every later change. */
class FakeCandidates implements LeaseCandidateApi {
  readonly apiVersion = 'coordination.orch.io/v1beta1';
  stored: LeaseCandidate | undefined;
  private rv = 0;
  writes: string[] = [];
  failWrites = 0;
  watchers = new Set<{ onEvent: (e: WatchEvent<LeaseCandidate>) => void; end: () => void }>();
  watchesStarted = 0;
  lastFieldSelector: string | undefined;

  get spec(): LeaseCandidateSpec {
    return this.stored!.spec!;
  }

  /** Changes the object as the server or another client would, and tells the watchers. */
  modify(spec: Partial<LeaseCandidateSpec>): void {
    const next = { ...this.stored!, spec: { ...this.spec, ...spec } };
    this.store(next, 'MODIFIED');
  }

  /** Ends every open watch, as a server timeout would. */
  endWatches(): void {
    for (const w of this.watchers) w.end();
  }

  async get(namespace: string, name: string): Promise<LeaseCandidate> {
    if (!this.stored || namespace !== NS || name !== NAME) throw new StatusError(404, 'NotFound', 'not found');
    return structuredClone(this.stored);
  }

  async list(_namespace: string, opts: ListOptions): Promise<KubeList<LeaseCandidate>> {
    this.lastFieldSelector = opts.fieldSelector;
    const items = this.stored ? [structuredClone(this.stored)] : [];
    return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: String(this.rv) }, items };
  }

  watch(
    _namespace: string,
    _opts: WatchOptions,
    onEvent: (e: WatchEvent<LeaseCandidate>) => void,
    signal: AbortSignal,
  ): Promise<void> {
    this.watchesStarted++;
    return new Promise((resolve) => {
      const w = {
        onEvent,
        end: () => {
          this.watchers.delete(w);
          resolve();
        },
      };
      this.watchers.add(w);
      signal.addEventListener('abort', w.end, { once: true });
    });
  }

  async create(obj: LeaseCandidate): Promise<LeaseCandidate> {
    this.writes.push('create');
    if (this.failWrites > 0 && this.failWrites--) throw new StatusError(500, 'InternalError', 'boom');
    if (this.stored) throw new StatusError(409, 'AlreadyExists', 'exists');
    return this.store(obj, 'ADDED');
  }

  async replace(obj: LeaseCandidate): Promise<LeaseCandidate> {
    this.writes.push('replace');
    if (this.failWrites > 0 && this.failWrites--) throw new StatusError(500, 'InternalError', 'boom');
    if (obj.metadata.resourceVersion !== this.stored?.metadata.resourceVersion) {
      throw new StatusError(409, 'Conflict', 'the object has been modified');
    }
    return this.store(obj, 'MODIFIED');
  }

  private store(obj: LeaseCandidate, type: 'ADDED' | 'MODIFIED'): LeaseCandidate {
    this.stored = { ...structuredClone(obj), metadata: { ...obj.metadata, resourceVersion: String(++this.rv) } };
    for (const w of this.watchers) w.onEvent({ type, object: structuredClone(this.stored) });
    return structuredClone(this.stored);
  }
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Fires what is due now (an ensure scheduled "at once") and lets it finish. */
async function tick(clock: FakeClock): Promise<void> {
  await flush();
  clock.step(0);
  await flush();
}

async function advance(clock: FakeClock, ms: number, stepMs = 10): Promise<void> {
  for (let t = 0; t < ms; t += stepMs) {
    await flush();
    clock.step(Math.min(stepMs, ms - t));
  }
  await flush();
}

function setup() {
  const clock = new FakeClock();
  const api = new FakeCandidates();
  const candidate = new LeaseCandidateClient({
    candidates: api,
    namespace: NS,
    name: NAME,
    leaseName: 'orch-controller-manager',
    binaryVersion: '1.33.0',
    emulationVersion: '1.33.0',
    strategy: 'OldestEmulationVersion',
    clock,
    wallClock: () => new Date(EPOCH + clock.now()),
  });
  return { clock, api, candidate };
}

describe('LeaseCandidateClient', () => {
  it('checks its inputs', () => {
    const base = {
      candidates: new FakeCandidates(),
      namespace: NS,
      name: NAME,
      leaseName: 'l',
      binaryVersion: '1.33.0',
    };
    expect(() => new LeaseCandidateClient({ ...base, strategy: '' })).toThrow('strategy may not be empty');
    expect(() => new LeaseCandidateClient({ ...base, strategy: 'OldestEmulationVersion' })).toThrow(
      'emulationVersion may not be empty when strategy is OldestEmulationVersion',
    );
  });

  it('creates the candidate after the first list and renews it every 5 minutes', async () => {
    const { clock, api, candidate } = setup();
    candidate.start();
    await advance(clock, 10);
    expect(candidate.hasSynced()).toBe(true);
    expect(api.lastFieldSelector).toBe(`metadata.name=${NAME}`);
    expect(api.stored?.metadata).toMatchObject({ namespace: NS, name: NAME });
    expect(api.spec).toEqual({
      leaseName: 'orch-controller-manager',
      binaryVersion: '1.33.0',
      emulationVersion: '1.33.0',
      strategy: 'OldestEmulationVersion',
      renewTime: at(0),
    });
    await advance(clock, 5 * 60_000 - 20, 1_000);
    expect(api.writes).toEqual(['create']);
    await advance(clock, 40);
    expect(api.writes).toEqual(['create', 'replace']);
    expect(Date.parse(api.spec.renewTime!) - EPOCH).toBeGreaterThanOrEqual(5 * 60_000);
    expect(api.spec.binaryVersion).toBe('1.33.0');
    await candidate.stop();
  });

  it('answers a ping at once, and each ping only once', async () => {
    const { clock, api, candidate } = setup();
    candidate.start();
    await advance(clock, 1_000);
    api.modify({ pingTime: at(900) }); // later than renewTime at(0)
    await tick(clock);
    expect(api.writes).toEqual(['create', 'replace']);
    expect(api.spec).toMatchObject({ pingTime: at(900), renewTime: at(1_000), binaryVersion: '1.33.0' });
    // A server clock ahead of ours: the ping stays "later" than our renew, yet it is answered once.
    api.modify({ pingTime: at(60_000) });
    await advance(clock, 1_000);
    api.modify({ leaseName: 'orch-controller-manager' });
    await advance(clock, 1_000);
    expect(api.writes).toEqual(['create', 'replace', 'replace']);
    await candidate.stop();
  });

  it('compares ping and renew times to the microsecond', async () => {
    const { clock, api, candidate } = setup();
    candidate.start();
    await advance(clock, 10);
    api.modify({ renewTime: '2026-01-02T03:04:06.123000Z', pingTime: '2026-01-02T03:04:06.122999Z' });
    await tick(clock);
    expect(api.writes).toEqual(['create']);
    api.modify({ renewTime: '2026-01-02T03:04:06.123000Z', pingTime: '2026-01-02T03:04:06.123001Z' });
    await tick(clock);
    expect(api.writes).toEqual(['create', 'replace']);
    await candidate.stop();
  });

  it('retries failed writes with a growing backoff', async () => {
    const { clock, api, candidate } = setup();
    api.failWrites = 3;
    candidate.start();
    await advance(clock, 100, 1);
    // 5 ms, 10 ms, 20 ms after each failure.
    expect(api.writes).toEqual(['create', 'create', 'create', 'create']);
    expect(api.stored).toBeDefined();
    await candidate.stop();
  });

  it('watches again after the watch ends, with backoff for short watches', async () => {
    const { clock, api, candidate } = setup();
    candidate.start();
    await advance(clock, 10);
    expect(api.watchesStarted).toBe(1);
    api.endWatches();
    await advance(clock, 790);
    expect(api.watchesStarted).toBe(1);
    await advance(clock, 20);
    expect(api.watchesStarted).toBe(2);
    api.modify({ pingTime: at(5_000) });
    await tick(clock);
    expect(api.spec.renewTime).toBe(at(clock.now()));
    await candidate.stop();
  });

  it('stop ends the watch and every timer', async () => {
    const { clock, api, candidate } = setup();
    candidate.start();
    await advance(clock, 100);
    await candidate.stop();
    expect(api.watchers.size).toBe(0);
    expect(clock.pendingTimers).toBe(0);
    await advance(clock, 10 * 60_000, 10_000);
    expect(api.writes).toEqual(['create']);
  });
});
