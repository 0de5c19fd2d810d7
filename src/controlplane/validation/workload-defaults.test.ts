import { describe, expect, it } from 'vitest';
import {
  defaultDeployment,
  defaultPod,
  defaultPodSpec,
  defaultPullPolicy,
  defaultReplicated,
  defaultSecret,
  defaultService,
} from './workload-defaults.ts';

describe('workload defaults', () => {
  it.each([
    ['nginx', 'Always'],
    ['nginx:latest', 'Always'],
    ['registry.example:5000/app', 'Always'],
    ['registry.example:5000/app:1.2', 'IfNotPresent'],
    ['nginx@sha256:abc', 'IfNotPresent'],
    [undefined, 'IfNotPresent'],
  ])('pulls %s with %s', (image, policy) => {
    expect(defaultPullPolicy(image)).toBe(policy);
  });

  it("fills a pod spec's and its containers' defaults, keeping given values", () => {
    const spec: Record<string, any> = {
      restartPolicy: 'Never',
      containers: [{ name: 'c', image: 'app:1', ports: [{ containerPort: 80 }] }],
      initContainers: [{ name: 'i', image: 'init', imagePullPolicy: 'Never' }],
    };
    defaultPodSpec(spec);
    expect(spec).toEqual({
      restartPolicy: 'Never',
      dnsPolicy: 'ClusterFirst',
      terminationGracePeriodSeconds: 30,
      schedulerName: 'default-scheduler',
      securityContext: {},
      containers: [
        {
          name: 'c',
          image: 'app:1',
          ports: [{ containerPort: 80, protocol: 'TCP' }],
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
        },
      ],
      initContainers: [
        {
          name: 'i',
          image: 'init',
          imagePullPolicy: 'Never',
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
        },
      ],
    });
  });

  it('enables service links on pods only', () => {
    const pod = { spec: { containers: [] } as Record<string, unknown> };
    defaultPod(pod);
    expect(pod.spec.enableServiceLinks).toBe(true);
    const rs = { spec: { template: { spec: { containers: [] } as Record<string, unknown> } } };
    defaultReplicated(rs);
    expect(rs.spec.template.spec.enableServiceLinks).toBeUndefined();
    expect((rs.spec as Record<string, unknown>).replicas).toBe(1);
  });

  it("defaults a Deployment's strategy, history and deadline", () => {
    const d = { spec: { replicas: 0, template: { spec: {} } } as Record<string, unknown> };
    defaultDeployment(d);
    expect(d.spec).toMatchObject({
      replicas: 0,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
    });
    const recreate = { spec: { strategy: { type: 'Recreate' } } as Record<string, any> };
    defaultDeployment(recreate);
    expect(recreate.spec.strategy).toEqual({ type: 'Recreate' });
  });

  it("defaults a Service's type, affinity, traffic policy and ports", () => {
    const svc = { spec: { ports: [{ port: 80 }, { port: 81, targetPort: 'http' }] } as Record<string, unknown> };
    defaultService(svc);
    expect(svc.spec).toEqual({
      type: 'ClusterIP',
      sessionAffinity: 'None',
      internalTrafficPolicy: 'Cluster',
      ports: [
        { port: 80, protocol: 'TCP', targetPort: 80 },
        { port: 81, protocol: 'TCP', targetPort: 'http' },
      ],
    });
  });

  it("merges a Secret's stringData into data, and types it Opaque", () => {
    const secret: Record<string, unknown> = { data: { a: 'YQ==' }, stringData: { b: 'b', a: 'A' } };
    defaultSecret(secret);
    expect(secret).toEqual({ type: 'Opaque', data: { a: 'QQ==', b: 'Yg==' } });
  });

  it('leaves what is not an object alone', () => {
    for (const bad of [null, 1, 'x', [], { spec: 'x' }]) {
      expect(() => {
        defaultPod(bad);
        defaultDeployment(bad);
        defaultReplicated(bad);
        defaultService(bad);
        defaultSecret(bad);
      }).not.toThrow();
    }
  });
});
