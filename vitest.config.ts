import { defineConfig } from 'vitest/config';

// Two groups, one after the other: `unit` (pure functions and in-process commands on real temp
// repos; the fast loop), then `e2e` (the built bin against the real Claude Code CLI and the
// scripted model), two files at a time. The fault suite (20 runs at once, processes killed at
// random points) is one of them: it had the machine to itself until its waits were made for a
// loaded machine (issue 36: three loaded passes with a second whole suite beside it); alone it
// added its 100-115 s to the wall time. `npm test` runs both.
// NOTE: two e2e files at a time: 479 s of vitest for 673 s of test time, 8.5 minutes from a fresh
// clone on an idle 2-core machine. Each file has its own repositories, model server, HOME and
// process tag, so they do not meet; a test must not change the checkout itself (pack.test.ts packs
// with --ignore-scripts: `prepare` would rebuild dist/ under the file beside it).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          testTimeout: 30_000,
          // Two at a time, as the e2e files: vitest's default is one worker fewer than the cores,
          // one on a 2-core machine, and the unit files wait mostly on git and child processes.
          // NOTE: measured on an idle 2-core machine: 227 s with one worker, 118 s with two.
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 60_000,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
