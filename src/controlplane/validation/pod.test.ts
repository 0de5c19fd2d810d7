/** What a pod update may change in its spec: the reference's mutable fields, and nothing else. */
import { describe, expect, it } from 'vitest';
import { validatePodSpecUpdate } from './pod.ts';
import type { Obj } from './raw.ts';

const old: Obj = {
  containers: [{ name: 'a', image: 'i:1' }],
  initContainers: [{ name: 'setup', image: 's:1' }],
  tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
  terminationGracePeriodSeconds: -1,
  serviceAccountName: 'default',
  serviceAccount: 'default',
};
const fields = (spec: Obj) => validatePodSpecUpdate(spec, old).map((e) => e.field);

describe('validatePodSpecUpdate', () => {
  it('keeps a bound pod on its node', () => {
    expect(validatePodSpecUpdate({ ...old, nodeName: 'n2' }, { ...old, nodeName: 'n1' }).map((e) => e.field)).toEqual([
      'spec',
    ]);
  });

  it.each<[string, Obj, string[]]>([
    ['nothing', {}, []],
    ['an image', { containers: [{ name: 'a', image: 'i:2' }] }, []],
    ['an init container image', { initContainers: [{ name: 'setup', image: 's:2' }] }, []],
    ['the active deadline', { activeDeadlineSeconds: 30 }, []],
    ['a negative grace period to 1', { terminationGracePeriodSeconds: 1 }, []],
    ['a negative grace period to 2', { terminationGracePeriodSeconds: 2 }, ['spec']],
    ['an added toleration', { tolerations: [...(old.tolerations as Obj[]), { key: 'x', operator: 'Exists' }] }, []],
    [
      'a toleration time',
      { tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 }] },
      [],
    ],
    ['a removed toleration', { tolerations: [] }, ['spec.tolerations']],
    ['the deprecated account field left out', { serviceAccount: undefined }, []],
    ['an empty list for an absent one', { volumes: [] }, []],
    ['a container port', { containers: [{ name: 'a', image: 'i:1', ports: [{ containerPort: 80 }] }] }, ['spec']],
    [
      'a container added',
      {
        containers: [
          { name: 'a', image: 'i:1' },
          { name: 'b', image: 'i:1' },
        ],
      },
      ['spec'],
    ],
    ['an unset node name (only pods/binding sets it)', { nodeName: 'n1' }, ['spec']],
    ['the account', { serviceAccountName: 'other', serviceAccount: 'other' }, ['spec']],
    ['a toleration and the node selector', { tolerations: [], nodeSelector: { a: 'b' } }, ['spec.tolerations', 'spec']],
  ])('changing %s', (_, change, expected) => {
    expect(fields({ ...old, ...change })).toEqual(expected);
  });
});
