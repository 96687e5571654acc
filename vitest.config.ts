import { defineConfig } from 'vitest/config';
import { scaledMs } from './test/helpers/timing.ts';

// Test and hook timeouts are time windows like any other: scaled by DELEGATE_TEST_TIME_SCALE
// (or CI), see test/helpers/timing.ts.
export default defineConfig({
  test: {
    testTimeout: scaledMs(5_000),
    hookTimeout: scaledMs(10_000),
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          testTimeout: scaledMs(30_000),
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/e2e/global-setup.ts'],
          testTimeout: scaledMs(120_000),
          hookTimeout: scaledMs(300_000),
          fileParallelism: false,
        },
      },
    ],
  },
});
