import type { CommandContext } from '../context.js';
import { type PushFlags, pushAfter } from '../remote/after-run.js';
import { type RunOptions, startRun } from '../run/start.js';
import { withCiExit } from './ci-exit.js';

/** `agentbox scout "<question>"`: investigates a question, read-only; the answer goes to report.md (the run itself: src/run/start.ts). */
export function scout(
  ctx: CommandContext,
  question: string,
  options: RunOptions & PushFlags,
): Promise<number> {
  // With --push it is published when it ends; in CI a failed run exits with its failure kind's
  // code (src/commands/ci-exit.ts).
  return withCiExit(ctx, () => pushAfter(ctx, options, (o) => startRun(ctx, 'scout', question, o)));
}
