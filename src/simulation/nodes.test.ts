import { describe, expect, it } from 'vitest';
import { FLAVORS, naming } from '../api/naming.ts';
import type { Pod } from '../api/types/core.ts';
import { terminationDelayMs } from './nodes.ts';

const pod = (graceSeconds: number | undefined, annotation: string | undefined, flavor = FLAVORS[0]): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'p',
    deletionGracePeriodSeconds: graceSeconds,
    ...(annotation === undefined ? {} : { annotations: { [naming(flavor).annotations.terminationDelay]: annotation } }),
  },
});

describe('terminationDelayMs', () => {
  it.each([
    ['the default delay inside the grace period', 30, undefined, 1000],
    ['the annotation', 30, '250ms', 250],
    ['the grace period caps the default', 0, undefined, 0],
    ['the grace period caps the annotation', 2, '1m', 2000],
    ['ignore-sigterm waits the whole grace period', 30, 'ignore-sigterm', 30_000],
    ['ignore-sigterm with no grace period', 0, 'ignore-sigterm', 0],
    ['a bad value falls back to the default', 30, 'soon', 1000],
    ['a negative value falls back to the default', 30, '-1s', 1000],
    ['no grace period recorded counts as none', undefined, '1s', 0],
  ] as const)('%s', (_what, grace, annotation, want) => {
    for (const flavor of FLAVORS) expect(terminationDelayMs(naming(flavor), pod(grace, annotation, flavor))).toBe(want);
  });
});
