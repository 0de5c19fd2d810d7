import { describe, expect, it } from 'vitest';
import { generationChanged } from './generation.ts';

const obj = (labels: object, annotations: object, spec: object, status: object = {}) => ({
  metadata: { labels, annotations },
  spec,
  status,
});

describe('generationChanged', () => {
  it.each<[string, string, ReturnType<typeof obj>, ReturnType<typeof obj>, boolean]>([
    ['a spec change, any kind', 'StatefulSet', obj({}, {}, { a: 1 }), obj({}, {}, { a: 2 }), true],
    ['a label change, most kinds', 'StatefulSet', obj({}, {}, {}), obj({ x: 'y' }, {}, {}), false],
    ['a status change', 'Deployment', obj({}, {}, {}, { r: 1 }), obj({}, {}, {}, { r: 2 }), false],
    ['an annotation change of a Deployment', 'Deployment', obj({}, {}, {}), obj({}, { x: 'y' }, {}), true],
    ['a label change of a Deployment', 'Deployment', obj({}, {}, {}), obj({ x: 'y' }, {}, {}), false],
    ['a label change of an EndpointSlice', 'EndpointSlice', obj({}, {}, {}), obj({ x: 'y' }, {}, {}), true],
    ['an annotation change of an EndpointSlice', 'EndpointSlice', obj({}, {}, {}), obj({}, { x: 'y' }, {}), false],
  ])('%s', (_name, kind, old, next, expected) => {
    expect(generationChanged(kind, old, next)).toBe(expected);
  });
});
