import { describe, expect, it } from 'vitest';
import { naming } from '../api/naming.ts';
import { versionInfo } from '../build-info.ts';
import type { RouteHandler, RouteRegistry } from './server.ts';
import {
  aggregatePaths,
  configzHandler,
  flagzHandler,
  installZPages,
  negotiate,
  statuszHandler,
  unixDate,
  uptimeText,
  versionHandler,
} from './zpages.ts';

const n = naming('orch');
const G = n.configGroup;
const STATUSZ = `application/json;v=v1beta1;g=${G};as=Statusz`;
const FLAGZ = `application/json;v=v1alpha1;g=${G};as=Flagz`;
const WARNING =
  'Warning: This endpoint is not meant to be machine parseable, has no formatting compatibility guarantees and is for debugging purposes only.';

const accept = (value?: string) => ({ headers: value === undefined ? {} : { accept: value } });

describe('negotiate', () => {
  const statusz = { group: G, version: 'v1beta1', kind: 'Statusz' };
  it.each([
    [undefined, 'text'],
    ['', 'text'],
    ['*/*', 'text'],
    ['text/plain', 'text'],
    ['text/plain; charset=utf-8', 'text'],
    ['text/*', 'text'],
    ['TEXT/PLAIN', 'text'],
    [STATUSZ, 'json'],
    [`application/json; v=v1beta1; g=${G}; as=Statusz`, 'json'],
    [`text/plain;q=0.5, ${STATUSZ}`, 'json'],
    [`${STATUSZ};q=0.2, text/plain`, 'text'],
    [`text/plain, ${STATUSZ}`, 'text'],
    [`*/*;q=0.8, ${STATUSZ}`, 'json'],
    [`application/json, */*`, 'not-acceptable'],
    ['application/json', 'not-acceptable'],
    ['application/json, text/plain', 'not-acceptable'],
    [`application/json;g=${G};as=Statusz`, 'not-acceptable'],
    ['application/json;v=v1beta1;as=Statusz', 'not-acceptable'],
    [`application/json;v=v1beta1;g=${G}`, 'not-acceptable'],
    [`application/json;v=v1beta1;g=config.k8s.io;as=Statusz`, 'not-acceptable'],
    [`application/json;v=v1alpha1;g=${G};as=Statusz`, 'not-acceptable'],
    [`application/json;v=v1beta1;g=${G};as=Flagz`, 'not-acceptable'],
    ['application/*', 'not-acceptable'],
    ['application/yaml', 'not-acceptable'],
    ['text/html', 'not-acceptable'],
    ['text/plain;q=0', 'not-acceptable'],
    [`text/html, ${STATUSZ};q=0.1`, 'json'],
  ])('Accept %j → %s', (header, expected) => {
    expect(negotiate(header, statusz)).toBe(expected);
  });
});

describe('formatting helpers', () => {
  it('formats like Go', () => {
    expect(unixDate(new Date('2026-02-08T02:09:26.500Z'))).toBe('Sun Feb  8 02:09:26 UTC 2026');
    expect(unixDate(new Date('2024-10-16T21:03:43Z'))).toBe('Wed Oct 16 21:03:43 UTC 2024');
    expect(uptimeText(16)).toBe('0 hr 00 min 16 sec');
    expect(uptimeText(3 * 3600 + 4 * 60 + 5.9)).toBe('3 hr 04 min 05 sec');
    expect(uptimeText(80_000)).toBe('22 hr 13 min 20 sec');
  });

  it('aggregates listed paths to their top-level folders without the API paths', () => {
    expect(
      aggregatePaths(['/metrics/slis', '/metrics', '/healthz', '/livez/ping', '/apis/x', '/openapi/v3', '/']),
    ).toEqual(['/healthz', '/livez', '/metrics']);
  });
});

