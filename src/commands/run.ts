import type { CommandContext } from '../context.js';
import { resolveRun } from '../ledger/index.js';
import { type PushFlags, pushAfter } from '../remote/after-run.js';
import { loadRunContext } from '../run/context.js';
import { type RunOptions, runHere, startRun } from '../run/start.js';
import type { HeadlessType } from '../run/tier.js';

export const scout = (ctx: CommandContext, task: string, options: RunOptions & PushFlags) =>
  pushAfter(ctx, options, (o) => startRun(ctx, 'scout', task, o));
export const plan = (ctx: CommandContext, task: string, options: RunOptions & PushFlags) =>
  pushAfter(ctx, options, (o) => startRun(ctx, 'plan', task, o));
export const fix = (ctx: CommandContext, task: string, options: RunOptions & PushFlags) =>
  pushAfter(ctx, options, (o) => startRun(ctx, 'fix', task, o));
export const review = (ctx: CommandContext, task: string, options: RunOptions & PushFlags) =>
  pushAfter(ctx, options, (o) => startRun(ctx, 'review', task, o));

export type { HeadlessType };

/** The detached worker's entry (`agentbox __exec <run>`): runs a run that `--detach` created. */
export async function exec(ctx: CommandContext, ref: string): Promise<number> {
  const rc = await loadRunContext(ctx);
  return runHere(ctx, rc, resolveRun(rc.ledger, ref), true, undefined, undefined, true);
}
