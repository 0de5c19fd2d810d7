import { describe, expect, it } from 'vitest';
import type { Obj } from './raw.ts';
import {
  defaultStatefulSet,
  validateStatefulSetCreate,
  validateStatefulSetStatusUpdate,
  validateStatefulSetUpdate,
} from './stateful-set.ts';
import { ctx, ctxWithGates, fieldError, type Loose, variant } from './test-helpers.ts';

const valid = () => ({
  metadata: { name: 'web', namespace: 'default', resourceVersion: '1' },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'web' } } as Obj,
    serviceName: 'web',
    podManagementPolicy: 'OrderedReady',
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0, maxUnavailable: 1 } } as Obj,
    revisionHistoryLimit: 10,
    persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' } as Obj,
    ordinals: { start: 0 },
    template: {
      metadata: { labels: { app: 'web' } as Obj },
      spec: {
        restartPolicy: 'Always',
        containers: [{ name: 'nginx', volumeMounts: [{ name: 'www', mountPath: '/usr/share/nginx/html' }] }],
      } as Obj,
    },
    volumeClaimTemplates: [{ metadata: { name: 'www' }, spec: { accessModes: ['ReadWriteOnce'] } }],
  } as Obj & Record<string, unknown>,
});
type STS = ReturnType<typeof valid>;
const withChange = (change: (o: STS) => void) => variant(valid, change as (o: Loose) => void) as STS;
const err = fieldError;
const s = (o: STS) => o.spec as Obj & { template: { metadata: { labels: Obj }; spec: Obj } };

