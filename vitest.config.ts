import { defineConfig } from 'vitest/config';

// Three groups, one after another: `unit` (pure functions and in-process commands on real temp
// repos; the fast loop), then `e2e` (the built bin against the real Claude Code CLI and the
// scripted model), two files at a time, then `e2e-alone`: the fault suite, which starts 20 runs at
// once and kills processes at random points, with the machine to itself. `npm test` runs all.
// NOTE: two e2e files at a time: 479 s of vitest for 673 s of test time, 8.5 minutes from a fresh
// clone on an idle 2-core machine. Each file has its own repositories, model server, HOME and
// process tag, so they do not meet; a test must not change the checkout itself (pack.test.ts packs
// with --ignore-scripts: `prepare` would rebuild dist/ under the file beside it).
const ALONE = ['test/e2e/faults.test.ts'];
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
          exclude: ALONE,
          testTimeout: 120_000,
          hookTimeout: 60_000,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          name: 'e2e-alone',
          include: ALONE,
          testTimeout: 120_000,
          hookTimeout: 60_000,
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
