import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { flavorDirectory } from './data-dir.ts';
import { flavorOfResources } from './persistence.ts';

describe('flavorDirectory: each flavor its own files in one --data-dir', () => {
  it.each([
    ['orch', undefined, '.orch'],
    ['orch', 'orch', '.orch'],
    ['kubernetes', 'orch', join('.orch', 'kubernetes')],
    ['kubernetes', 'kubernetes', '.orch'],
    ['orch', 'kubernetes', join('.orch', 'orch')],
  ] as const)('%s in a directory of %s → %s', (flavor, owner, expected) => {
    expect(flavorDirectory('.orch', flavor, owner)).toBe(expected);
  });
});

describe("flavorOfResources: an older store's flavor, from the resources it keeps objects of", () => {
  it.each([
    [[], undefined],
    [[['v1/namespaces', 4]], undefined],
    [
      [
        ['v1/namespaces', 4],
        ['rbac.authorization.orch.io/v1/clusterroles', 60],
      ],
      'orch',
    ],
    [
      [
        ['v1/namespaces', 4],
        ['rbac.authorization.k8s.io/v1/clusterroles', 60],
      ],
      'kubernetes',
    ],
    // A store both flavors wrote to (before they were kept apart): the one with more objects of its own.
    [
      [
        ['rbac.authorization.orch.io/v1/clusterroles', 60],
        ['certificates.orch.io/v1/certificatesigningrequests', 2],
        ['rbac.authorization.k8s.io/v1/clusterroles', 61],
      ],
      'orch',
    ],
    [[['apps/v1/statefulsets', 3]], undefined],
    [[['example.com/v1/widgets', 3]], undefined],
  ] as const)('%j → %s', (counts, expected) => {
    expect(flavorOfResources(new Map(counts as readonly (readonly [string, number])[]))).toBe(expected);
  });
});
