/** StatefulSets created, scaled, rolled (partition, maxUnavailable, OnDelete), broken and reverted, with claims. */
import type { Scenario } from '../scenario.ts';
import {
  createPod,
  createSet,
  deletePod,
  deleteSet,
  IMAGE,
  patchSet,
  podsAre,
  setImage,
  settledSet,
} from './workloads.ts';

const IMAGE_2 = 'registry.example/web:2';

export const statefulSetScenarios: Scenario[] = [
  {
    name: 'sts-scale',
    async run(ctx) {
      await createSet(ctx, 'web', { replicas: 3 });
      await settledSet(ctx, 'web', 3);
      await ctx.checkpoint('created');
      await patchSet(ctx, 'web', { spec: { replicas: 5 } });
      await settledSet(ctx, 'web', 5);
      await ctx.checkpoint('scaled-up');
      await patchSet(ctx, 'web', { spec: { replicas: 1 } });
      await podsAre(ctx, ['web-0']);
      await settledSet(ctx, 'web', 1);
    },
  },
  {
    name: 'sts-partition',
    quick: true,
    async run(ctx) {
      const updateStrategy = { type: 'RollingUpdate', rollingUpdate: { partition: 2 } };
      await createSet(ctx, 'web', { replicas: 3, parallel: true, updateStrategy });
      await settledSet(ctx, 'web', 3);
      await setImage(ctx, 'web', IMAGE_2);
      await ctx.waitFor('web-2 updated', async () => {
        const { json } = await ctx.admin('GET', `/apis/apps/v1/namespaces/${ctx.ns}/statefulsets/web`);
        return json?.status?.updatedReplicas === 1 && json.status.readyReplicas === 3 ? true : undefined;
      });
      await ctx.checkpoint('partitioned');
      await patchSet(ctx, 'web', { spec: { updateStrategy: { rollingUpdate: { partition: 0 } } } });
      await settledSet(ctx, 'web', 3);
    },
  },
  {
    name: 'sts-max-unavailable',
    async run(ctx) {
      const updateStrategy = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } };
      await createSet(ctx, 'web', { replicas: 4, parallel: true, updateStrategy, minReadySeconds: 2 });
      await settledSet(ctx, 'web', 4);
      await setImage(ctx, 'web', IMAGE_2);
      await settledSet(ctx, 'web', 4);
    },
  },
  {
    name: 'sts-ondelete',
    async run(ctx) {
      await createSet(ctx, 'web', { replicas: 3, updateStrategy: { type: 'OnDelete' } });
      await settledSet(ctx, 'web', 3);
      await setImage(ctx, 'web', IMAGE_2);
      await ctx.checkpoint('template-changed');
      await deletePod(ctx, 'web-1');
      await ctx.waitFor('web-1 recreated at the new revision', async () => {
        const { json } = await ctx.admin('GET', `/apis/apps/v1/namespaces/${ctx.ns}/statefulsets/web`);
        return json?.status?.updatedReplicas === 1 && json.status.readyReplicas === 3 ? true : undefined;
      });
    },
  },
  {
    name: 'sts-broken',
    async run(ctx) {
      await createSet(ctx, 'web', { replicas: 3 });
      await settledSet(ctx, 'web', 3);
      await setImage(ctx, 'web', 'registry.example/web:broken');
      await ctx.waitFor('web-2 replaced by a broken pod', async () => {
        const { json } = await ctx.admin('GET', `/api/v1/namespaces/${ctx.ns}/pods/web-2`);
        return json?.spec?.containers?.[0]?.image.endsWith(':broken') && json.status?.phase === 'Running'
          ? true
          : undefined;
      });
      await ctx.checkpoint('broken');
      await setImage(ctx, 'web', 'registry.example/web:1');
      await settledSet(ctx, 'web', 3, 30_000);
    },
  },
  {
    name: 'sts-broken-recover',
    async run(ctx) {
      await createSet(ctx, 'web', { replicas: 2 });
      await settledSet(ctx, 'web', 2);
      // Our extension's opt-in: a never-Ready pod of a reverted revision is replaced; KCM ignores the annotation.
      await patchSet(ctx, 'web', {
        metadata: { annotations: { 'statefulset.kubernetes.io/recover-broken-rollout': 'true' } },
      });
      await setImage(ctx, 'web', 'registry.example/web:broken');
      await ctx.waitFor('web-1 replaced by a broken pod', async () => {
        const { json } = await ctx.admin('GET', `/api/v1/namespaces/${ctx.ns}/pods/web-1`);
        return json?.spec?.containers?.[0]?.image.endsWith(':broken') && json.status?.phase === 'Running'
          ? true
          : undefined;
      });
      await setImage(ctx, 'web', IMAGE);
      await settledSet(ctx, 'web', 2, 30_000);
    },
  },
  {
    name: 'sts-adoption',
    async run(ctx) {
      // Pods made by hand with the set's labels: the set adopts those named as its own (and deletes one above its
      // replicas, replaces one without its revision), and leaves a pod of another name alone.
      for (const name of ['web-1', 'web-7', 'stray']) await createPod(ctx, name, { app: 'web' }, IMAGE);
      await createSet(ctx, 'web', { replicas: 2, parallel: true });
      await podsAre(ctx, ['stray', 'web-0', 'web-1']);
      await settledSet(ctx, 'web', 2);
    },
  },
  {
    name: 'sts-claims',
    async run(ctx) {
      await createSet(ctx, 'scaled', {
        replicas: 2,
        parallel: true,
        retention: { whenScaled: 'Delete', whenDeleted: 'Retain' },
      });
      await createSet(ctx, 'deleted', {
        replicas: 2,
        parallel: true,
        retention: { whenScaled: 'Retain', whenDeleted: 'Delete' },
      });
      await settledSet(ctx, 'scaled', 2);
      await settledSet(ctx, 'deleted', 2);
      await ctx.checkpoint('created');
      await patchSet(ctx, 'scaled', { spec: { replicas: 1 } });
      await patchSet(ctx, 'deleted', { spec: { replicas: 1 } });
      await podsAre(ctx, ['scaled-0', 'deleted-0']);
      await ctx.checkpoint('scaled-down');
      await deleteSet(ctx, 'scaled');
      await deleteSet(ctx, 'deleted');
      await podsAre(ctx, []);
    },
  },
];
