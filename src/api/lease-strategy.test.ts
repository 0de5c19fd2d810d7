import { describe, expect, it } from 'vitest';
import { OLDEST_EMULATION_VERSION, validateCoordinatedLeaseStrategy } from './lease-strategy.ts';

describe('validateCoordinatedLeaseStrategy', () => {
  it.each([OLDEST_EMULATION_VERSION, 'example.com/custom', 'a.b/C-1'])('accepts %s', (strategy) => {
    expect(validateCoordinatedLeaseStrategy(strategy, 'spec.strategy')).toEqual([]);
  });

  it.each([
    ['Newest', 'spec.strategy.strategy: Unsupported value: "Newest": supported values: "OldestEmulationVersion"'],
    [
      'Example.com/x',
      `spec.strategy.strategy: Invalid value: "Example.com/x": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    ],
    ['example.com/', 'spec.strategy.strategy: Invalid value: "example.com/": name part must be non-empty'],
  ])('refuses %s one level below the path, as the reference does', (strategy, message) => {
    expect(validateCoordinatedLeaseStrategy(strategy, 'spec.strategy').map((e) => e.message)).toContain(message);
  });
});
