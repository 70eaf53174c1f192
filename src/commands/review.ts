import type { CommandContext } from '../context.js';
import { type PushFlags, pushAfter } from '../remote/after-run.js';
import { type RunOptions, startRun } from '../run/start.js';
import { withCiExit } from './ci-exit.js';

/** `agentbox review "<request>"`: reviews code, read-only; the review goes to report.md (the run itself: src/run/start.ts). */
export function review(
  ctx: CommandContext,
  request: string,
  options: RunOptions & PushFlags,
): Promise<number> {
  // With --push it is published when it ends; in CI a failed run exits with its failure kind's
  // code (src/commands/ci-exit.ts).
  return withCiExit(ctx, () => pushAfter(ctx, options, (o) => startRun(ctx, 'review', request, o)));
}
