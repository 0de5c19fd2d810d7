import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'controllers/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most integration suites wait on servers, daemons and timers more than they compute: two files at a time
    // keep both cores of the CI machine busy.
    maxWorkers: 2,
  },
});
