import type { CommandContext } from '../context.js';
import { resolveRun } from '../ledger/index.js';
import { loadRunContext } from '../run/begin/context.js';
import { awaitHandOver } from '../run/detach.js';
import { runHere } from '../run/start.js';

/** The detached worker's entry (`agentbox __exec <run>`): runs a run that `--detach` created. */
export async function exec(ctx: CommandContext, ref: string): Promise<number> {
  // The command that started this worker records it first: until then the state is its to write.
  await awaitHandOver(ctx.terminal?.input);
  const rc = await loadRunContext(ctx);
  return runHere(ctx, rc, resolveRun(rc.ledger, ref), true, undefined, undefined, true);
}
