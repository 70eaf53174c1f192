/**
 * Nothing of the hooks bench is left behind: every process carries the bench's tag and is reaped,
 * and every piece of the fixture registers its removal in `undo` when it is made. Importing this
 * module installs the handlers (before the fixture is built: bench/hooks/fixture.ts imports it).
 */
import type { ChildProcess } from 'node:child_process';
import { killWithEnv, processesWithEnv } from '../../test/helpers/processes.js';
import { BENCH_TAG, BENCH_VAR, RUN_VAR } from './config.js';

export const live: {
  /** The claude session now running. */
  current?: { child: ChildProcess; mark: string };
  /** Ends the model server's process (see startModelChild), once it runs. */
  closeModel?: () => Promise<void>;
} = {};
/** What to undo at the end, in reverse order: each piece of the fixture registers itself when made. */
export const undo: (() => unknown)[] = [];

/** Kills claude's process group and anything still carrying this run's mark (Bash tool children). */
export function reap(run: { child: ChildProcess; mark: string }): void {
  if (run.child.pid !== undefined) {
    try {
      process.kill(-run.child.pid, 'SIGKILL');
    } catch {
      // ESRCH: the group is gone.
    }
  }
  killWithEnv(RUN_VAR, run.mark);
}

let cleaned = false;
/** Reaps every process of the bench (returning those still alive) and removes the fixture. */
export async function cleanup(): Promise<string[]> {
  if (cleaned) return [];
  cleaned = true;
  if (live.current) reap(live.current);
  // The model server (and its esbuild) go first, asked to: they are not left behind.
  await live.closeModel?.();
  const left = processesWithEnv(BENCH_VAR, BENCH_TAG).map((p) => `${p.pid} ${p.cmdline}`);
  killWithEnv(BENCH_VAR, BENCH_TAG);
  for (const step of undo.reverse()) {
    try {
      await step();
    } catch (error) {
      console.error(`cleanup: ${(error as Error).message}`);
    }
  }
  return left;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}
// A fixture that cannot be built is a broken setup too. NOTE: cleaning up comes first: with the
// output gone (`| head`), printing throws again.
let crashed = false;
process.on('uncaughtException', (error) => {
  if (crashed) return;
  crashed = true;
  void cleanup().finally(() => {
    console.error(`\nbench setup broken: ${error.message}`);
    process.exit(2);
  });
});
