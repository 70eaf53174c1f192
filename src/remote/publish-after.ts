import type { CommandContext } from '../context.js';
import { AgentboxError, isAgentboxError } from '../errors.js';
import { findRepo } from '../git/repo.js';
import { openLedger } from '../ledger/paths.js';
import { ownerPid } from '../process/owner.js';
import { pushGroupAfter } from './after-group.js';
import { checkRemoteName, DEFAULT_REMOTE } from './refs.js';
import { runsStartedBy, type Shared, shareRun } from './share.js';
import { groupsStartedBy } from './share-group.js';

/**
 * pushAfter with `--push` given (src/remote/after-run.ts): runs the command as it is, then
 * publishes the run it created, whatever its outcome (a failed run is worth seeing too); a group
 * (`fix --attempts N`) is published whole (pushGroupAfter). The run command is not told: its runs
 * are found as those this process supervised (see runsStartedBy), and their groups by them.
 * A push that fails makes the command fail, after the run: a CI job must not pass silently.
 */
export async function publishAfter<O extends { readonly detach?: boolean; readonly json?: boolean }>(
  ctx: CommandContext,
  options: O,
  push: true | string,
  start: (options: Omit<O, 'push'>) => Promise<number>,
): Promise<number> {
  const { push: _, ...rest } = options as O & { push?: unknown };
  const remote = checkRemoteName(push === true ? DEFAULT_REMOTE : push);
  if (options.detach) {
    throw new AgentboxError('USAGE', '--push waits for the run to end: it does not go with --detach', {
      hint: 'run it in the foreground (a CI job does), or push later: agentbox push <run>',
    });
  }
  const since = new Date();
  let code = 1;
  let failure: unknown;
  try {
    code = await start(rest);
  } catch (error) {
    failure = error;
  }
  const root = await findRepo(ctx.cwd, ctx.env).then(
    (r) => r.root,
    () => null,
  );
  const ledger = root === null ? null : tryOpen(root);
  const runs = ledger ? runsStartedBy(ledger, ownerPid(), since) : [];
  // A group goes whole (its attempts with it); the runs left are published one by one.
  const done = new Set<string>();
  for (const group of ledger ? groupsStartedBy(ledger, runs, ownerPid(), since) : []) {
    try {
      for (const run of await pushGroupAfter(ctx, ledger!, group, remote, options.json === true))
        done.add(run);
    } catch (error) {
      throw failure ?? error;
    }
  }
  for (const name of runs.filter((r) => !done.has(r))) {
    let shared: Shared;
    try {
      shared = await shareRun(ledger!, name, remote, { env: ctx.env });
    } catch (error) {
      if (failure !== undefined || !isAgentboxError(error)) throw failure ?? error;
      throw new AgentboxError(
        'GIT_FAILED',
        `the run ${name} ended but could not be pushed: ${error.message}`,
        {
          hint: `${error.hint ?? 'check the remote'}; then: agentbox push ${name.slice(-6)} ${remote}`,
        },
      );
    }
    const line = `published ${name} to ${remote}${shared.branch ? ` with its branch agentbox/${name}` : ''}\n`;
    // --json keeps stdout one document: the line goes to stderr then.
    if (options.json) ctx.io.err(line);
    else ctx.io.out(line);
  }
  if (failure !== undefined) throw failure;
  return code;
}

function tryOpen(root: string) {
  try {
    return openLedger(root);
  } catch {
    return null;
  }
}
