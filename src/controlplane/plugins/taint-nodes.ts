/**
 * The reference's TaintNodesByCondition admission: a Node is created with the not-ready NoSchedule taint (unless
 * it has one already), so nothing is scheduled onto it before it reports Ready; the node lifecycle part of the
 * plane (`../node-storage-controllers.ts`) removes it then.
 */
import type { Naming } from '../../api/naming.ts';
import type { Node } from '../../api/types/core.ts';
import type { AdmissionPlugin } from '../admission.ts';
import { notReadyTaint } from '../node-taints.ts';

export function taintNodesByCondition(n: Naming): AdmissionPlugin {
  const taint = notReadyTaint(n);
  return {
    name: 'TaintNodesByCondition',
    admit(a) {
      if (a.operation !== 'CREATE' || a.subresource || a.rt.group !== '' || a.rt.kind !== 'Node' || !a.object) return;
      const node = a.object as Node;
      const taints = node.spec?.taints ?? [];
      if (taints.some((t) => t.key === taint.key && t.effect === taint.effect)) return;
      node.spec = { ...node.spec, taints: [...taints, { ...taint }] };
    },
  };
}
