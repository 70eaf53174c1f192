import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { findGroup } from '../group/resolve.js';
import { runGroupHere } from '../group/start.js';
import { loadRunContext } from '../run/begin/context.js';
import { awaitHandOver } from '../run/detach.js';

/** A detached group's worker (`agentbox __exec-group <group>`): runs every attempt of it. */
export async function execGroup(ctx: CommandContext, ref: string): Promise<number> {
  // The command that started this worker records it first: until then the state is its to write.
  await awaitHandOver(ctx.terminal?.input);
  const rc = await loadRunContext(ctx);
  const name = findGroup(rc.ledger, ref);
  if (!name) throw new AgentboxError('RUN_NOT_FOUND', `no group ${ref} in ${rc.ledger.dir}`);
  return runGroupHere(ctx, rc, name);
}
