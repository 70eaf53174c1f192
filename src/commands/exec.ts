import type { CommandContext } from '../context.js';
import { resolveRun } from '../ledger/index.js';
import { loadRunContext } from '../run/begin/context.js';
import { runHere } from '../run/start.js';

/** The detached worker's entry (`agentbox __exec <run>`): runs a run that `--detach` created. */
export async function exec(ctx: CommandContext, ref: string): Promise<number> {
  const rc = await loadRunContext(ctx);
  return runHere(ctx, rc, resolveRun(rc.ledger, ref), true, undefined, undefined, true);
}
