/**
 * Pods watched as our informers watch them, asking for Kubernetes protobuf first as kube-controller-manager does, on
 * both substrates. kube-apiserver answers protobuf, which the client reads as the objects its JSON gives, less the
 * managedFields the informers drop; the embedded plane answers watches in JSON, read as before.
 */
import { expect, it } from 'vitest';
import type { KubeObject, WatchEvent } from '../../src/api/meta.ts';
import type { Pod } from '../../src/api/types/core.ts';
import { eventually } from '../support/eventually.ts';
import { describeOnSubstrate } from '../support/substrate.ts';

const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/** A pod with a field of every kind the tables read: embedded structs, IntOrString, quantities, a nested ObjectMeta. */
function podWithEverything(namespace: string, name: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace, name, labels: { app: 'protobuf' }, annotations: { note: 'ünïcode ✓' } },
    spec: {
      terminationGracePeriodSeconds: 0,
      nodeSelector: { disk: 'ssd' },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'x', effect: 'NoExecute', tolerationSeconds: 30 }],
      affinity: {
        nodeAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 5, preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] } },
          ],
        },
      },
      containers: [
        {
          name: 'app',
          image: 'registry.example/app:1',
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
          resources: { requests: { cpu: '250m', memory: '64Mi' }, limits: { memory: '128Mi' } },
          readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 5 },
          livenessProbe: { tcpSocket: { port: 8080 }, failureThreshold: 6 },
          env: [{ name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
          volumeMounts: [
            { name: 'scratch', mountPath: '/scratch' },
            { name: 'claim', mountPath: '/data' },
          ],
        },
      ],
      volumes: [
        { name: 'scratch', emptyDir: { sizeLimit: '1Gi' } },
        {
          name: 'claim',
          ephemeral: {
            volumeClaimTemplate: {
              metadata: { labels: { volume: 'claim' } },
              spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
            },
          },
        },
      ],
    },
  } as unknown as Pod;
}

describeOnSubstrate(
  'protobuf-watch',
  (s) => {
    const pods = () => s().admin.kind<Pod>('Pod');

    /** The pods of a watch-list of `namespace`, by name, once its initial events have ended. */
    const initialPods = async (namespace: string, withoutManagedFields: boolean) => {
      const seen = new Map<string, Pod>();
      const done = new AbortController();
      const onEvent = (e: WatchEvent<Pod>) => {
        if (e.type === 'ADDED') seen.set(e.object.metadata.name!, e.object);
        if (e.type === 'BOOKMARK' && e.object.metadata.annotations?.[INITIAL_EVENTS_END] === 'true') done.abort();
      };
      const opts = {
        sendInitialEvents: true,
        resourceVersionMatch: 'NotOlderThan' as const,
        allowWatchBookmarks: true,
        timeoutSeconds: 30,
        withoutManagedFields,
      };
      await pods().watch(namespace, opts, onEvent, done.signal);
      expect(done.signal.aborted, 'the initial events ended').toBe(true);
      return seen;
    };

    it('reads a watch-list of pods as the objects the JSON watch gives, less their managedFields', async () => {
      const namespace = await s().namespace('pods');
      for (const name of ['a', 'b']) await pods().create(podWithEverything(namespace, name));
      // The nodes write the pods' status meanwhile: compared once both watches saw the same versions.
      const versions = (seen: Map<string, Pod>) =>
        JSON.stringify([...seen.values()].map((p) => p.metadata.resourceVersion));
      let viaJson = new Map<string, Pod>();
      let asked = new Map<string, Pod>();
      await eventually(async () => {
        viaJson = await initialPods(namespace, false);
        asked = await initialPods(namespace, true);
        return versions(viaJson) === versions(asked);
      }, 30_000);
      expect([...asked.keys()].sort()).toEqual(['a', 'b']);
      for (const [name, pod] of asked) {
        const json = viaJson.get(name) as KubeObject;
        // kube-apiserver answers protobuf, read without managedFields; the embedded plane answers JSON, which has them.
        expect(json.metadata.managedFields?.length).toBeGreaterThan(0);
        expect('managedFields' in pod.metadata).toBe(s().kind === 'embedded');
        for (const p of [pod, json]) p.metadata.managedFields = undefined;
        expect(JSON.stringify(pod)).toBe(JSON.stringify(json));
      }
    });

    it('reads an error answer as the Status it is', async () => {
      const opts = { fieldSelector: 'spec.bogus=x', withoutManagedFields: true };
      await expect(pods().watch(undefined, opts, () => {}, AbortSignal.timeout(30_000))).rejects.toMatchObject({
        code: 400,
        message: expect.stringContaining('field label not supported: spec.bogus'),
      });
    });
  },
  { daemon: false },
);
