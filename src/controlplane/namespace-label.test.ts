import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../api/meta.ts';
import { isNamespaceType, withNameLabel } from './namespace-label.ts';

const LABEL = 'kubernetes.io/metadata.name';
const ns = (labels?: Record<string, string>, name = 'team'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, labels },
});

describe('the namespace name label', () => {
  it.each([
    ['no labels', undefined, { [LABEL]: 'team' }],
    ['other labels', { a: 'b' }, { a: 'b', [LABEL]: 'team' }],
    ['another name in it', { [LABEL]: 'other', a: 'b' }, { [LABEL]: 'team', a: 'b' }],
    ['an empty value', { [LABEL]: '' }, { [LABEL]: 'team' }],
  ])('is set over %s, on a copy', (_what, labels, expected) => {
    const given = ns(labels);
    const before = structuredClone(given);
    expect(withNameLabel(given, LABEL).metadata.labels).toEqual(expected);
    expect(given).toEqual(before);
  });

  it('leaves a namespace that has it as it is, and one without a name', () => {
    const labelled = ns({ [LABEL]: 'team' });
    expect(withNameLabel(labelled, LABEL)).toBe(labelled);
    const unnamed = { ...ns(), metadata: {} };
    expect(withNameLabel(unnamed, LABEL)).toBe(unnamed);
  });

  it('applies to the core Namespace only', () => {
    expect(isNamespaceType({ group: '', kind: 'Namespace' })).toBe(true);
    expect(isNamespaceType({ group: 'example.io', kind: 'Namespace' })).toBe(false);
    expect(isNamespaceType({ group: '', kind: 'Pod' })).toBe(false);
  });
});
