import type { CommandContext } from '../context.js';
import { type RunOptions, startRun } from '../run/start.js';

/** `agentbox fix "<task>"`: changes code in an isolated git worktree; the result is changes.patch (the run itself: src/run/start.ts). */
export function fix(ctx: CommandContext, task: string, options: RunOptions): Promise<number> {
  return startRun(ctx, 'fix', task, options);
}
