import type { CommandContext } from '../context.js';
import { assertHuman } from '../gate/gate.js';
import { readRun, resolveRun, runIdOf } from '../ledger/index.js';
import { loadRunContext } from '../run/begin/context.js';
import { continueSession } from '../run/continue.js';
import { resumeBlocker } from '../run/resume.js';

export interface ResumeOptions {
  readonly force?: boolean;
  readonly json?: boolean;
}

/**
 * `agentbox resume <run> ["<more>"]`: continues a CRASHED, ABORTED or STALLED run in the same
 * session (`--resume <session_id>`, never `--continue`) and the same envelope, appending to the
 * same stream log; a run that cannot go on as it is is rolled back and replayed. Refuses when
 * today's configuration would give the run a different envelope, unless --force.
 */
export async function resume(
  ctx: CommandContext,
  ref: string,
  more: string | undefined,
  options: ResumeOptions,
): Promise<number> {
  assertHuman(ctx.env, 'resume', ctx.cwd);
  const rc = await loadRunContext(ctx);
  const name = resolveRun(rc.ledger, ref);
  const replay = await resumeBlocker(readRun(rc.ledger, name), ctx.env);
  const rest = {
    force: options.force === true,
    json: options.json === true,
    ...(more === undefined ? {} : { more }),
  };
  if (replay) {
    if (!options.json) ctx.io.out(`${name} cannot be resumed as it is: ${replay.reason}\n`);
    const { carryOut } = await import('../recover/recover.js');
    return carryOut(ctx, rc, name, replay, rest);
  }
  return continueSession(ctx, rc, name, {
    command: `agentbox resume ${runIdOf(name)}`,
    event: 'resume',
    ...rest,
  });
}
