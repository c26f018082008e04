import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/** Unit, conformance and integration tests: files run in parallel, each isolated in its own schema/queue/stream. */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/chaos/**', 'test/bench/**', 'node_modules/**'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest's default is one worker fewer than the CPUs: one on the 2-core CI machine. The tests mostly wait on
    // the local servers, so two run side by side there in about half the time (measured: 582 s against 1,123 s).
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
