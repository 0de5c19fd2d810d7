import { describe, expect, it } from 'vitest';
import { listStrategy } from './merge-keys.ts';

// The served kinds with a pod spec; the strategies come from their schemas.
const POD_SPEC_BASES: [kind: string, base: string][] = [
  ['Pod', 'spec'],
  ['Deployment', 'spec.template.spec'],
  ['ReplicaSet', 'spec.template.spec'],
  ['StatefulSet', 'spec.template.spec'],
  ['ReplicationController', 'spec.template.spec'],
];

const strategyOf = (kind: string, path: string) => listStrategy(kind, path.split('.'));

describe('listStrategy', () => {
  describe.each(POD_SPEC_BASES)('%s pod spec at %s', (kind, base) => {
    it.each([
      ['containers', { mergeKey: 'name' }],
      ['initContainers', { mergeKey: 'name' }],
      ['ephemeralContainers', { mergeKey: 'name' }],
      ['volumes', { mergeKey: 'name' }],
      ['imagePullSecrets', { mergeKey: 'name' }],
      ['hostAliases', { mergeKey: 'ip' }],
      ['topologySpreadConstraints', { mergeKey: 'topologyKey' }],
      ['resourceClaims', { mergeKey: 'name' }],
      ['schedulingGates', { mergeKey: 'name' }],
      ['containers.ports', { mergeKey: 'containerPort' }],
      ['initContainers.env', { mergeKey: 'name' }],
      ['ephemeralContainers.volumeMounts', { mergeKey: 'mountPath' }],
      ['containers.volumeDevices', { mergeKey: 'devicePath' }],
      ['tolerations', undefined],
      ['readinessGates', undefined],
      ['affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms', undefined],
      ['containers.resizePolicy', undefined],
      ['containers.args', undefined],
      ['containers.envFrom', undefined],
    ])('%s', (field, expected) => {
      expect(strategyOf(kind, `${base}.${field}`)).toEqual(expected);
    });
  });

  it.each([
    ['Pod', 'status.conditions', { mergeKey: 'type' }],
    ['Pod', 'status.podIPs', { mergeKey: 'ip' }],
    ['Pod', 'status.hostIPs', { mergeKey: 'ip' }],
    ['Pod', 'status.containerStatuses', undefined],
    ['Pod', 'status.initContainerStatuses', undefined],
    ['Node', 'status.conditions', { mergeKey: 'type' }],
    ['Node', 'status.addresses', { mergeKey: 'type' }],
    ['Node', 'status.images', undefined],
    ['Node', 'spec.podCIDRs', { primitiveSet: true }],
    ['Node', 'spec.taints', undefined],
    ['Service', 'spec.ports', { mergeKey: 'port' }],
    ['Service', 'status.conditions', { mergeKey: 'type' }],
    ['Deployment', 'status.conditions', { mergeKey: 'type' }],
    ['ReplicaSet', 'status.conditions', { mergeKey: 'type' }],
    ['StatefulSet', 'status.conditions', { mergeKey: 'type' }],
    ['StatefulSet', 'spec.volumeClaimTemplates', undefined],
    ['Namespace', 'status.conditions', { mergeKey: 'type' }],
    ['PersistentVolumeClaim', 'status.conditions', { mergeKey: 'type' }],
    ['PodDisruptionBudget', 'status.conditions', { mergeKey: 'type' }],
    ['APIService', 'status.conditions', { mergeKey: 'type' }],
    ['ConfigMap', 'status.conditions', undefined],
    ['Pod', 'spec.template.spec.containers', undefined],
    ['Deployment', 'spec.containers', undefined],
  ])('%s %s', (kind, path, expected) => {
    expect(strategyOf(kind, path)).toEqual(expected);
  });

  it.each(['Pod', 'Secret', 'Widget'])('merges metadata lists of %s', (kind) => {
    expect(strategyOf(kind, 'metadata.ownerReferences')).toEqual({ mergeKey: 'uid' });
    expect(strategyOf(kind, 'metadata.finalizers')).toEqual({ primitiveSet: true });
  });

  it('does not read inherited properties as kinds or paths', () => {
    expect(strategyOf('constructor', 'metadata.finalizers')).toEqual({ primitiveSet: true });
    expect(strategyOf('Pod', 'toString')).toBeUndefined();
  });
});
