import { pino } from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../util/clock.ts';
import {
  type ControllerContext,
  type ControllerDefinition,
  ControllerLoop,
  controllersIn,
  done,
  type Result,
  requeueAfter,
  selectControllers,
  TerminalError,
  workersByName,
} from './controller.ts';

function def(name: string, enabledByDefault: boolean, aliases: string[] = []): ControllerDefinition {
  return {
    name,
    aliases,
    enabledByDefault,
    workers: 1,
    permissions: () => [],
    setup: () => ({ reconcile: async () => done }),
  };
}

describe('selectControllers (--controllers)', () => {
  const all = [
    def('alpha', true, ['alpha-controller']),
    def('beta', true),
    def('gamma', false, ['gamma-controller', 'g']),
  ];
  const names = (spec: string[]) => selectControllers(all, spec).map((d) => d.name);

  it.each([
    [['*'], ['alpha', 'beta']],
    [[], []],
    [['alpha'], ['alpha']],
    [['gamma'], ['gamma']],
    [
      ['*', 'gamma'],
      ['alpha', 'beta', 'gamma'],
    ],
    [['*', '-alpha'], ['beta']],
    [['*,-beta,gamma'], ['alpha', 'gamma']],
    [
      ['*', '-beta', 'gamma'],
      ['alpha', 'gamma'],
    ],
    [['-alpha'], []],
    [['alpha-controller'], ['alpha']],
    [['g'], ['gamma']],
    [
      ['*', '-gamma-controller'],
      ['alpha', 'beta'],
    ],
    [['*', '-alpha-controller'], ['beta']],
    [[' alpha , beta '], ['alpha', 'beta']],
    [
      ['beta', 'alpha'],
      ['alpha', 'beta'],
    ],
    [
      ['*', '*'],
      ['alpha', 'beta'],
    ],
    [['alpha,,'], ['alpha']],
  ])('%j → %j', (spec, expected) => {
    expect(names(spec)).toEqual(expected);
  });

  it.each([[['nope']], [['-nope']], [['*', 'nope']], [['alpha,bogus']]])(
    '%j is an error naming the controller',
    (spec) => {
      const bad = spec
        .join(',')
        .split(',')
        .find((s) => !['*', 'alpha'].includes(s))!
        .replace(/^-/, '');
      expect(() => names(spec)).toThrow(
        `--controllers: "${bad}" is not a known controller (known: alpha, beta, gamma)`,
      );
    },
  );

  it.each([
    [['*'], false, ['alpha', 'beta']],
    [['*'], true, ['alpha']],
    [['*', 'beta'], true, ['alpha', 'beta']],
    [['beta'], true, ['beta']],
  ])(
    '%j with apiServerControllers=%s → %j (beta is served by the API server)',
    (spec, apiServerControllers, expected) => {
      const withServed = all.map((d) => (d.name === 'beta' ? { ...d, servedByApiServer: true } : d));
      expect(selectControllers(withServed, spec, { apiServerControllers }).map((d) => d.name)).toEqual(expected);
    },
  );
});

/** Lets the loop's promise chains run (FakeClock timers fire only in step()). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

type Step = Result | Error | ((signal: AbortSignal) => Promise<Result>);

/** A loop whose reconcile follows a script per key; the last step repeats. */
function loop(script: Record<string, Step[]>, workers = 2) {
  const clock = new FakeClock();
  const calls: { key: string; at: number }[] = [];
  const logs: { msg: string; key?: string }[] = [];
  let running = 0;
  let maxRunningPerKey = 0;
  const active = new Map<string, number>();
  const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line)) });
  const ctx = { logger, clock, metrics: new Registry() } as unknown as ControllerContext;
  const definition: ControllerDefinition = {
    name: 'scripted',
    aliases: [],
    enabledByDefault: true,
    permissions: () => [],
    workers,
    setup: () => ({
      async reconcile(key, signal) {
        const steps = script[key] ?? [done];
        const n = calls.filter((c) => c.key === key).length;
        calls.push({ key, at: clock.now() });
        const step = steps[Math.min(n, steps.length - 1)];
        running++;
        active.set(key, (active.get(key) ?? 0) + 1);
        maxRunningPerKey = Math.max(maxRunningPerKey, active.get(key)!);
        try {
          if (step instanceof Error) throw step;
          if (typeof step === 'function') return await step(signal);
          return step;
        } finally {
          running--;
          active.set(key, active.get(key)! - 1);
        }
      },
    }),
  };
  const l = new ControllerLoop(definition, ctx);
  l.setup();
  l.start();
  return {
    loop: l,
    clock,
    logs,
    runs: (key: string) => calls.filter((c) => c.key === key).map((c) => c.at),
    stats: () => ({ running, maxRunningPerKey }),
  };
}

