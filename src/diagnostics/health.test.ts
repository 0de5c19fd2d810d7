import { describe, expect, it } from 'vitest';
import { FakeClock } from '../util/clock.ts';
import { HealthChecks } from './health.ts';
import type { Reply, RouteHandler, RouteRegistry } from './server.ts';

const q = (s = '') => ({ query: new URLSearchParams(s) });
const text = (r: Reply) => r.body as string;

function recorder() {
  const calls: string[] = [];
  return { calls, record: (type: string, name: string, ok: boolean) => calls.push(`${type}/${name}=${ok}`) };
}

describe('HealthChecks', () => {
  it('answers ok, or the verbose listing with the reference bodies', async () => {
    const h = new HealthChecks().add('leaderElection', () => ({ ok: true }));
    const plain = await h.handler('healthz')(q());
    expect(plain).toEqual({
      status: 200,
      headers: { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' },
      body: 'ok',
    });
    expect(text(await h.handler('livez')(q('verbose')))).toBe('[+]ping ok\n[+]leaderElection ok\nlivez check passed\n');
    expect(text(await h.handler('readyz')(q('verbose=1')))).toBe(
      '[+]ping ok\n[+]leaderElection ok\nreadyz check passed\n',
    );
  });

  it('fails with 500 and every line, withholding reasons, verbose or not', async () => {
    const h = new HealthChecks()
      .add('leaderElection', () => ({ ok: false, message: 'lease not renewed for 40s' }))
      .add('watchdog', async () => ({ ok: true }));
    for (const query of ['', 'verbose']) {
      const r = await h.handler('healthz')(q(query));
      expect(r.status).toBe(500);
      expect(r.headers?.['Content-Type']).toBe('text/plain; charset=utf-8');
      expect(text(r)).toBe(
        '[+]ping ok\n[-]leaderElection failed: reason withheld\n[+]watchdog ok\nhealthz check failed\n',
      );
    }
  });

  it('excludes checks by name and warns about names that match nothing', async () => {
    const h = new HealthChecks()
      .add('leaderElection', () => ({ ok: false, message: 'stale' }))
      .add('informer-sync', () => ({ ok: false }), ['readyz']);
    const r = await h.handler('readyz')(
      q('exclude=leaderElection&exclude=informer-sync&exclude=nope&exclude=abc&verbose'),
    );
    expect(r.status).toBe(200);
    expect(text(r)).toBe(
      '[+]ping ok\n[+]leaderElection excluded: ok\n[+]informer-sync excluded: ok\n' +
        'warn: some health checks cannot be excluded: no matches for "abc", "nope"\nreadyz check passed\n',
    );
    expect(text(await h.handler('livez')(q('exclude=leaderElection')))).toBe('ok');
    const failing = await h.handler('readyz')(q('exclude=leaderElection&exclude=x'));
    expect(failing.status).toBe(500);
    expect(text(failing)).toBe(
      '[+]ping ok\n[+]leaderElection excluded: ok\n[-]informer-sync failed: reason withheld\n' +
        'warn: some health checks cannot be excluded: no matches for "x"\nreadyz check failed\n',
    );
  });

  it('keeps readiness-only checks out of livez and healthz, and healthz equal to livez', () => {
    const h = new HealthChecks()
      .add('leaderElection', () => ({ ok: true }), ['livez'])
      .add('watchdog', () => ({ ok: true }), ['healthz'])
      .add('informer-sync', () => ({ ok: true }), ['readyz'])
      .add('controllers', () => ({ ok: true }), ['readyz']);
    expect(h.names('livez')).toEqual(['ping', 'leaderElection', 'watchdog']);
    expect(h.names('healthz')).toEqual(h.names('livez'));
    expect(h.names('readyz')).toEqual(['ping', 'informer-sync', 'controllers']);
  });

  it('records SLIs for the healthz and readyz runs of checks that ran', async () => {
    const { calls, record } = recorder();
    const h = new HealthChecks({ recordHealthCheck: record })
      .add('leaderElection', () => ({ ok: false }))
      .add('informer-sync', () => ({ ok: true }), ['readyz']);
    await h.handler('healthz')(q());
    await h.handler('livez')(q());
    await h.handler('readyz')(q('exclude=leaderElection'));
    await h.checkHandler('leaderElection')();
    expect(calls).toEqual([
      'healthz/ping=true',
      'healthz/leaderElection=false',
      'readyz/ping=true',
      'readyz/informer-sync=true',
    ]);
  });

  it('serves one check with its reason', async () => {
    const h = new HealthChecks().add('leaderElection', () => ({ ok: false, message: 'lease expired' }));
    expect(await h.checkHandler('ping')()).toMatchObject({ status: 200, body: 'ok' });
    expect(await h.checkHandler('leaderElection')()).toMatchObject({
      status: 500,
      body: 'internal server error: lease expired\n',
    });
  });

  it('turns thrown errors, odd results and timeouts into failures, clearing every timer', async () => {
    const clock = new FakeClock();
    const h = new HealthChecks({ clock, checkTimeoutMs: 1_000 })
      .add('throws', () => {
        throw new Error('boom');
      })
      .add('rejects', () => Promise.reject(new Error('async boom')))
      .add('odd', () => undefined as never)
      .add('hangs', () => new Promise(() => {}));
    const pending = h.run('livez');
    await new Promise((r) => setImmediate(r));
    expect(clock.pendingTimers).toBe(1);
    clock.step(1_000);
    const outcome = await pending;
    expect(outcome.ok).toBe(false);
    expect(outcome.checks).toEqual([
      { name: 'ping', ok: true, excluded: false },
      { name: 'throws', ok: false, excluded: false, message: 'boom' },
      { name: 'rejects', ok: false, excluded: false, message: 'async boom' },
      { name: 'odd', ok: false, excluded: false, message: 'check returned no result' },
      { name: 'hangs', ok: false, excluded: false, message: 'check did not answer within 1000 ms' },
    ]);
    expect(clock.pendingTimers).toBe(0);
    expect(await h.passing('livez', ['throws', 'rejects', 'odd', 'hangs'])).toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });

  it('rejects duplicate and malformed names', () => {
    const h = new HealthChecks();
    expect(() => h.add('ping', () => ({ ok: true }))).toThrow('health check "ping" is already registered');
    expect(() => h.add('a/b', () => ({ ok: true }))).toThrow('invalid health check name "a/b"');
    expect(() => h.add('x', () => ({ ok: true }), [])).toThrow('needs at least one endpoint');
    expect(new HealthChecks({ ping: false }).names('livez')).toEqual([]);
  });

  it('installs the endpoints and per-check paths, also for checks added later', () => {
    const routes = new Map<string, { handler: RouteHandler; listed: boolean }>();
    const registry: RouteRegistry = {
      route: (path, handler, options) => {
        routes.set(path, { handler, listed: options?.listed ?? true });
      },
      paths: () => [...routes.keys()],
    };
    const h = new HealthChecks().add('informer-sync', () => ({ ok: true }), ['readyz']);
    h.install(registry);
    h.add('leaderElection', () => ({ ok: true }));
    expect([...routes].filter(([, r]) => r.listed).map(([p]) => p)).toEqual(['/healthz', '/livez', '/readyz']);
    expect([...routes.keys()].sort()).toEqual([
      '/healthz',
      '/healthz/leaderElection',
      '/healthz/ping',
      '/livez',
      '/livez/leaderElection',
      '/livez/ping',
      '/readyz',
      '/readyz/informer-sync',
      '/readyz/leaderElection',
      '/readyz/ping',
    ]);
    expect(() => h.install(registry)).toThrow('already installed');
  });
});
