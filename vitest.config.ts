import { defineConfig } from 'vitest/config';

/** Two-substrate suites (test/support/substrate.ts): in both projects. */
const E2E = 'test/e2e/**/*.test.ts';
/**
 * Suites that hold the daemon to wall-clock bounds (a rolling restart leaves no shard unheld for a lease): alone, so
 * that a neighbour's burst of CPU on the 2-core machine does not decide them.
 */
const ALONE = ['test/sharding-e2e.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most integration suites wait on servers, daemons and timers more than they compute: two files at a time
    // keep both cores of the CI machine busy.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'embedded',
          include: ['src/**/*.test.ts', 'controllers/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: ['**/node_modules/**', 'test/cluster/**', ...ALONE],
          provide: { substrate: 'embedded' },
        },
      },
      {
        extends: true,
        test: {
          name: 'alone',
          include: ALONE,
          provide: { substrate: 'embedded' },
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
      {
        // Against one real cluster shared by the whole run: its suites one at a time (their daemons would fight over
        // one Lease and their figures mix), after the embedded project so that the cluster has the cores to itself.
        extends: true,
        test: {
          name: 'real',
          include: [E2E, 'test/cluster/**/*.test.ts'],
          provide: { substrate: 'real' },
          globalSetup: ['test/cluster/global-setup.ts'],
          fileParallelism: false,
          sequence: { groupOrder: 1 },
          testTimeout: 120_000,
          hookTimeout: 240_000,
        },
      },
    ],
  },
});
