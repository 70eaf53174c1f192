import type { CommandContext } from '../context.js';
import { type RunOptions, startRun } from '../run/start.js';

/** `agentbox review "<request>"`: reviews code, read-only; the review goes to report.md (the run itself: src/run/start.ts). */
export function review(ctx: CommandContext, request: string, options: RunOptions): Promise<number> {
  return startRun(ctx, 'review', request, options);
}