describe('StatefulSet create', () => {
  it.each([
    ['a complete set', () => {}, ctx],
    [
      'Parallel with OnDelete',
      (o: STS) => Object.assign(o.spec, { podManagementPolicy: 'Parallel', updateStrategy: { type: 'OnDelete' } }),
      ctx,
    ],
    [
      'Recreate with the gate on',
      (o: STS) => (o.spec.updateStrategy = { type: 'Recreate' }),
      ctxWithGates({ StatefulSetRecreateStrategy: true }),
    ],
    [
      'maxUnavailable 50%',
      (o: STS) => (o.spec.updateStrategy = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '50%' } }),
      ctx,
    ],
    [
      'Delete retention',
      (o: STS) => (o.spec.persistentVolumeClaimRetentionPolicy = { whenDeleted: 'Delete', whenScaled: 'Delete' }),
      ctx,
    ],
    [
      'a matchExpressions selector',
      (o: STS) => (o.spec.selector = { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] }),
      ctx,
    ],
  ])('accepts %s', (_n, change, c) => {
    expect(validateStatefulSetCreate(withChange(change), c)).toEqual([]);
  });

  it.each([
    [
      'no selector',
      (o: STS) => delete o.spec.selector,
      [
        err('FieldValueRequired', 'spec.selector', 'Required value'),
        err(
          'FieldValueInvalid',
          'spec.template.metadata.labels',
          'Invalid value: {"app":"web"}: `selector` does not match template `labels`',
        ),
      ],
    ],
    [
      'an empty selector',
      (o: STS) => (o.spec.selector = {}),
      [err('FieldValueInvalid', 'spec.selector', 'Invalid value: {}: empty selector is invalid for statefulset')],
    ],
    [
      'a selector not matching the labels',
      (o: STS) => (s(o).template.metadata.labels = { app: 'api' }),
      [
        err(
          'FieldValueInvalid',
          'spec.template.metadata.labels',
          'Invalid value: {"app":"api"}: `selector` does not match template `labels`',
        ),
      ],
    ],
    [
      'a selector with a bad operator',
      (o: STS) => (o.spec.selector = { matchExpressions: [{ key: 'app', operator: 'Is' }] }),
      [
        err(
          'FieldValueInvalid',
          'spec.selector.matchExpressions[0].operator',
          'Invalid value: "Is": not a valid selector operator',
        ),
        err(
          'FieldValueInvalid',
          'spec.selector',
          'Invalid value: {"matchExpressions":[{"key":"app","operator":"Is"}]}',
        ),
      ],
    ],
    [
      'restartPolicy OnFailure',
      (o: STS) => (s(o).template.spec.restartPolicy = 'OnFailure'),
      [
        err(
          'FieldValueNotSupported',
          'spec.template.spec.restartPolicy',
          'Unsupported value: "OnFailure": supported values: "Always"',
        ),
      ],
    ],
    [
      'activeDeadlineSeconds',
      (o: STS) => (s(o).template.spec.activeDeadlineSeconds = 30),
      [
        err(
          'FieldValueForbidden',
          'spec.template.spec.activeDeadlineSeconds',
          'Forbidden: activeDeadlineSeconds in StatefulSet is not Supported',
        ),
      ],
    ],
    [
      'negative replicas',
      (o: STS) => (o.spec.replicas = -1),
      [err('FieldValueInvalid', 'spec.replicas', 'Invalid value: -1: must be greater than or equal to 0')],
    ],
    [
      'negative minReadySeconds',
      (o: STS) => (o.spec.minReadySeconds = -1),
      [err('FieldValueInvalid', 'spec.minReadySeconds', 'Invalid value: -1: must be greater than or equal to 0')],
    ],
    [
      'a negative ordinals.start',
      (o: STS) => (o.spec.ordinals = { start: -2 }),
      [err('FieldValueInvalid', 'spec.ordinals.start', 'Invalid value: -2: must be greater than or equal to 0')],
    ],
    [
      'no podManagementPolicy',
      (o: STS) => delete o.spec.podManagementPolicy,
      [err('FieldValueRequired', 'spec.podManagementPolicy', 'Required value')],
    ],
    [
      'an unknown podManagementPolicy',
      (o: STS) => (o.spec.podManagementPolicy = 'Random'),
      [
        err(
          'FieldValueInvalid',
          'spec.podManagementPolicy',
          "Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'",
        ),
      ],
    ],
    [
      'no updateStrategy type',
      (o: STS) => (o.spec.updateStrategy = {}),
      [err('FieldValueRequired', 'spec.updateStrategy', 'Required value')],
    ],
    [
      'Recreate with the gate off',
      (o: STS) => (o.spec.updateStrategy = { type: 'Recreate' }),
      [
        err(
          'FieldValueInvalid',
          'spec.updateStrategy',
          'Invalid value: {"type":"Recreate"}: must be \'RollingUpdate\' or \'OnDelete\'',
        ),
      ],
    ],
    [
      'rollingUpdate with OnDelete',
      (o: STS) => (o.spec.updateStrategy = { type: 'OnDelete', rollingUpdate: { partition: 1 } }),
      [
        err(
          'FieldValueInvalid',
          'spec.updateStrategy.rollingUpdate',
          'Invalid value: {"partition":1}: only allowed for updateStrategy \'RollingUpdate\'',
        ),
      ],
    ],
    [
      'a negative partition',
      (o: STS) => (o.spec.updateStrategy = { type: 'RollingUpdate', rollingUpdate: { partition: -1 } }),
      [
        err(
          'FieldValueInvalid',
          'spec.updateStrategy.rollingUpdate.partition',
          'Invalid value: -1: must be greater than or equal to 0',
        ),
      ],
    ],
    [
      'maxUnavailable 0',
      (o: STS) => (o.spec.updateStrategy = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0 } }),
      [err('FieldValueInvalid', 'spec.updateStrategy.rollingUpdate.maxUnavailable', 'Invalid value: 0: cannot be 0')],
    ],
    [
      'maxUnavailable 0%',
      (o: STS) => (o.spec.updateStrategy = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '0%' } }),
      [
        err(
          'FieldValueInvalid',
          'spec.updateStrategy.rollingUpdate.maxUnavailable',
          'Invalid value: "0%": cannot be 0',
        ),
      ],
    ],
    [
      'maxUnavailable 150%',
      (o: STS) => (o.spec.updateStrategy = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '150%' } }),
      [
        err(
          'FieldValueInvalid',
          'spec.updateStrategy.rollingUpdate.maxUnavailable',
          'Invalid value: "150%": must not be greater than 100%',
        ),
      ],
    ],
    [
      'an unknown retention policy',
      (o: STS) => (o.spec.persistentVolumeClaimRetentionPolicy = { whenDeleted: 'Keep', whenScaled: 'Retain' }),
      [
        err(
          'FieldValueNotSupported',
          'spec.persistentVolumeClaimRetentionPolicy.whenDeleted',
          'Unsupported value: "Keep": supported values: "Retain", "Delete"',
        ),
      ],
    ],
    [
      'a claim template nobody mounts',
      (o: STS) => (o.spec.volumeClaimTemplates = [{ metadata: { name: 'data' } }]),
      [
        err(
          'FieldValueInvalid',
          'spec.volumeClaimTemplates[0].metadata.name',
          'Invalid value: "data": must match the name of a volumeMount in a container of the pod template',
        ),
      ],
    ],
    [
      'a name that is not a DNS label',
      (o: STS) => (o.metadata.name = 'web.v2'),
      [err('FieldValueInvalid', 'metadata.name', 'Invalid value: "web.v2": must not contain dots')],
    ],
    [
      'replicas of the wrong type',
      (o: STS) => (o.spec.replicas = 'three'),
      [err('FieldValueInvalid', 'spec.replicas', 'Invalid value: "three": must be of type integer')],
    ],
  ])('rejects %s', (_n, change, expected) => {
    expect(validateStatefulSetCreate(withChange(change), ctx)).toEqual(expected);
  });
});

