/**
 * StatefulSet (`apps/v1`, namespaced): validation of create, update and `/status`, and the reference's
 * defaults.
 *
 * Spec: podManagementPolicy `OrderedReady` or `Parallel`; updateStrategy `RollingUpdate`, `OnDelete`, or
 * `Recreate` with the `StatefulSetRecreateStrategy` gate (rollingUpdate only with RollingUpdate; partition >=
 * 0; maxUnavailable a non-zero integer or percentage up to 100%); PVC retention `Retain` or `Delete`;
 * replicas, minReadySeconds and ordinals.start >= 0; a non-empty valid selector that matches the template
 * labels; template restartPolicy `Always`, no activeDeadlineSeconds; every volumeClaimTemplate mounted by a
 * template container. Updates may change only replicas, ordinals, template, updateStrategy,
 * revisionHistoryLimit, persistentVolumeClaimRetentionPolicy and minReadySeconds.
 */

import {
  child,
  deepEqual,
  type FieldError,
  forbidden,
  invalid,
  notSupported,
  required,
} from '../../api/field-errors.ts';
import {
  labelSelectorConvertible,
  labelSelectorEmpty,
  labelSelectorMatches,
  nameIsDNSLabel,
  validateAnnotations,
  validateLabelSelector,
  validateLabels,
  validateNonnegativeField,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './common.ts';
import { gateEnabled, type ValidationContext } from './context.ts';
import { intOrPercentValue, isNotMoreThan100Percent, validatePositiveIntOrPercent } from './int-or-percent.ts';
import {
  absent,
  arr,
  checkShape,
  int,
  isObj,
  LABEL_SELECTOR,
  OBJECT_META,
  type Obj,
  obj,
  rootProblem,
  str,
  strMap,
  topLevel,
} from './raw.ts';
import { defaultPodSpec } from './workload-defaults.ts';

export const STATEFUL_SET_RECREATE_STRATEGY = 'StatefulSetRecreateStrategy';
export const MAX_UNAVAILABLE_STATEFUL_SET = 'MaxUnavailableStatefulSet';
export const DEFAULT_REVISION_HISTORY_LIMIT = 10;

const RETENTION_POLICIES = ['Retain', 'Delete'];
/** Spec members an update may change. */
const MUTABLE_SPEC_FIELDS = [
  'replicas',
  'ordinals',
  'template',
  'updateStrategy',
  'revisionHistoryLimit',
  'persistentVolumeClaimRetentionPolicy',
  'minReadySeconds',
];

const CONTAINER = {
  fields: { name: 'string', volumeMounts: { items: { fields: { name: 'string', mountPath: 'string' } } } },
} as const;

const SHAPE = topLevel({
  spec: {
    fields: {
      replicas: 'int32',
      selector: LABEL_SELECTOR,
      template: {
        fields: {
          metadata: OBJECT_META,
          spec: {
            fields: {
              restartPolicy: 'string',
              activeDeadlineSeconds: 'int64',
              containers: { items: CONTAINER },
              initContainers: { items: CONTAINER },
            },
          },
        },
      },
      volumeClaimTemplates: { items: { fields: { metadata: OBJECT_META, spec: 'any' } } },
      serviceName: 'string',
      podManagementPolicy: 'string',
      updateStrategy: {
        fields: { type: 'string', rollingUpdate: { fields: { partition: 'int32', maxUnavailable: 'intOrString' } } },
      },
      revisionHistoryLimit: 'int32',
      minReadySeconds: 'int32',
      persistentVolumeClaimRetentionPolicy: { fields: { whenDeleted: 'string', whenScaled: 'string' } },
      ordinals: { fields: { start: 'int32' } },
    },
  },
  status: {
    fields: {
      observedGeneration: 'int64',
      replicas: 'int32',
      readyReplicas: 'int32',
      currentReplicas: 'int32',
      updatedReplicas: 'int32',
      currentRevision: 'string',
      updateRevision: 'string',
      collisionCount: 'int32',
      availableReplicas: 'int32',
      conditions: { items: 'any' },
    },
  },
});

function validateRollingUpdate(ru: Obj, path: string): FieldError[] {
  const errs = validateNonnegativeField(int(ru.partition), child(path, 'partition'));
  const maxUnavailable = ru.maxUnavailable;
  if (!absent(maxUnavailable)) {
    const p = child(path, 'maxUnavailable');
    errs.push(...validatePositiveIntOrPercent(maxUnavailable, p));
    if (intOrPercentValue(maxUnavailable) === 0) errs.push(invalid(p, maxUnavailable, 'cannot be 0'));
    errs.push(...isNotMoreThan100Percent(maxUnavailable, p));
  }
  return errs;
}

function validateUpdateStrategy(spec: Obj, oldSpec: Obj | undefined, ctx: ValidationContext | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const strategy = obj(spec.updateStrategy) ?? {};
  const type = str(strategy.type) ?? '';
  const rollingUpdate = obj(strategy.rollingUpdate);
  const recreateAllowed =
    gateEnabled(ctx, STATEFUL_SET_RECREATE_STRATEGY) || obj(oldSpec?.updateStrategy)?.type === 'Recreate';
  const onlyForRollingUpdate = () => {
    if (rollingUpdate) {
      errs.push(
        invalid('spec.updateStrategy.rollingUpdate', rollingUpdate, "only allowed for updateStrategy 'RollingUpdate'"),
      );
    }
  };
  if (type === '') errs.push(required('spec.updateStrategy'));
  else if (type === 'OnDelete') onlyForRollingUpdate();
  else if (type === 'RollingUpdate') {
    if (rollingUpdate) errs.push(...validateRollingUpdate(rollingUpdate, 'spec.updateStrategy.rollingUpdate'));
  } else if (type === 'Recreate' && recreateAllowed) onlyForRollingUpdate();
  else {
    const detail = gateEnabled(ctx, STATEFUL_SET_RECREATE_STRATEGY)
      ? "must be 'RollingUpdate', 'OnDelete' or 'Recreate'"
      : "must be 'RollingUpdate' or 'OnDelete'";
    errs.push(invalid('spec.updateStrategy', strategy, detail));
  }
  return errs;
}

function containers(template: Obj | undefined): Obj[] {
  const podSpec = obj(template?.spec);
  return [...(arr(podSpec?.containers) ?? []), ...(arr(podSpec?.initContainers) ?? [])].filter(isObj);
}

function validateSpec(spec: Obj, oldSpec: Obj | undefined, ctx: ValidationContext | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const policy = spec.podManagementPolicy;
  if (absent(policy) || policy === '') errs.push(required('spec.podManagementPolicy'));
  else if (typeof policy === 'string' && policy !== 'OrderedReady' && policy !== 'Parallel') {
    errs.push(invalid('spec.podManagementPolicy', policy, "must be 'OrderedReady' or 'Parallel'"));
  }

  errs.push(...validateUpdateStrategy(spec, oldSpec, ctx));

  const retention = obj(spec.persistentVolumeClaimRetentionPolicy);
  if (retention) {
    for (const f of ['whenDeleted', 'whenScaled']) {
      const v = str(retention[f]) ?? '';
      if (!RETENTION_POLICIES.includes(v)) {
        errs.push(notSupported(`spec.persistentVolumeClaimRetentionPolicy.${f}`, v, RETENTION_POLICIES));
      }
    }
  }

  errs.push(...validateNonnegativeField(int(spec.replicas), 'spec.replicas'));
  errs.push(...validateNonnegativeField(int(spec.minReadySeconds), 'spec.minReadySeconds'));
  const ordinals = obj(spec.ordinals);
  if (ordinals) errs.push(...validateNonnegativeField(int(ordinals.start), 'spec.ordinals.start'));

  const selector = spec.selector;
  if (absent(selector)) {
    errs.push(required('spec.selector'));
  } else if (isObj(selector)) {
    errs.push(...validateLabelSelector(selector, 'spec.selector'));
    if (labelSelectorEmpty(selector))
      errs.push(invalid('spec.selector', selector, 'empty selector is invalid for statefulset'));
  }

  const template = obj(spec.template);
  if (!labelSelectorConvertible(selector)) {
    errs.push(invalid('spec.selector', selector, ''));
  } else if (!absent(spec.template) && !template) {
    // a template of the wrong type is reported by the shape check
  } else {
    const meta = obj(template?.metadata) ?? {};
    const labels = strMap(meta.labels) ?? {};
    const matchesEverything = isObj(selector) && labelSelectorEmpty(selector);
    if (!matchesEverything && !labelSelectorMatches(selector, labels)) {
      errs.push(
        invalid('spec.template.metadata.labels', meta.labels ?? null, '`selector` does not match template `labels`'),
      );
    }
    errs.push(...validateLabels(meta.labels, 'spec.template.labels'));
    errs.push(...validateAnnotations(meta.annotations, 'spec.template.annotations'));
  }

  const podSpec = obj(template?.spec) ?? {};
  const restartPolicy = podSpec.restartPolicy;
  if (restartPolicy !== 'Always' && (typeof restartPolicy === 'string' || absent(restartPolicy))) {
    errs.push(notSupported('spec.template.spec.restartPolicy', str(restartPolicy) ?? '', ['Always']));
  }
  if (!absent(podSpec.activeDeadlineSeconds)) {
    errs.push(
      forbidden('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in StatefulSet is not Supported'),
    );
  }

  const mounted = new Set<string>();
  for (const c of containers(template)) {
    for (const m of arr(c.volumeMounts) ?? []) {
      const name = str(obj(m)?.name);
      if (name) mounted.add(name);
    }
  }
  arr(spec.volumeClaimTemplates)?.forEach((raw, i) => {
    const claimName = str(obj(obj(raw)?.metadata)?.name);
    if (claimName === undefined) return;
    if (!mounted.has(claimName)) {
      errs.push(
        invalid(
          `spec.volumeClaimTemplates[${i}].metadata.name`,
          claimName,
          'must match the name of a volumeMount in a container of the pod template',
        ),
      );
    }
  });
  return errs;
}

export function validateStatefulSetCreate(o: unknown, ctx?: ValidationContext): FieldError[] {
  const root = rootProblem(o);
  if (root.length) return root;
  const sts = o as Obj;
  const errs = checkShape(o, SHAPE, '');
  errs.push(...validateObjectMeta(sts.metadata, true, nameIsDNSLabel));
  if (!isObj(sts.spec) && absent(sts.spec)) errs.push(required('spec'));
  errs.push(...validateSpec(obj(sts.spec) ?? {}, undefined, ctx));
  return errs;
}

export function validateStatefulSetUpdate(o: unknown, old: unknown, ctx?: ValidationContext): FieldError[] {
  if (!isObj(o)) return rootProblem(o);
  const errs = checkShape(o, SHAPE, '');
  errs.push(...validateObjectMetaUpdate(o.metadata, obj(old)?.metadata));
  const spec = obj(o.spec) ?? {};
  const oldSpec = obj(obj(old)?.spec) ?? {};
  errs.push(...validateSpec(spec, oldSpec, ctx));
  const strip = (s: Obj) => Object.fromEntries(Object.entries(s).filter(([k]) => !MUTABLE_SPEC_FIELDS.includes(k)));
  if (!deepEqual(strip(spec), strip(oldSpec))) {
    errs.push(
      forbidden(
        'spec',
        "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      ),
    );
  }
  return errs;
}

export function validateStatefulSetStatusUpdate(o: unknown, old: unknown, _ctx?: ValidationContext): FieldError[] {
  if (!isObj(o)) return rootProblem(o);
  const errs = checkShape(o, SHAPE, '');
  const status = obj(o.status) ?? {};
  const n = (f: string) => int(status[f]) ?? 0;
  for (const f of ['replicas', 'readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas']) {
    errs.push(...validateNonnegativeField(n(f), `status.${f}`));
  }
  for (const f of ['observedGeneration', 'collisionCount'])
    errs.push(...validateNonnegativeField(int(status[f]), `status.${f}`));
  const msg = 'cannot be greater than status.replicas';
  for (const f of ['readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas']) {
    if (n(f) > n('replicas')) errs.push(invalid(`status.${f}`, n(f), msg));
  }
  if (n('availableReplicas') > n('readyReplicas')) {
    errs.push(
      invalid('status.availableReplicas', n('availableReplicas'), 'cannot be greater than status.readyReplicas'),
    );
  }
  errs.push(...validateObjectMetaUpdate(o.metadata, obj(old)?.metadata));
  const collisions = int(status.collisionCount);
  const oldCollisions = int(obj(obj(old)?.status)?.collisionCount);
  if (oldCollisions !== undefined && (collisions ?? 0) < oldCollisions) {
    errs.push(invalid('status.collisionCount', collisions ?? 0, 'cannot be decremented'));
  }
  return errs;
}

/**
 * The reference's defaults: replicas 1, podManagementPolicy OrderedReady, updateStrategy RollingUpdate with
 * partition 0 (and maxUnavailable 1 while the `MaxUnavailableStatefulSet` gate is on), revisionHistoryLimit
 * 10, PVC retention Retain/Retain, and the pod template's restartPolicy Always. minReadySeconds stays unset
 * (0 is its zero value).
 */
export function defaultStatefulSet(o: unknown, ctx?: Pick<ValidationContext, 'featureGates'>): void {
  const spec = obj(obj(o)?.spec);
  if (!spec) return;
  if (absent(spec.podManagementPolicy) || spec.podManagementPolicy === '') spec.podManagementPolicy = 'OrderedReady';
  if (absent(spec.updateStrategy)) spec.updateStrategy = {};
  const strategy = obj(spec.updateStrategy);
  if (strategy) {
    if (absent(strategy.type) || strategy.type === '') {
      strategy.type = 'RollingUpdate';
      if (absent(strategy.rollingUpdate)) strategy.rollingUpdate = {};
    }
    const rollingUpdate = obj(strategy.rollingUpdate);
    if (strategy.type === 'RollingUpdate' && rollingUpdate) {
      if (absent(rollingUpdate.partition)) rollingUpdate.partition = 0;
      if (gateEnabled(ctx, MAX_UNAVAILABLE_STATEFUL_SET) && absent(rollingUpdate.maxUnavailable))
        rollingUpdate.maxUnavailable = 1;
    }
  }
  if (absent(spec.persistentVolumeClaimRetentionPolicy)) spec.persistentVolumeClaimRetentionPolicy = {};
  const retention = obj(spec.persistentVolumeClaimRetentionPolicy);
  if (retention) {
    for (const f of ['whenDeleted', 'whenScaled'])
      if (absent(retention[f]) || retention[f] === '') retention[f] = 'Retain';
  }
  if (absent(spec.replicas)) spec.replicas = 1;
  if (absent(spec.revisionHistoryLimit)) spec.revisionHistoryLimit = DEFAULT_REVISION_HISTORY_LIMIT;
  defaultPodSpec(obj(obj(spec.template)?.spec));
}
