import { defineConfig } from 'vitest/config';

// Two layers: `unit` (pure functions and in-process commands on real temp repos) is the fast
// loop; `e2e` drives the built bin against the real Claude Code CLI and the scripted model.
// `npm test` runs both.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 60_000,
          // Each e2e file starts real claude processes; two cores do not take more at once.
          fileParallelism: false,
        },
      },
    ],
  },
});