describe('statusz', () => {
  const started = new Date('2026-03-01T10:00:00Z');
  const handler = statuszHandler({
    componentName: n.controllerManager,
    configGroup: G,
    startTime: started,
    binaryVersion: '0.1.0+build<1>',
    emulationVersion: '1.34',
    minimumCompatibilityVersion: '1.33',
    paths: () => [
      '/healthz',
      '/livez',
      '/readyz',
      '/metrics',
      '/metrics/slis',
      '/statusz',
      '/version',
      '/healthz/ping',
    ],
    runtimeVersion: 'Node.js v20.20.2',
    now: () => new Date('2026-03-01T11:02:03.900Z'),
  });

  it('is plain text by default, warning first', () => {
    const r = handler(accept());
    expect(r.status).toBe(200);
    expect(r.headers?.['Content-Type']).toBe('text/plain; charset=utf-8');
    expect(r.body).toBe(
      `\n${n.controllerManager} statusz\n${WARNING}\n\n` +
        'Started: Sun Mar  1 10:00:00 UTC 2026\n' +
        'Up: 1 hr 02 min 03 sec\n' +
        'Runtime version: Node.js v20.20.2\n' +
        'Binary version: 0.1.0+build&lt;1&gt;\n' +
        'Emulation version: 1.34\n' +
        'Paths: /healthz /livez /metrics /readyz /statusz /version\n',
    );
    expect(handler(accept('text/plain')).body).toBe(r.body);
  });

  it('answers the structured form for the full media type', () => {
    const r = handler(accept(STATUSZ));
    expect(r.status).toBe(200);
    expect(r.headers?.['Content-Type']).toBe('application/json');
    expect(JSON.parse(r.body as string)).toEqual({
      kind: 'Statusz',
      apiVersion: `${G}/v1beta1`,
      metadata: { name: n.controllerManager },
      startTime: '2026-03-01T10:00:00Z',
      uptimeSeconds: 3723,
      goVersion: 'Node.js v20.20.2',
      binaryVersion: '0.1.0+build<1>',
      emulationVersion: '1.34',
      minimumCompatibilityVersion: '1.33',
      paths: ['/healthz', '/livez', '/metrics', '/readyz', '/statusz', '/version'],
    });
  });

  it('answers 406 for application/json without all of v, g, as, and for other versions, groups and kinds', () => {
    for (const h of [
      'application/json',
      `application/json;g=${G};as=Statusz`,
      `application/json;v=v1beta1;g=wrong.io;as=Statusz`,
      `application/json;v=v1;g=${G};as=Statusz`,
      FLAGZ,
      'application/yaml',
    ]) {
      const r = handler(accept(h));
      expect(r, h).toEqual({
        status: 406,
        headers: { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' },
        body: 'not acceptable\n',
      });
    }
  });

  it('leaves out what is not known', () => {
    const bare = statuszHandler({
      componentName: 'c',
      configGroup: G,
      startTime: started,
      binaryVersion: '1.0.0',
      paths: () => [],
      now: () => started,
    });
    expect(bare(accept()).body).toBe(
      `\nc statusz\n${WARNING}\n\nStarted: Sun Mar  1 10:00:00 UTC 2026\nUp: 0 hr 00 min 00 sec\nRuntime version: Node.js ${process.version}\nBinary version: 1.0.0\n`,
    );
    expect(Object.keys(JSON.parse(bare(accept(STATUSZ)).body as string))).toEqual([
      'kind',
      'apiVersion',
      'metadata',
      'startTime',
      'uptimeSeconds',
      'goVersion',
      'binaryVersion',
    ]);
  });
});

describe('flagz', () => {
  const handler = flagzHandler({
    componentName: n.controllerManager,
    configGroup: G,
    flags: () => ({ v: '2', kubeconfig: '/etc/kc', 'leader-elect': 'true', controllers: '[*]' }),
  });

  it('is plain text by default: the warning, then one sorted flag=value line per flag', () => {
    const r = handler(accept());
    expect(r.status).toBe(200);
    expect(r.body).toBe(
      `\n${n.controllerManager} flagz\n${WARNING}\n\ncontrollers=[*]\nkubeconfig=/etc/kc\nleader-elect=true\nv=2\n`,
    );
  });

  it('answers the structured form when asked as v1alpha1, carrying v1beta1', () => {
    const r = handler(accept(FLAGZ));
    expect(r.headers?.['Content-Type']).toBe('application/json');
    expect(JSON.parse(r.body as string)).toEqual({
      kind: 'Flagz',
      apiVersion: `${G}/v1beta1`,
      metadata: { name: n.controllerManager },
      flags: { controllers: '[*]', kubeconfig: '/etc/kc', 'leader-elect': 'true', v: '2' },
    });
  });

  it('answers 406 otherwise', () => {
    for (const h of ['application/json', STATUSZ, `application/json;v=v1alpha1;g=${G}`, 'text/csv']) {
      expect(handler(accept(h)).status, h).toBe(406);
    }
  });
});

describe('configz and version', () => {
  it('serves the configuration as JSON', () => {
    const r = configzHandler(() => ({ [`component.${G}`]: { generic: { leaderElection: { leaderElect: true } } } }))();
    expect(r.headers).toEqual({ 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff' });
    expect(JSON.parse(r.body as string)).toEqual({
      [`component.${G}`]: { generic: { leaderElection: { leaderElect: true } } },
    });
  });

  it('serves version information, indented', () => {
    const info = versionInfo('0.1.0');
    const r = versionHandler(() => info)();
    expect(r.headers).toEqual({ 'Content-Type': 'application/json' });
    expect(r.body).toBe(JSON.stringify(info, null, 2));
  });
});

describe('installZPages', () => {
  function registry() {
    const routes = new Map<string, RouteHandler>();
    const r: RouteRegistry = {
      route: (path, handler) => {
        routes.set(path, handler);
      },
      paths: () => [...routes.keys()].sort(),
    };
    return { routes, r };
  }
  const base = {
    componentName: 'c',
    configGroup: G,
    startTime: new Date(),
    binaryVersion: '0.1.0',
    flags: () => ({}),
  };

  it('serves both pages by default, with statusz listing the registered paths', async () => {
    const { routes, r } = registry();
    r.route('/metrics', () => ({ status: 200, body: '' }));
    installZPages(r, { ...base, configz: () => ({}), version: () => versionInfo('0.1.0') });
    expect([...routes.keys()].sort()).toEqual(['/configz', '/flagz', '/metrics', '/statusz', '/version']);
    const statusz = await routes.get('/statusz')!({ headers: { accept: STATUSZ } } as never);
    expect(JSON.parse(statusz.body as string).paths).toEqual([
      '/configz',
      '/flagz',
      '/metrics',
      '/statusz',
      '/version',
    ]);
  });

  it('leaves a page out when its gate is off', () => {
    const { routes, r } = registry();
    installZPages(r, { ...base, features: (g) => (g === 'ComponentFlagz' ? false : undefined) });
    expect([...routes.keys()]).toEqual(['/statusz']);
    const off = registry();
    installZPages(off.r, { ...base, features: () => false });
    expect(off.routes.size).toBe(0);
  });
});
