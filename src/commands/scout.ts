import type { CommandContext } from '../context.js';
import { type RunOptions, startRun } from '../run/start.js';

/** `agentbox scout "<question>"`: investigates a question, read-only; the answer goes to report.md (the run itself: src/run/start.ts). */
export function scout(ctx: CommandContext, question: string, options: RunOptions): Promise<number> {
  return startRun(ctx, 'scout', question, options);
}
