import type { CommandContext } from '../context.js';
import { type DiffOptions, showDiff } from '../review/diff.js';
import { openRun } from '../run/open.js';

/** `agentbox diff <run> [--stat | --name-only] [--color=<when>] [--no-pager]`. */
export async function diff(ctx: CommandContext, ref: string, options: DiffOptions): Promise<number> {
  const { root, run } = await openRun(ctx.cwd, ref, ctx.env);
  await showDiff(ctx, root, run, options);
  return 0;
}
