import type { CommandContext } from '../context.js';
import { readRun, resolveRun } from '../ledger/index.js';
import { loadRunContext } from '../run/begin/context.js';
import { awaitHandOver } from '../run/detach.js';
import { revisionOf, revisionTurn } from '../run/revise.js';
import { runHere } from '../run/start.js';

/**
 * The detached worker's entry (`agentbox __exec <run>`): runs a run that `--detach` created, or
 * with `--revision` goes on in its session with the revision `agentbox revise --detach` began.
 */
export async function exec(
  ctx: CommandContext,
  ref: string,
  options: { revision?: boolean } = {},
): Promise<number> {
  // The command that started this worker records it first: until then the state is its to write.
  await awaitHandOver(ctx.terminal?.input);
  const rc = await loadRunContext(ctx);
  const name = resolveRun(rc.ledger, ref);
  if (!options.revision) return runHere(ctx, rc, name, true, undefined, undefined, true);
  const { dir, state } = readRun(rc.ledger, name);
  const message = revisionTurn(dir, revisionOf(state));
  return runHere(ctx, rc, name, true, { message }, undefined, true);
}