describe('controllersIn: the names a flavor shows', () => {
  const publisher: ControllerDefinition = {
    ...def('orch-publisher', true, ['kube-publisher', 'pub']),
    flavorNames: { orch: 'orch-publisher', kubernetes: 'kube-publisher' },
  };
  const all = [def('alpha', true, ['alpha-controller']), publisher];

  it.each([
    [
      'orch',
      [
        ['alpha', ['alpha-controller']],
        ['orch-publisher', ['kube-publisher', 'pub']],
      ],
    ],
    [
      'kubernetes',
      [
        ['alpha', ['alpha-controller']],
        ['kube-publisher', ['orch-publisher', 'pub']],
      ],
    ],
  ] as const)('%s', (flavor, expected) => {
    expect(controllersIn(flavor, all).map((d) => [d.name, d.aliases])).toEqual(expected);
  });

  it('either name selects it, and worker counts keyed by the default name carry over', () => {
    const kube = controllersIn('kubernetes', all);
    expect(selectControllers(kube, ['orch-publisher']).map((d) => d.name)).toEqual(['kube-publisher']);
    expect(selectControllers(kube, ['kube-publisher']).map((d) => d.name)).toEqual(['kube-publisher']);
    expect(workersByName(kube, { alpha: 2, 'orch-publisher': 3 })).toEqual({ alpha: 2, 'kube-publisher': 3 });
    expect(workersByName(kube, { alpha: 2 })).toEqual({ alpha: 2 });
  });
});

describe('ControllerLoop', () => {
  it('forgets a key after success and does not run it again', async () => {
    const t = loop({ a: [done] });
    t.loop.queue.add('a');
    await settle();
    t.clock.step(60_000);
    await settle();
    expect(t.runs('a')).toEqual([0]);
    expect(t.loop.queue.numRequeues('a')).toBe(0);
    await t.loop.stop(1_000);
  });

  it('retries a thrown error with the per-key exponential backoff, then forgets it on success', async () => {
    const t = loop({ a: [new Error('boom'), new Error('boom'), new Error('boom'), done] });
    t.loop.queue.add('a');
    await settle();
    expect(t.loop.queue.numRequeues('a')).toBe(1);
    t.clock.step(4);
    await settle();
    expect(t.runs('a')).toEqual([0]); // the first retry waits 5 ms
    for (let i = 0; i < 40; i++) {
      t.clock.step(1);
      await settle();
    }
    // 5, 10 and 20 ms after each failure.
    expect(t.runs('a')).toEqual([0, 5, 15, 35]);
    expect(t.loop.queue.numRequeues('a')).toBe(0);
    const failures = t.logs.filter((l) => l.msg === 'reconcile failed, will retry');
    expect(failures.map((l) => (l as { requeues?: number }).requeues)).toEqual([0, 1, 2]);
    await t.loop.stop(1_000);
  });

  it('forgets a key on TerminalError: no retry, and earlier failures no longer count', async () => {
    const t = loop({ a: [new Error('transient'), new TerminalError('bad spec')] });
    t.loop.queue.add('a');
    await settle();
    expect(t.loop.queue.numRequeues('a')).toBe(1);
    t.clock.step(5);
    await settle();
    expect(t.runs('a')).toEqual([0, 5]);
    expect(t.loop.queue.numRequeues('a')).toBe(0);
    t.clock.step(3_600_000);
    await settle();
    expect(t.runs('a')).toEqual([0, 5]);
    expect(t.logs.some((l) => l.msg === 'reconcile failed permanently' && l.key === 'a')).toBe(true);
    await t.loop.stop(1_000);
  });

  it('requeueAfter runs the key again after the delay and resets its backoff', async () => {
    const t = loop({ a: [new Error('once'), requeueAfter(1_000), requeueAfter(1_000), done] });
    t.loop.queue.add('a');
    await settle();
    t.clock.step(5);
    await settle();
    expect(t.loop.queue.numRequeues('a')).toBe(0);
    t.clock.step(999);
    await settle();
    expect(t.runs('a')).toEqual([0, 5]);
    t.clock.step(1);
    await settle();
    t.clock.step(1_000);
    await settle();
    t.clock.step(10_000);
    await settle();
    expect(t.runs('a')).toEqual([0, 5, 1_005, 2_005]);
    await t.loop.stop(1_000);
  });

  it('never runs one key on two workers at once, and coalesces adds made while it runs', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const t = loop(
      {
        a: [
          async () => {
            await held;
            return done;
          },
          done,
        ],
        b: [done],
      },
      3,
    );
    t.loop.queue.add('a');
    await settle();
    for (let i = 0; i < 10; i++) t.loop.queue.add('a');
    t.loop.queue.add('b');
    await settle();
    expect(t.runs('b')).toEqual([0]); // another key is not held up
    expect(t.runs('a')).toEqual([0]);
    release();
    await settle();
    expect(t.runs('a')).toEqual([0, 0]); // ten adds while running: one more run
    expect(t.stats().maxRunningPerKey).toBe(1);
    await t.loop.stop(1_000);
  });

  it('stop lets a running reconcile finish within the timeout, then aborts it', async () => {
    let signal: AbortSignal | undefined;
    const t = loop({
      slow: [
        (s) => {
          signal = s;
          return new Promise<Result>((resolve) => s.addEventListener('abort', () => resolve(done)));
        },
      ],
    });
    t.loop.queue.add('slow');
    await settle();
    let stopped = false;
    const stopping = t.loop.stop(500).then(() => {
      stopped = true;
    });
    await settle();
    expect(stopped).toBe(false);
    expect(signal?.aborted).toBe(false);
    t.clock.step(500);
    await stopping;
    expect(signal?.aborted).toBe(true);
    expect(t.stats().running).toBe(0);
    // A stopped loop takes no more keys.
    t.loop.queue.add('other');
    await settle();
    expect(t.runs('other')).toEqual([]);
  });
});
