/**
 * The status controller's reconciler over a real control plane whose discovery is made to change: a
 * policy for a resource that is not served is checked against nothing; once the resource appears (with
 * an OpenAPI schema), the next discovery refresh re-checks the policy at the same generation.
 */
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ValidatingAdmissionPolicy } from '../../src/api/types/admission.ts';
import { SharedInformerFactory } from '../../src/cache/factory.ts';
import { KubeClient, type RequestOptions, type Response } from '../../src/client/client.ts';
import type { ControllerContext } from '../../src/controller/controller.ts';
import type { EventRecorder } from '../../src/controller/events.ts';
import { FakeClock } from '../../src/util/clock.ts';
import { startTestCluster, type TestCluster } from '../../test/support/cluster.ts';
import { eventually } from '../../test/support/eventually.ts';
import { DISCOVERY_REFRESH_MS, statusControllerDefinition } from './controller.ts';

const WIDGET = { group: 'example.com', version: 'v1', kind: 'Widget' };
const widgetSchema = {
  components: {
    schemas: {
      widget: {
        type: 'object',
        'x-kubernetes-group-version-kind': [WIDGET],
        properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
      },
    },
  },
};

/** The server's answers, plus `example.com/v1` widgets once `serveWidgets` is set. */
class ChangingDiscovery extends KubeClient {
  serveWidgets = false;

  override async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<Response<T>> {
    const reply = (body: unknown) => ({ status: 200, body: body as T, warnings: [] });
    if (this.serveWidgets) {
      if (path === '/apis/example.com/v1') return reply({ resources: [{ name: 'widgets', kind: 'Widget' }] });
      if (path === '/openapi/v3/apis/example.com/v1') return reply(widgetSchema);
    }
    const r = await super.request<T>(method, path, opts);
    if (this.serveWidgets && path === '/apis') {
      const body = r.body as { groups: object[] };
      return reply({ ...body, groups: [...body.groups, { name: 'example.com', versions: [{ version: 'v1' }] }] });
    }
    if (this.serveWidgets && path === '/openapi/v3') {
      const body = r.body as { paths: object };
      return reply({
        paths: { ...body.paths, 'apis/example.com/v1': { serverRelativeURL: '/openapi/v3/apis/example.com/v1' } },
      });
    }
    return r;
  }
}

describe('re-check when served resources change', () => {
  let c: TestCluster;
  let client: ChangingDiscovery;
  let informers: SharedInformerFactory;

  beforeAll(async () => {
    c = await startTestCluster();
    client = new ChangingDiscovery(c.kc, c.cp.registry, { qps: 0 });
    informers = new SharedInformerFactory(client);
  });

  afterAll(async () => {
    await informers?.stop();
    await c?.stop();
  });

  it('checks a policy again once its resource appears', async () => {
    const clock = new FakeClock(Date.now());
    const queued: string[] = [];
    const ctx: ControllerContext = {
      client,
      informers,
      registry: c.cp.registry,
      naming: c.cp.registry.naming,
      recorder: {} as EventRecorder,
      logger: pino({ level: 'silent' }),
      clock,
      metrics: new Registry(),
      features: () => false,
      config: {},
    };
    const reconciler = statusControllerDefinition.setup(ctx, { add: (k) => queued.push(k), addAfter: () => {} });
    informers.start();
    await informers.waitForSync(10_000);

    const policies = client.kind<ValidatingAdmissionPolicy>('ValidatingAdmissionPolicy');
    await policies.create({
      metadata: { name: 'widgets' },
      spec: {
        matchConstraints: {
          resourceRules: [
            { apiGroups: ['example.com'], apiVersions: ['v1'], operations: ['*'], resources: ['widgets'] },
          ],
        },
        validations: [{ expression: 'object.spec.sise > 1' }],
      },
    });
    await eventually(() => queued.includes('widgets'));
    const signal = new AbortController().signal;
    await eventually(async () => {
      await reconciler.reconcile('widgets', signal);
      return (await policies.get(undefined, 'widgets')).status?.typeChecking;
    });
    expect((await policies.get(undefined, 'widgets')).status?.typeChecking).toEqual({});

    queued.length = 0;
    client.serveWidgets = true;
    clock.step(DISCOVERY_REFRESH_MS);
    await eventually(() => queued.includes('widgets'), 10_000, 'the policy re-queued after discovery changed');
    const checked = await eventually(async () => {
      await reconciler.reconcile('widgets', signal);
      return (await policies.get(undefined, 'widgets')).status?.typeChecking?.expressionWarnings;
    });
    expect(checked).toEqual([
      {
        fieldRef: 'spec.validations[0].expression',
        warning: expect.stringMatching(/^example\.com\/v1, Kind=Widget: ERROR: <input>:1:12: undefined field 'sise'/),
      },
    ]);
    expect((await policies.get(undefined, 'widgets')).status?.observedGeneration).toBe(1);
    reconciler.stop?.();
  });
});
