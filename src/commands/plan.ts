import type { CommandContext } from '../context.js';
import { type RunOptions, startRun } from '../run/start.js';

/** `agentbox plan "<goal>"`: works out a plan, read-only; it goes to plan.md (the run itself: src/run/start.ts). */
export function plan(ctx: CommandContext, goal: string, options: RunOptions): Promise<number> {
  return startRun(ctx, 'plan', goal, options);
}
