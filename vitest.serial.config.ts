import { defineConfig } from 'vitest/config';

/**
 * The fault-injection smoke run and the benchmark smoke run: they start processes, cut connections and
 * measure, so they run after the parallel suite, one file at a time.
 */
export default defineConfig({
  test: {
    include: ['test/chaos/**/*.test.ts', 'test/bench/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: false,
    passWithNoTests: true,
  },
});
