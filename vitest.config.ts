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
  },
});
