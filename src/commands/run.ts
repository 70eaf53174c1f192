import type { CommandContext } from '../context.js';
import { resolveRun } from '../ledger/index.js';
import { loadRunContext } from '../run/context.js';
import { type RunOptions, runHere, startRun } from '../run/start.js';
import type { HeadlessType } from '../run/tier.js';
import { withCiExit } from './ci-exit.js';

// In CI a failed run exits with its failure kind's code (src/commands/ci-exit.ts).
export const scout = (ctx: CommandContext, task: string, options: RunOptions) =>
  withCiExit(ctx, () => startRun(ctx, 'scout', task, options));
export const plan = (ctx: CommandContext, task: string, options: RunOptions) =>
  withCiExit(ctx, () => startRun(ctx, 'plan', task, options));
export const fix = (ctx: CommandContext, task: string, options: RunOptions) =>
  withCiExit(ctx, () => startRun(ctx, 'fix', task, options));
export const review = (ctx: CommandContext, task: string, options: RunOptions) =>
  withCiExit(ctx, () => startRun(ctx, 'review', task, options));

export type { HeadlessType };

/** The detached worker's entry (`agentbox __exec <run>`): runs a run that `--detach` created. */
export async function exec(ctx: CommandContext, ref: string): Promise<number> {
  const rc = await loadRunContext(ctx);
  return runHere(ctx, rc, resolveRun(rc.ledger, ref), true, undefined, undefined, true);
}
