import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { assertHuman } from '../gate/gate.js';
import { findGroup } from '../group/resolve.js';
import { readRun, resolveRun, runIdOf } from '../ledger/index.js';
import { planLines, takeableGroup, takeUpGroup, withGroupLock } from '../recover/group.js';
import { planResume } from '../recover/group-plan.js';
import { carryOut } from '../recover/recover.js';
import { loadRunContext, type RunContext } from '../run/begin/context.js';
import { continueSession } from '../run/continue.js';
import { resumeBlocker } from '../run/resume.js';
import { terminalLine } from '../util/terminal-text.js';

export interface ResumeOptions {
  readonly force?: boolean;
  readonly json?: boolean;
}

/**
 * `agentbox resume <run> ["<more>"]`: continues a CRASHED, ABORTED or STALLED run in the same
 * session (`--resume <session_id>`, never `--continue`) and the same envelope, appending to the
 * same stream log; a run that cannot go on as it is is rolled back and replayed. Refuses when
 * today's configuration would give the run a different envelope, unless --force. A group, or one
 * of its attempts, goes on through its group, in one process (resumeGroup).
 */
export async function resume(
  ctx: CommandContext,
  ref: string,
  more: string | undefined,
  options: ResumeOptions,
): Promise<number> {
  assertHuman(ctx.env, 'resume', ctx.cwd);
  const rc = await loadRunContext(ctx);
  const group = findGroup(rc.ledger, ref);
  if (group) return resumeGroup(ctx, rc, group, undefined, more, options);
  const name = resolveRun(rc.ledger, ref);
  const run = readRun(rc.ledger, name);
  const of = run.state?.summary?.group;
  const itsGroup = of ? findGroup(rc.ledger, of.id) : null;
  if (of && itsGroup) return resumeGroup(ctx, rc, itsGroup, of.attempt, more, options);
  const replay = await resumeBlocker(run, ctx.env);
  const rest = {
    force: options.force === true,
    json: options.json === true,
    ...(more === undefined ? {} : { more }),
  };
  if (replay) {
    if (!options.json) ctx.io.out(`${name} cannot be resumed as it is: ${terminalLine(replay.reason)}\n`);
    return carryOut(ctx, rc, name, replay, rest);
  }
  return continueSession(ctx, rc, name, {
    command: `agentbox resume ${runIdOf(name)}`,
    event: 'resume',
    ...rest,
  });
}

/**
 * A group taken up again in one process (`only`: that attempt alone, the others untouched): its
 * stopped and crashed attempts go on, those never started start, REVIEW and DONE are left.
 * Through the group, not alone, so that the group's budget, --first-pass, its patches and its
 * state keep counting the attempt, and one process at a time writes the group.
 */
async function resumeGroup(
  ctx: CommandContext,
  rc: RunContext,
  name: string,
  only: number | undefined,
  more: string | undefined,
  options: ResumeOptions,
): Promise<number> {
  return withGroupLock(rc, name, async () => {
    const id = runIdOf(name);
    const group = takeableGroup(rc, name, 'resume');
    const plans = await planResume(ctx.env, rc.ledger, group, only);
    const what = only === undefined ? `group ${name}` : `attempt ${only} of group ${name}`;
    if (!plans.some((p) => p.action !== 'leave')) {
      throw new AgentboxError('USAGE', `nothing to resume in ${what}:\n${planLines(plans).trimEnd()}`, {
        hint: `see it: agentbox show ${id}`,
      });
    }
    if (!options.json) ctx.io.out(`resuming ${what}\n${planLines(plans)}`);
    return takeUpGroup(ctx, rc, group, plans, {
      json: options.json === true,
      force: options.force === true,
      ...(more === undefined ? {} : { more }),
      command: `agentbox resume ${only === undefined ? id : runIdOf(plans[0]!.run ?? name)}`,
      by: 'resume',
    });
  });
}
