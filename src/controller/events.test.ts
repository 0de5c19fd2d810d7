import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import type { KubeObject } from '../api/meta.ts';
import type { ResourceClient } from '../client/resource.ts';
import { FakeClock } from '../util/clock.ts';
import { ApiEventRecorder } from './events.ts';

interface Patch {
  namespace: string | undefined;
  name: string;
  patch: unknown;
  type: string;
}

/** An events client that records calls; `failures` makes the next N calls reject. */
function fakeEvents() {
  const created: KubeObject[] = [];
  /** The server's answers to the creates, held weakly: what the recorder keeps of them stays reachable. */
  const answers: WeakRef<KubeObject>[] = [];
  const patches: Patch[] = [];
  /** `hold`, when set, keeps each create in flight until it resolves; `inFlight` peaks in `maxInFlight`. */
  const state = { failures: 0, calls: 0, inFlight: 0, maxInFlight: 0, hold: undefined as Promise<void> | undefined };
  const maybeFail = () => {
    state.calls++;
    if (state.failures > 0) {
      state.failures--;
      throw new Error('injected write failure');
    }
  };
  const client = {
    apiVersion: 'events.orch.io/v1',
    async create(obj: KubeObject) {
      maybeFail();
      state.maxInFlight = Math.max(state.maxInFlight, ++state.inFlight);
      await state.hold;
      state.inFlight--;
      created.push(obj);
      const answer = { ...obj, metadata: { ...obj.metadata, uid: `uid-${created.length}`, resourceVersion: '1' } };
      answers.push(new WeakRef(answer));
      return answer;
    },
    async patch(namespace: string | undefined, name: string, patch: unknown, type: string) {
      maybeFail();
      patches.push({ namespace, name, patch, type });
      return {};
    },
  };
  return { client: client as unknown as ResourceClient, created, answers, patches, state };
}

const pod = (name: string, uid = `uid-${name}`): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace: 'apps', name, uid, resourceVersion: '7' },
});

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** Lets the recorder's background writes (promise chains) run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

