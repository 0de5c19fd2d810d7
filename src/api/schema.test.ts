import { describe, expect, it } from 'vitest';
import { FLAVORS } from './naming.ts';
import { apiVersionOf, ResourceRegistry } from './registry.ts';
import { type ListNode, type Node, schemaFor } from './schema.ts';

const SCALARS = new Set(['any', 'string', 'integer', 'number', 'boolean', 'int-or-string', 'quantity', 'time']);

/** Every node is a known marker or exactly one of object / map / list; returns the offending path if not. */
function malformed(node: Node, path = ''): string | undefined {
  if (typeof node === 'string') return SCALARS.has(node) ? undefined : path;
  if ('list' in node) return malformedList(node, path) ?? malformed(node.list, `${path}[]`);
  // An object or map may carry markers beside its fields or values: `atomic`, and for an object `pointer`.
  const markers = Object.entries(node).filter(([k]) => k !== 'object' && k !== 'map');
  const allowed = 'object' in node ? ['atomic', 'pointer'] : ['atomic'];
  if (markers.some(([k, v]) => !allowed.includes(k) || v !== true)) return path;
  if ('map' in node) return malformed(node.map, `${path}{}`);
  if (!('object' in node)) return path;
  for (const [field, child] of Object.entries(node.object)) {
    const bad = malformed(child, `${path}.${field}`);
    if (bad !== undefined) return bad;
  }
  return undefined;
}

const LIST_ATTRIBUTES = new Set([
  'list',
  'listType',
  'mapKeys',
  'patchStrategy',
  'patchMergeKey',
  'keyDefaults',
  'inZeroValue',
]);

/** A list's markers: known ones only; a map list's keys and merge key are fields of its items. */
function malformedList(node: ListNode, path: string): string | undefined {
  if (Object.keys(node).some((k) => !LIST_ATTRIBUTES.has(k))) return path;
  if (node.listType !== 'map') return node.mapKeys === undefined ? undefined : path;
  const item = node.list;
  if (typeof item !== 'object' || !('object' in item)) return path;
  const keys = [
    ...(node.mapKeys ?? []),
    ...(node.patchMergeKey ? [node.patchMergeKey] : []),
    ...Object.keys(node.keyDefaults ?? {}),
  ];
  return keys.length > 0 && keys.every((k) => Object.hasOwn(item.object, k)) ? undefined : path;
}

/** Follows object fields and list/map elements (`[]`) down a schema. */
function at(node: Node | undefined, ...segments: string[]): Node | undefined {
  for (const s of segments) {
    if (node === undefined || typeof node === 'string') return undefined;
    if (s === '[]') node = 'list' in node ? node.list : 'map' in node ? node.map : undefined;
    else node = 'object' in node && Object.hasOwn(node.object, s) ? node.object[s] : undefined;
  }
  return node;
}

describe('schemaFor', () => {
  for (const flavor of FLAVORS) {
    const registry = new ResourceRegistry(flavor);
    it(`has a well-formed schema for every kind of the ${flavor} registry`, () => {
      for (const rt of registry.all) {
        const schema = schemaFor(rt.kind, apiVersionOf(rt));
        expect(schema, rt.kind).toBeDefined();
        expect(malformed(schema!), rt.kind).toBeUndefined();
        for (const top of ['apiVersion', 'kind', 'metadata'])
          expect(at(schema, top), `${rt.kind}.${top}`).toBeDefined();
      }
    });

    it(`picks the Event shape by apiVersion (${flavor})`, () => {
      const [core, grouped] = registry.all.filter((rt) => rt.kind === 'Event').map(apiVersionOf);
      expect(core).toBe('v1');
      expect(at(schemaFor('Event', core), 'involvedObject', 'fieldPath')).toBe('string');
      expect(at(schemaFor('Event', core), 'regarding')).toBeUndefined();
      expect(at(schemaFor('Event', grouped), 'regarding', 'fieldPath')).toBe('string');
      expect(at(schemaFor('Event', grouped), 'involvedObject')).toBeUndefined();
    });
  }

  it('covers the subresource and options bodies', () => {
    expect(at(schemaFor('Scale'), 'spec', 'replicas')).toBe('integer');
    expect(at(schemaFor('Scale'), 'status', 'selector')).toBe('string');
    expect(at(schemaFor('Eviction'), 'deleteOptions', 'preconditions', 'resourceVersion')).toBe('string');
    expect(at(schemaFor('DeleteOptions'), 'propagationPolicy')).toBe('string');
  });

  it('shares the pod template between workloads', () => {
    const container = ['spec', 'template', 'spec', 'containers', '[]'];
    for (const kind of ['StatefulSet', 'Deployment', 'ReplicaSet', 'ReplicationController']) {
      expect(at(schemaFor(kind), ...container, 'imagePullPolicy'), kind).toBe('string');
      expect(at(schemaFor(kind), ...container, 'env', '[]', 'valueFrom', 'secretKeyRef', 'key'), kind).toBe('string');
      expect(at(schemaFor(kind), ...container, 'resources', 'limits', '[]'), kind).toBe('quantity');
    }
    expect(at(schemaFor('Pod'), 'spec', 'affinity')).toBe('any');
    expect(at(schemaFor('Pod'), 'spec', 'volumes', '[]', 'csi')).toBe('any');
    expect(at(schemaFor('StatefulSet'), 'spec', 'volumeClaimTemplates', '[]', 'spec', 'resources', 'requests')).toEqual(
      {
        map: 'quantity',
      },
    );
  });

  it('knows the spec resources field by field', () => {
    expect(at(schemaFor('ControllerRevision'), 'data')).toEqual({ map: 'any', atomic: true });
    expect(at(schemaFor('PodDisruptionBudget'), 'status', 'disruptedPods')).toEqual({ map: 'time' });
    expect(at(schemaFor('PodDisruptionBudget'), 'spec', 'minAvailable')).toBe('int-or-string');
    expect(at(schemaFor('ClusterRole'), 'aggregationRule', 'clusterRoleSelectors', '[]', 'matchLabels')).toBeDefined();
    expect(at(schemaFor('ValidatingAdmissionPolicy'), 'status', 'typeChecking', 'expressionWarnings')).toBeDefined();
    expect(at(schemaFor('ValidatingAdmissionPolicyBinding'), 'spec', 'paramRef', 'parameterNotFoundAction')).toBe(
      'string',
    );
    expect(at(schemaFor('LeaseCandidate'), 'spec', 'pingTime')).toBe('time');
    expect(at(schemaFor('CertificateSigningRequest'), 'status', 'conditions', '[]', 'lastUpdateTime')).toBe('time');
  });

  it('does not know other kinds or inherited property names', () => {
    expect(schemaFor('Widget')).toBeUndefined();
    expect(schemaFor('toString')).toBeUndefined();
    expect(at(schemaFor('Pod'), 'constructor')).toBeUndefined();
  });
});
