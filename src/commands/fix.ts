import type { CommandContext } from '../context.js';
import { type PushFlags, pushAfter } from '../remote/after-run.js';
import { type RunOptions, startRun } from '../run/start.js';
import { withCiExit } from './ci-exit.js';

/** `agentbox fix "<task>"`: changes code in an isolated git worktree; the result is changes.patch (the run itself: src/run/start.ts). */
export function fix(ctx: CommandContext, task: string, options: RunOptions & PushFlags): Promise<number> {
  // With --push it is published when it ends; in CI a failed run exits with its failure kind's
  // code (src/commands/ci-exit.ts).
  return withCiExit(ctx, () => pushAfter(ctx, options, (o) => startRun(ctx, 'fix', task, o)));
}
