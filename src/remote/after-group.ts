import type { CommandContext } from '../context.js';
import { AgentboxError, isAgentboxError } from '../errors.js';
import type { Ledger } from '../ledger/paths.js';
import { type SharedGroup, shareGroup } from './share-group.js';

/**
 * What `fix "<task>" --attempts N --push` does once its group ends: publishes the group whole (its
 * folder and every attempt, one atomic push) and says so. Returns the attempts it published, which
 * `--push` then leaves out of the runs it publishes one by one. A push that fails fails the command.
 */
export async function pushGroupAfter(
  ctx: CommandContext,
  ledger: Ledger,
  group: string,
  remote: string,
  json: boolean,
): Promise<string[]> {
  let shared: SharedGroup;
  try {
    shared = await shareGroup(ledger, group, remote, { env: ctx.env });
  } catch (error) {
    if (!isAgentboxError(error)) throw error;
    throw new AgentboxError(
      'GIT_FAILED',
      `the group ${group} ended but could not be pushed: ${error.message}`,
      {
        hint: `${error.hint ?? 'check the remote'}; then: agentbox push ${group.slice(-6)} ${remote}`,
      },
    );
  }
  const line = `published group ${group} to ${remote} with its ${shared.attempts.length} attempt(s)${
    shared.branches.length ? ` and their branches` : ''
  }\n`;
  // --json keeps stdout one document: the line goes to stderr then.
  if (json) ctx.io.err(line);
  else ctx.io.out(line);
  return shared.attempts.map((a) => a.run);
}
