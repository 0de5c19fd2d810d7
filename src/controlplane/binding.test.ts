import { describe, expect, it } from 'vitest';
import type { Pod } from '../api/types/core.ts';
import { type Binding, boundPod, validateBinding } from './binding.ts';

const NOW = new Date('2026-11-28T12:00:00Z');
const EARLIER = '2026-11-28T11:00:00Z';
const binding = (o: Partial<Binding> = {}): Binding => ({
  metadata: { name: 'p' },
  target: { kind: 'Node', name: 'n1' },
  ...o,
});
const pod = (spec: Partial<NonNullable<Pod['spec']>> = {}, o: Partial<Pod> = {}): Pod => ({
  metadata: { name: 'p', namespace: 'ns' },
  spec: { containers: [], ...spec },
  ...o,
});

describe('boundPod', () => {
  it.each<[string, Pod, string]>([
    ['an assigned pod', pod({ nodeName: 'n0' }), 'pod p is already assigned to node "n0"'],
    [
      'a pod being deleted',
      pod({}, { metadata: { name: 'p', deletionTimestamp: EARLIER } }),
      'pod p is being deleted, cannot be assigned to a host',
    ],
    ['a gated pod', pod({ schedulingGates: [{ name: 'g' }] }), 'pod p has non-empty .spec.schedulingGates'],
  ])('refuses %s', (_, p, refusal) => {
    expect(boundPod(p, binding(), NOW)).toBe(refusal);
  });

  it('sets the node, PodScheduled (new, or its transition time kept) and leaves absent metadata absent', () => {
    const fresh = boundPod(pod(), binding(), NOW) as Pod;
    expect(fresh.spec?.nodeName).toBe('n1');
    expect(fresh.metadata.annotations).toBeUndefined();
    expect(fresh.status?.conditions).toEqual([
      { type: 'PodScheduled', status: 'True', lastTransitionTime: '2026-11-28T12:00:00Z' },
    ]);
    const scheduled = { type: 'PodScheduled', status: 'True' as const, lastTransitionTime: EARLIER };
    const again = boundPod(pod({}, { status: { conditions: [scheduled] } }), binding(), NOW) as Pod;
    expect(again.status?.conditions).toEqual([scheduled]);
    const unschedulable = { ...scheduled, status: 'False' as const, reason: 'Unschedulable' };
    const moved = boundPod(pod({}, { status: { conditions: [unschedulable] } }), binding(), NOW) as Pod;
    expect(moved.status?.conditions?.[0]).toEqual({ ...fresh.status?.conditions?.[0] });
  });
});

describe('validateBinding', () => {
  it.each<[string, Binding['target'], string[]]>([
    ['a node', { kind: 'Node', name: 'n1' }, []],
    ['an unnamed kind', { name: 'n1' }, []],
    ['another kind', { kind: 'Pod', name: 'x' }, ['target.kind']],
    ['no name', { kind: 'Node' }, ['target.name']],
    ['a bad node name', { name: 'Not_A_Node' }, ['target.name']],
  ])('%s', (_, target, fields) => {
    expect(validateBinding(binding({ target })).map((e) => e.field)).toEqual(fields);
  });
});