describe('StatefulSet update', () => {
  it.each([
    ['replicas', (o: STS) => (o.spec.replicas = 5)],
    ['template', (o: STS) => (s(o).template.spec.containers = [{ name: 'nginx2', volumeMounts: [{ name: 'www' }] }])],
    ['updateStrategy', (o: STS) => (o.spec.updateStrategy = { type: 'OnDelete' })],
    ['revisionHistoryLimit', (o: STS) => (o.spec.revisionHistoryLimit = 3)],
    ['minReadySeconds', (o: STS) => (o.spec.minReadySeconds = 10)],
    ['ordinals', (o: STS) => (o.spec.ordinals = { start: 5 })],
    [
      'persistentVolumeClaimRetentionPolicy',
      (o: STS) => (o.spec.persistentVolumeClaimRetentionPolicy = { whenDeleted: 'Delete', whenScaled: 'Retain' }),
    ],
  ])('allows changing %s', (_n, change) => {
    expect(validateStatefulSetUpdate(withChange(change), valid(), ctx)).toEqual([]);
  });

  const FORBIDDEN =
    "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden";
  it.each([
    ['serviceName', (o: STS) => (o.spec.serviceName = 'other')],
    ['podManagementPolicy', (o: STS) => (o.spec.podManagementPolicy = 'Parallel')],
    [
      'volumeClaimTemplates',
      (o: STS) => ((o.spec.volumeClaimTemplates as Obj[])[0].spec = { accessModes: ['ReadWriteMany'] }),
    ],
  ])('forbids changing %s', (_n, change) => {
    expect(validateStatefulSetUpdate(withChange(change), valid(), ctx)).toEqual([
      err('FieldValueForbidden', 'spec', FORBIDDEN),
    ]);
  });

  it('keeps a stored Recreate strategy acceptable after the gate is turned off', () => {
    const stored = withChange((o) => (o.spec.updateStrategy = { type: 'Recreate' }));
    expect(
      validateStatefulSetUpdate(
        withChange((o) => (o.spec.updateStrategy = { type: 'Recreate' })),
        stored,
        ctx,
      ),
    ).toEqual([]);
  });
});

describe('StatefulSet status', () => {
  const withStatus = (status: Obj) => ({ ...valid(), status });
  it('accepts consistent counters', () => {
    const status = {
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 2,
      currentReplicas: 3,
      updatedReplicas: 1,
      collisionCount: 1,
      observedGeneration: 2,
    };
    expect(
      validateStatefulSetStatusUpdate(withStatus(status), withStatus({ replicas: 3, collisionCount: 1 }), ctx),
    ).toEqual([]);
  });
  it.each([
    [
      { replicas: -1 },
      err('FieldValueInvalid', 'status.replicas', 'Invalid value: -1: must be greater than or equal to 0'),
    ],
    [
      { replicas: 1, readyReplicas: 2, availableReplicas: 1 },
      err('FieldValueInvalid', 'status.readyReplicas', 'Invalid value: 2: cannot be greater than status.replicas'),
    ],
    [
      { replicas: 3, readyReplicas: 1, availableReplicas: 2 },
      err(
        'FieldValueInvalid',
        'status.availableReplicas',
        'Invalid value: 2: cannot be greater than status.readyReplicas',
      ),
    ],
  ])('rejects %j', (status, expected) => {
    expect(validateStatefulSetStatusUpdate(withStatus(status), valid(), ctx)).toContainEqual(expected);
  });
  it('rejects a decremented collisionCount', () => {
    expect(
      validateStatefulSetStatusUpdate(
        withStatus({ replicas: 0, collisionCount: 1 }),
        withStatus({ collisionCount: 2 }),
        ctx,
      ),
    ).toEqual([err('FieldValueInvalid', 'status.collisionCount', 'Invalid value: 1: cannot be decremented')]);
  });
});

describe('StatefulSet defaults', () => {
  const bare = () => ({
    metadata: { name: 'web' },
    spec: { selector: { matchLabels: { a: 'b' } }, template: { spec: {} } } as Obj,
  });

  it('applies the reference defaults with maxUnavailable while the gate is on (default)', () => {
    const o = bare();
    defaultStatefulSet(o, ctx);
    expect(o.spec).toEqual({
      selector: { matchLabels: { a: 'b' } },
      template: {
        spec: {
          restartPolicy: 'Always',
          dnsPolicy: 'ClusterFirst',
          terminationGracePeriodSeconds: 30,
          schedulerName: 'default-scheduler',
          securityContext: {},
        },
      },
      podManagementPolicy: 'OrderedReady',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0, maxUnavailable: 1 } },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
      replicas: 1,
      revisionHistoryLimit: 10,
    });
  });

  it('leaves maxUnavailable unset with the gate off, and keeps given values', () => {
    const o = bare();
    Object.assign(o.spec, {
      replicas: 0,
      updateStrategy: { type: 'OnDelete' },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete' },
    });
    defaultStatefulSet(o, ctxWithGates({ MaxUnavailableStatefulSet: false }));
    expect(o.spec).toMatchObject({
      replicas: 0,
      updateStrategy: { type: 'OnDelete' },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' },
    });
    const p = bare();
    defaultStatefulSet(p, ctxWithGates({ MaxUnavailableStatefulSet: false }));
    expect(p.spec.updateStrategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { partition: 0 } });
  });

  it('produces a set that validates', () => {
    const o = {
      metadata: { name: 'web', namespace: 'd' },
      spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: {} } },
    };
    defaultStatefulSet(o, ctx);
    expect(validateStatefulSetCreate(o, ctx)).toEqual([]);
  });
});
