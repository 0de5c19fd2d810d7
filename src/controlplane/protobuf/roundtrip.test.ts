/**
 * Every kind the control plane serves, in both naming flavors, through a protobuf round trip: an object
 * with every field the protobuf tables carry set, encoded in the envelope and decoded back. Fields of the
 * schema that protobuf does not carry are listed here, so a schema field added without its number fails.
 */
import { describe, expect, it } from 'vitest';
import { apiVersionOf, ResourceRegistry } from '../../api/registry.ts';
import { type Node, schemaFor } from '../../api/schema.ts';
import { decodeKubernetesProtobuf, encodeKubernetesProtobuf } from './envelope.ts';
import type { FieldSpec, MessageTable, ValueKind } from './schema.ts';
import { tableForKind } from './tables.ts';

/** Schema fields newer than the reference messages of `numbers.ts`, or TypeMeta of embedded objects. */
const JSON_ONLY = new Set([
  'apiVersion',
  'kind',
  'metadata', // of DeleteOptions (no ObjectMeta in its message)
  'hostnameOverride',
  'observedGeneration', // of PodStatus and PodCondition only
  'stopSignal',
  'restartPolicyRules',
  'fileKeyRef',
  'extendedResourceClaimStatus',
  'terminatingReplicas',
  'forNodes',
]);

/** Served kinds, their subresource kinds and the DeleteOptions body. */
function servedKinds(registry: ResourceRegistry): [string, string][] {
  const kinds = registry.all.map((rt): [string, string] => [rt.kind, apiVersionOf(rt)]);
  if (registry.all.some((rt) => rt.subresources.includes('scale'))) kinds.push(['Scale', 'autoscaling/v1']);
  if (registry.all.some((rt) => rt.subresources.includes('eviction'))) kinds.push(['Eviction', 'policy/v1']);
  kinds.push(['DeleteOptions', 'v1']);
  return kinds;
}

/** A value for every carried field, none of them zero (zero scalars of plain fields are not kept). */
function sample(table: MessageTable): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const spec of Object.values(table.fields)) {
    if (spec.inline) Object.assign(out, sample(spec.kind as MessageTable));
    else if (!spec.opaque) out[spec.name] = sampleField(spec);
  }
  return out;
}

function sampleField(spec: FieldSpec): unknown {
  const one = sampleValue(spec.kind, spec.name);
  if (spec.map) return { first: one, second: sampleValue(spec.kind, `${spec.name}-2`) };
  if (spec.repeated) return [one, sampleValue(spec.kind, `${spec.name}-2`)];
  return one;
}

function sampleValue(kind: ValueKind, name: string): unknown {
  if (typeof kind === 'object') return kind.unwrap === undefined ? sample(kind) : ['a', 'b'];
  const values: Record<typeof kind, unknown> = {
    string: `${name}-value`,
    bytes: Buffer.from(name).toString('base64'),
    int32: -7,
    int64: 1767225845123,
    bool: true,
    double: 1.5,
    time: '2026-01-02T03:04:05Z',
    microTime: '2026-01-02T03:04:05.123456Z',
    quantity: '250m',
    intOrString: name.length % 2 ? '25%' : 3,
    rawExtension: { apiVersion: 'v1', kind: 'Thing', spec: { n: 1 } },
    fieldsV1: { 'f:metadata': { 'f:labels': { '.': {} } } },
  };
  return values[kind];
}

/** Dotted paths of schema fields the table does not carry (inline messages included). */
function uncarried(node: Node, table: MessageTable, path: string, out: string[]): void {
  if (typeof node !== 'object' || !('object' in node)) return;
  const carried = new Map<string, FieldSpec>();
  const collect = (t: MessageTable) => {
    for (const spec of Object.values(t.fields)) {
      if (spec.inline) collect(spec.kind as MessageTable);
      else carried.set(spec.name, spec);
    }
  };
  collect(table);
  for (const [name, child] of Object.entries(node.object)) {
    const spec = carried.get(name);
    if (!spec) {
      out.push(`${path}.${name}`);
      continue;
    }
    let item = child;
    while (typeof item === 'object' && ('list' in item || 'map' in item)) item = 'list' in item ? item.list : item.map;
    if (typeof spec.kind === 'object' && spec.kind.unwrap === undefined && !spec.opaque) {
      uncarried(item, spec.kind, `${path}.${name}`, out);
    }
  }
}

describe.each(['orch', 'kubernetes'] as const)('protobuf round trip of every served kind (%s)', (flavor) => {
  const registry = new ResourceRegistry(flavor);

  it.each(servedKinds(registry))('%s (%s)', (kind, apiVersion) => {
    const table = tableForKind(kind, apiVersion);
    expect(table, `${kind} has no protobuf table`).toBeDefined();
    const object = { apiVersion, kind, ...sample(table as MessageTable) };
    expect(decodeKubernetesProtobuf(encodeKubernetesProtobuf(object))).toEqual(object);

    const missing: string[] = [];
    uncarried(schemaFor(kind, apiVersion) as Node, table as MessageTable, kind, missing);
    expect(missing.filter((path) => !JSON_ONLY.has(path.slice(path.lastIndexOf('.') + 1)))).toEqual([]);
  });
});

describe('protobuf encoding', () => {
  it('keeps zero values of pointer fields and drops those of plain fields', () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', generation: 0 },
      spec: { replicas: 0, paused: false, minReadySeconds: 0 },
    };
    expect(decodeKubernetesProtobuf(encodeKubernetesProtobuf(deployment))).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { replicas: 0 },
    });
  });

  it('encodes and decodes lists with their list metadata', () => {
    const list = {
      apiVersion: 'v1',
      kind: 'ConfigMapList',
      metadata: { resourceVersion: '12' },
      items: [{ metadata: { name: 'a' }, data: { k: 'v' } }, { metadata: { name: 'b' } }],
    };
    expect(decodeKubernetesProtobuf(encodeKubernetesProtobuf(list))).toEqual(list);
  });

  it('names a value of the wrong type or a free-form field it cannot carry', () => {
    const pod = (spec: object) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec });
    expect(() => encodeKubernetesProtobuf(pod({ nodeName: 3 }))).toThrow(/Pod\.spec\.nodeName: expected a string/);
    expect(() => encodeKubernetesProtobuf(pod({ affinity: {} }))).toThrow(/Pod\.spec\.affinity: this server cannot/);
    expect(() => encodeKubernetesProtobuf({ apiVersion: 'x/v1', kind: 'Widget' })).toThrow(/Kind=Widget/);
  });
});
