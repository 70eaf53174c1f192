import fs from 'node:fs';
import type { Env } from '../context.js';
import { AgentboxError } from '../errors.js';
import { EventLog } from '../ledger/events.js';
import type { RunDetails } from '../ledger/index.js';
import { moreWordsFor } from '../present/next-step.js';
import { isAlive } from '../process/reap.js';
import type { RecoveryAction } from '../recover/decide.js';

const RESUMABLE = new Set(['CRASHED', 'ABORTED', 'STALLED']);

/**
 * Whether `agentbox resume` can continue a run in its own session: a CRASHED, ABORTED or STALLED
 * run that is not running. Returns null when it can; a run that crashed with its session or
 * worktree in no state to go on gets the rollback-and-replay decision instead (recorded in its
 * events.jsonl): `claude --resume` of a session without a conversation exits 1. Throws, naming
 * the next command, when neither can be done.
 */
export async function resumeBlocker(
  run: RunDetails,
  env: Env,
): Promise<Extract<RecoveryAction, { kind: 'rollback_replay' }> | null> {
  const { name } = run;
  const state = assertResumable(run);
  const { decideRecovery } = await import('../recover/decide.js');
  const { recoveryFacts, transcriptOf } = await import('../recover/facts.js');
  const facts = { ...(await recoveryFacts(run.dir, run.meta, state, env)), attempts: 0 };
  let action = decideRecovery(facts);
  // A run stopped before claude saved its conversation (ABORTED 0.4 s in: no transcript at all) is
  // no crash, so the recovery above does not weigh it; `claude --resume` of it exits 1 ("No
  // conversation found"), and the run ended CRASHED with an empty reason. Its task is replayed in a
  // new session instead, its worktree as it is. Only a run of this machine's (a fetched one's
  // session is elsewhere, and says so below).
  if (
    state.status === 'ABORTED' &&
    state.session_id &&
    !facts.ranElsewhere &&
    run.meta.type !== 'interactive' &&
    transcriptOf(state, env) === null
  )
    action = {
      kind: 'rollback_replay',
      reason:
        'its session has no conversation to resume (it was stopped before claude saved one): the task is replayed in a new session, its worktree as it is',
      to: null,
    };
  if (action.kind === 'rollback_replay') {
    new EventLog(run.dir).append({
      event: 'recover',
      action: action.kind,
      reason: action.reason,
      via: 'resume',
    });
    return action;
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
  return null;
}

/**
 * A run `agentbox resume` may take up by its status: not running, and CRASHED, ABORTED or STALLED
 * (or ACTIVE with its process gone). Throws, naming the next command, otherwise. The web UI asks
 * it before it starts a resume in the background, where such a refusal went unseen.
 */
export function assertResumable(run: RunDetails): NonNullable<RunDetails['state']> {
  const { name, state } = run;
  if (!state) throw new AgentboxError('RUN_CORRUPT', `run ${name} has no state.json`);
  if ((state.status === 'ACTIVE' || state.status === 'STALLED') && isAlive(state.pid, state.pid_start)) {
    throw new AgentboxError('USAGE', `run ${name} is still running (pid ${state.pid})`, {
      hint:
        state.status === 'STALLED'
          ? // A stopped process (Ctrl-Z, SIGSTOP) ignores a plain kill: stop --force kills it for good.
            `its supervisor is alive but has not reported for a while; end it first: agentbox stop --force ${run.meta.run_id}`
          : 'wait for it, or stop it first',
    });
  }
  if (state.status !== 'ACTIVE' && !RESUMABLE.has(state.status)) {
    throw new AgentboxError(
      'USAGE',
      `run ${name} is ${state.status}; only CRASHED, ABORTED or STALLED runs can be resumed`,
      {
        hint: moreWordsFor(
          { status: state.status, type: run.meta.type, id: run.meta.run_id, ranOn: run.meta.origin?.host },
          '<more>',
        ),
      },
    );
  }
  return state;
}