function setup() {
  const clock = new FakeClock(1_000_000);
  const events = fakeEvents();
  const warnings: string[] = [];
  const logger = pino(
    { level: 'warn' },
    {
      write: (line: string) => {
        warnings.push(JSON.parse(line).msg);
      },
    },
  );
  const recorder = new ApiEventRecorder(events.client, 'sample-controller', 'host_1234', clock, logger);
  return { clock, recorder, warnings, ...events };
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

describe('ApiEventRecorder', () => {
  it('creates an events-group Event with a valid name and the regarding object', async () => {
    const { recorder, created } = setup();
    recorder.event(pod('web-0'), 'Warning', 'FailedSync', 'Reconcile', 'could not sync');
    await settle();
    expect(created).toHaveLength(1);
    const e = created[0];
    expect(e).toMatchObject({
      apiVersion: 'events.orch.io/v1',
      kind: 'Event',
      metadata: { namespace: 'apps' },
      reportingController: 'sample-controller',
      reportingInstance: 'host_1234',
      type: 'Warning',
      reason: 'FailedSync',
      action: 'Reconcile',
      note: 'could not sync',
      regarding: {
        kind: 'Pod',
        apiVersion: 'v1',
        namespace: 'apps',
        name: 'web-0',
        uid: 'uid-web-0',
        resourceVersion: '7',
      },
    });
    expect(e.metadata.generateName).toBeUndefined();
    expect(e.metadata.name).toMatch(/^web-0\.[0-9a-f]+$/);
    expect(e.metadata.name).toMatch(DNS_SUBDOMAIN);
    expect(typeof e.eventTime).toBe('string');
  });

  it('gives distinct names to events recorded within the same millisecond', async () => {
    const { recorder, created } = setup();
    for (let i = 0; i < 5; i++) recorder.event(pod('web-0'), 'Normal', 'Step', 'Reconcile', `step ${i}`);
    await settle();
    expect(new Set(created.map((e) => e.metadata.name)).size).toBe(5);
  });

  it('folds identical events within the window into one Event whose series is patched every 30 s', async () => {
    const { clock, recorder, created, patches } = setup();
    const same = () => recorder.event(pod('web-0'), 'Normal', 'Synced', 'Reconcile', 'synced');
    same();
    await settle();
    for (let i = 0; i < 4; i++) {
      clock.step(1_000);
      same();
    }
    await settle();
    expect(created).toHaveLength(1);
    expect(patches).toEqual([]); // nothing until the flush period has passed
    clock.step(29_999 - 3_000);
    await settle();
    expect(patches).toEqual([]);
    clock.step(1);
    await settle();
    expect(patches).toHaveLength(1);
    expect(patches[0]).toMatchObject({
      namespace: 'apps',
      name: created[0].metadata.name,
      type: 'merge',
      patch: { series: { count: 5 } },
    });
    expect(typeof (patches[0].patch as { series: { lastObservedTime: string } }).series.lastObservedTime).toBe(
      'string',
    );

    // Two more: the next patch carries the new count; with no new occurrence nothing more is written.
    same();
    same();
    clock.step(30_000);
    await settle();
    expect(patches.map((p) => (p.patch as { series: { count: number } }).series.count)).toEqual([5, 7]);
    clock.step(60_000);
    await settle();
    expect(patches).toHaveLength(2);
    expect(created).toHaveLength(1);
  });

  it('keeps events that differ in type, reason, action, note or object apart', async () => {
    const { recorder, created } = setup();
    recorder.event(pod('web-0'), 'Normal', 'Synced', 'Reconcile', 'a');
    recorder.event(pod('web-0'), 'Warning', 'Synced', 'Reconcile', 'a');
    recorder.event(pod('web-0'), 'Normal', 'Other', 'Reconcile', 'a');
    recorder.event(pod('web-0'), 'Normal', 'Synced', 'Update', 'a');
    recorder.event(pod('web-0'), 'Normal', 'Synced', 'Reconcile', 'b');
    recorder.event(pod('web-1'), 'Normal', 'Synced', 'Reconcile', 'a');
    await settle();
    expect(created).toHaveLength(6);
  });

  it('starts a new Event once the previous occurrence is older than six minutes', async () => {
    const { clock, recorder, created } = setup();
    const same = () => recorder.event(pod('web-0'), 'Normal', 'Synced', 'Reconcile', 'synced');
    same();
    clock.step(6 * 60_000 - 1);
    same(); // still within the window: folded
    await settle();
    expect(created).toHaveLength(1);
    clock.step(6 * 60_000);
    same();
    await settle();
    expect(created).toHaveLength(2);
  });

  it('gives events of a named budget a bucket of their own, so they cannot crowd out the others', async () => {
    const { recorder, created } = setup();
    for (let i = 0; i < 30; i++) recorder.event(pod('web'), 'Normal', 'Waiting', 'Sync', `wait ${i}`, 'rollout');
    recorder.event(pod('web'), 'Normal', 'SuccessfulDelete', 'Delete', 'Delete Pod web-4');
    await settle();
    expect(created.map((e) => e.note)).toHaveLength(26);
    expect(created.at(-1)?.note).toBe('Delete Pod web-4');
  });

  it('caps a burst at 25 events per object, refilling one every 5 minutes', async () => {
    const { clock, recorder, created } = setup();
    for (let i = 0; i < 40; i++) recorder.event(pod('noisy'), 'Warning', 'Flap', 'Reconcile', `flap ${i}`);
    await settle();
    expect(created).toHaveLength(25);
    expect(created.at(-1)?.note).toBe('flap 24');
    // Another object has its own bucket.
    recorder.event(pod('quiet'), 'Normal', 'Synced', 'Reconcile', 'fine');
    await settle();
    expect(created).toHaveLength(26);
    // Four minutes refill less than one token: still dropped.
    clock.step(4 * 60_000);
    recorder.event(pod('noisy'), 'Warning', 'Flap', 'Reconcile', 'still dropped');
    await settle();
    expect(created).toHaveLength(26);
    clock.step(60_000);
    recorder.event(pod('noisy'), 'Warning', 'Flap', 'Reconcile', 'one token back');
    recorder.event(pod('noisy'), 'Warning', 'Flap', 'Reconcile', 'and no second one');
    await settle();
    expect(created.map((e) => e.note).slice(26)).toEqual(['one token back']);
  });

  it('forgets the buckets of objects whose burst has refilled, so they do not grow with every object ever seen', () => {
    const { clock, recorder } = setup();
    const buckets = () => (Reflect.get(recorder, 'buckets') as Map<string, unknown>).size;
    for (let i = 0; i < 5_000; i++) recorder.event(pod(`p-${i}`), 'Normal', 'Created', 'Create', 'created');
    expect(buckets()).toBe(5_000);
    // One token back every 5 minutes: the one each took is back after 5, and each of those buckets is full again.
    clock.step(4 * 60_000);
    recorder.event(pod('late'), 'Normal', 'Created', 'Create', 'created');
    expect(buckets()).toBe(5_001);
    clock.step(60_000);
    recorder.event(pod('later'), 'Normal', 'Created', 'Create', 'created');
    expect(buckets()).toBe(2);
  });

  it('retries a failed write, then drops it with a warning; never throws into the caller', async () => {
    const { recorder, created, state, warnings } = setup();
    state.failures = 2;
    recorder.event(pod('web-0'), 'Normal', 'Synced', 'Reconcile', 'third time lucky');
    await settle();
    expect(created).toHaveLength(1);
    state.failures = 3;
    state.calls = 0;
    recorder.event(pod('web-1'), 'Normal', 'Synced', 'Reconcile', 'never written');
    await settle();
    expect(state.calls).toBe(3);
    expect(created).toHaveLength(1);
    expect(warnings).toEqual(['dropping event after repeated write failures']);
  });

  it('writes one event at a time, in order, and drops new ones past 1,000 waiting', async () => {
    const { recorder, created, state, warnings } = setup();
    let release!: () => void;
    state.hold = new Promise((resolve) => (release = resolve));
    for (let i = 0; i < 1_003; i++) recorder.event(pod(`web-${i}`), 'Normal', 'Created', 'Create', `pod ${i}`);
    await settle();
    expect(state.inFlight).toBe(1);
    expect(warnings).toEqual(['event queue full: dropping events']);
    release();
    await vi.waitFor(() => expect(created).toHaveLength(1_001), { timeout: 5_000 });
    expect(state.maxInFlight).toBe(1);
    expect(created.map((e) => e.note)).toEqual(Array.from({ length: 1_001 }, (_, i) => `pod ${i}`));
  });

  it('keeps no written Event, only its name, which the series patches still target', async () => {
    const { clock, recorder, created, answers, patches } = setup();
    const same = () => recorder.event(pod('web-0'), 'Normal', 'Synced', 'Reconcile', 'synced');
    same();
    await settle();
    collectGarbage();
    expect(answers).toHaveLength(1);
    expect(answers[0].deref()).toBeUndefined();
    same();
    clock.step(30_000);
    await settle();
    expect(patches).toMatchObject([{ namespace: 'apps', name: created[0].metadata.name }]);
  });

  it('writes nothing after stop, not even a pending series update', async () => {
    const { clock, recorder, created, patches } = setup();
    const same = () => recorder.event(pod('web-0'), 'Normal', 'Synced', 'Reconcile', 'synced');
    same();
    await settle();
    same();
    recorder.stop();
    same();
    recorder.event(pod('web-1'), 'Normal', 'Synced', 'Reconcile', 'late');
    clock.step(60_000);
    await settle();
    expect(created).toHaveLength(1);
    expect(patches).toEqual([]);
    expect(clock.pendingTimers).toBe(0);
  });
});
