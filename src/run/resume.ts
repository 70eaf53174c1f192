import fs from 'node:fs';
import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { readRun, resolveRun, runIdOf } from '../ledger/index.js';
import { isAlive } from '../process/reap.js';
import { loadRunContext } from './context.js';
import { continueSession } from './continue.js';
import { EventLog } from './events.js';
import { assertHuman } from './gate.js';

export interface ResumeOptions {
  readonly force?: boolean;
  readonly json?: boolean;
}

const RESUMABLE = new Set(['CRASHED', 'ABORTED', 'STALLED']);

/**
 * `agentbox resume <run> ["<more>"]`: continues a CRASHED, ABORTED or STALLED run in the same
 * session (`--resume <session_id>`, never `--continue`) and the same envelope, appending to the
 * same stream log. Refuses when today's configuration would give the run a different envelope,
 * unless --force.
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
  const run = readRun(rc.ledger, name);
  const state = run.state;
  if (!state) throw new AgentboxError('RUN_CORRUPT', `run ${name} has no state.json`);
  if ((state.status === 'ACTIVE' || state.status === 'STALLED') && isAlive(state.pid, state.pid_start)) {
    throw new AgentboxError('USAGE', `run ${name} is still running (pid ${state.pid})`, {
      hint:
        state.status === 'STALLED'
          ? `its supervisor is alive but has not reported for a while; end it first (kill ${state.pid})`
          : 'wait for it, or stop it first',
    });
  }
  if (state.status !== 'ACTIVE' && !RESUMABLE.has(state.status)) {
    throw new AgentboxError(
      'USAGE',
      `run ${name} is ${state.status}; only CRASHED, ABORTED or STALLED runs can be resumed`,
      {
        hint: 'start a new run for more work',
      },
    );
  }
  // A run that crashed with its session or worktree in no state to go on is rolled back and
  // replayed instead: `claude --resume` of a session without a conversation exits 1.
  const { decideRecovery } = await import('../recover/decide.js');
  const { recoveryFacts } = await import('../recover/facts.js');
  const action = decideRecovery({ ...(await recoveryFacts(run.dir, run.meta, state, ctx.env)), attempts: 0 });
  if (action.kind === 'rollback_replay') {
    const { carryOut } = await import('../recover/recover.js');
    new EventLog(run.dir).append({
      event: 'recover',
      action: action.kind,
      reason: action.reason,
      via: 'resume',
    });
    if (!options.json) ctx.io.out(`${name} cannot be resumed as it is: ${action.reason}\n`);
    return carryOut(ctx, rc, name, action, {
      json: options.json === true,
      force: options.force === true,
      ...(more === undefined ? {} : { more }),
    });
  }
  if (!state.session_id) {
    throw new AgentboxError(
      'USAGE',
      `run ${name} never started a Claude Code session, so there is nothing to resume`,
      {
        hint: 'start it again as a new run',
      },
    );
  }
  if (state.worktree_path && !fs.existsSync(state.worktree_path)) {
    throw new AgentboxError('USAGE', `the worktree of ${name} is gone: ${state.worktree_path}`, {
      hint: 'its changes up to the stop are in changes.patch (agentbox merge); start a new run to continue',
    });
  }
  return continueSession(ctx, rc, name, {
    command: `agentbox resume ${runIdOf(name)}`,
    event: 'resume',
    force: options.force === true,
    json: options.json === true,
    ...(more === undefined ? {} : { more }),
  });
}
