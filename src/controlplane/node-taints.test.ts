import { describe, expect, it } from 'vitest';
import { naming } from '../api/naming.ts';
import type { Node, Taint } from '../api/types/core.ts';
import { conditionTaints } from './node-taints.ts';

const n = naming('kubernetes');
const NOW = '2026-11-28T04:00:00Z';
const notReady: Taint = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };
const unreachable: Taint = { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' };
const other: Taint = { key: 'example.com/gpu', value: 'a100', effect: 'NoSchedule' };
const notReadyExecute: Taint = { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' };

const unschedulable: Taint = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' };

const node = (taints: Taint[] | undefined, conditions: [string, string][], cordoned = false): Node => ({
  metadata: { name: 'n' },
  spec: { ...(taints ? { taints } : {}), ...(cordoned ? { unschedulable: true } : {}) },
  status: { conditions: conditions.map(([type, status]) => ({ type, status: status as 'True' })) },
});
const added = (t: Taint) => ({ ...t, timeAdded: NOW });

describe('conditionTaints', () => {
  it.each<[string, Taint[] | undefined, [string, string][], Taint[] | undefined]>([
    ['Ready True removes not-ready', [notReady], [['Ready', 'True']], []],
    [
      'Ready True keeps other taints and NoExecute ones',
      [other, notReady, notReadyExecute],
      [['Ready', 'True']],
      [other, notReadyExecute],
    ],
    ['Ready True and untainted: nothing to do', undefined, [['Ready', 'True']], undefined],
    ['Ready False adds not-ready', [other], [['Ready', 'False']], [other, added(notReady)]],
    ['Ready False with not-ready: nothing to do', [notReady], [['Ready', 'False']], undefined],
    ['Ready Unknown swaps not-ready for unreachable', [notReady], [['Ready', 'Unknown']], [added(unreachable)]],
    ['no Ready condition leaves not-ready', [notReady], [], undefined],
    [
      'no Ready condition, a pressure one',
      [notReady],
      [['DiskPressure', 'True']],
      [notReady, added({ key: 'node.kubernetes.io/disk-pressure', effect: 'NoSchedule' })],
    ],
    [
      'pressure gone removes its taint',
      [{ key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' }],
      [['MemoryPressure', 'False']],
      [],
    ],
    ['an unknown condition is left alone', [other], [['Custom', 'True']], undefined],
  ])('%s', (_, taints, conditions, expected) => {
    expect(conditionTaints(node(taints, conditions), n, NOW)).toEqual(expected);
  });

  it.each<[string, Taint[] | undefined, boolean, Taint[] | undefined]>([
    ['a cordon adds unschedulable', [other], true, [other, added(unschedulable)]],
    ['a cordoned node with the taint: nothing to do', [unschedulable], true, undefined],
    ['uncordoning removes it', [other, unschedulable], false, [other]],
  ])('%s', (_, taints, cordoned, expected) => {
    expect(conditionTaints(node(taints, [['Ready', 'True']], cordoned), n, NOW)).toEqual(expected);
  });

  it('names the taints in the flavor’s domain', () => {
    expect(conditionTaints(node(undefined, [['Ready', 'False']]), naming('orch'), NOW)).toEqual([
      { key: 'node.orch.io/not-ready', effect: 'NoSchedule', timeAdded: NOW },
    ]);
  });
});
