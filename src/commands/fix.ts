import type { CommandContext } from '../context.js';
import { type GroupOptions, startGroup, wantsGroup } from '../group/start.js';
import { type PushFlags, pushAfter } from '../remote/after-run.js';
import { startRun } from '../run/start.js';
import { withCiExit } from './ci-exit.js';

/**
 * `agentbox fix "<task>"`: changes code in an isolated git worktree; the result is changes.patch
 * (the run itself: src/run/start.ts). With --attempts N, N such runs side by side (src/group/).
 */
export function fix(ctx: CommandContext, task: string, options: GroupOptions & PushFlags): Promise<number> {
  // With --push it is published when it ends; in CI a failed run exits with its failure kind's
  // code (src/commands/ci-exit.ts).
  const start = wantsGroup(options)
    ? startGroup
    : (c: CommandContext, t: string, o: GroupOptions) => startRun(c, 'fix', t, o);
  return withCiExit(ctx, () => pushAfter(ctx, options, (o) => start(ctx, task, o)));
}
