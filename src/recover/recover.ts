import path from 'node:path';
import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { restoreCheckpoint } from '../git/checkpoint.js';
import { assertOwnWorktree } from '../git/own-traces.js';
import { EventLog } from '../ledger/events.js';
import {
  type Ledger,
  listRuns,
  type RunSummary,
  reactivated,
  readRun,
  resolveRun,
  runIdOf,
  updateState,
} from '../ledger/index.js';
import { isAlive } from '../process/reap.js';
import type { RunContext } from '../run/begin/context.js';
import { continueSession } from '../run/continue.js';
import { AGENT_RUN_DIR } from '../run/end/artifacts.js';
import { revisionTurn } from '../run/revise.js';
import { runHere } from '../run/start.js';
import type { Env } from '../util/env.js';
import { endOrphan } from '../watchdog/watchdog.js';
import { type Decision, decideRecovery, type RecoveryAction } from './decide.js';
import { readRecoveryFacts } from './facts.js';
import type { RecoveryMemo } from './memo.js';

/** What the replayed agent is told, after the task itself. */
export function replayNote(to: 'checkpoint' | 'start' | null, more?: string): string {
  const where =
    to === 'checkpoint'
      ? 'Your worktree has been restored to its state at the end of your last completed turn.'
      : to === 'start'
        ? 'Your worktree has been reset to where the run started.'
        : '';
  return [
    `agentbox: an earlier attempt at this task was cut off by a crash. ${where}`.trim(),
    'Check the current state of the files before you go on, then finish the task.',
    ...(more ? [`More instructions from the user (verbatim):\n${more}`] : []),
  ].join('\n');
}

/** The decision for one run, recorded in its events.jsonl unless it is "none" (only carrying it out changes the run). */
async function decide(
  ledger: Ledger,
  env: Env,
  name: string,
  record: boolean,
  memo?: RecoveryMemo,
): Promise<Decision> {
  let decided: Decision;
  if (memo) decided = await memo.decision(ledger, name, env);
  else {
    const facts = await readRecoveryFacts(ledger, name, env);
    decided = { name, facts, action: decideRecovery(facts) };
  }
  const { action, facts } = decided;
  if (record && action.kind !== 'none') {
    const event = { event: 'recover', action: action.kind, reason: action.reason, facts };
    new EventLog(path.join(ledger.runsDir, name)).append(event);
  }
  return decided;
}

/** Never two claudes on one session or worktree: an orphan the watchdog did not end goes first. */
export async function endOrphanOf(rc: RunContext, name: string): Promise<void> {
  const { state } = readRun(rc.ledger, name);
  if (!state) throw new AgentboxError('RUN_CORRUPT', `run ${name} has no state.json`);
  if (!isAlive(state.pid, state.pid_start) && isAlive(state.claude_pid, state.claude_pid_start))
    await endOrphan(state, 1000);
}

/**
 * Readies a run for its replay: its worktree back to the checkpoint (or the start), the run ACTIVE
 * in this process. Returns what the replayed agent is told.
 */
export async function readyReplay(
  rc: RunContext,
  name: string,
  action: Extract<RecoveryAction, { kind: 'rollback_replay' }>,
  more?: string,
): Promise<string> {
  const { meta, state } = readRun(rc.ledger, name);
  // A roll back resets and cleans the worktree: only the run's own (a planted state: own-traces.ts).
  await assertOwnWorktree(rc.repo.root, name, state?.worktree_path ?? null);
  if (state?.worktree_path && action.to) {
    const point =
      action.to === 'checkpoint' && state.checkpoint
        ? state.checkpoint
        : meta.repo_sha_start
          ? { commit: meta.repo_sha_start, head: meta.repo_sha_start }
          : null;
    if (!point) throw new AgentboxError('RUN_CORRUPT', `run ${name} records no commit it started from`);
    await restoreCheckpoint(state.worktree_path, point, { keep: [AGENT_RUN_DIR] });
  }
  await updateState(rc.ledger, name, reactivated(), { event: 'recover', detail: `replay: ${action.reason}` });
  // Cut off in a revision (agentbox revise): the new session gets the revision's message too.
  const k = state?.revision?.number;
  const revision = k ? revisionTurn(path.join(rc.ledger.runsDir, name), k) : undefined;
  return replayNote(action.to, [revision, more].filter(Boolean).join('\n') || undefined);
}

/**
 * Carries out a resume or a replay in the foreground (the run's live line, then its summary).
 * A replay first puts the worktree back to the checkpoint (or the start) and starts a new session.
 */
export async function carryOut(
  ctx: CommandContext,
  rc: RunContext,
  name: string,
  action: RecoveryAction,
  options: { json: boolean; more?: string; force?: boolean },
): Promise<number> {
  await endOrphanOf(rc, name);
  if (action.kind === 'resume') {
    return continueSession(ctx, rc, name, {
      command: `agentbox recover ${runIdOf(name)}`,
      event: 'recover',
      detail: `resume: ${action.reason}`,
      force: options.force === true,
      json: options.json,
      ...(options.more === undefined ? {} : { more: options.more }),
    });
  }
  if (action.kind !== 'rollback_replay') throw new Error(`nothing to carry out for ${action.kind}`);
  const note = await readyReplay(rc, name, action, options.more);
  return runHere(ctx, rc, name, options.json, undefined, { note });
}

/** What `agentbox recover` looks at: runs that were running, and those that wait for review. */
export function looksInterrupted(run: RunSummary): boolean {
  return run.status !== null && ['ACTIVE', 'CRASHED', 'STALLED', 'REVIEW'].includes(run.status);
}

/**
 * The runs `agentbox recover` looks at — the one named, else every run that was running or waits
 * for review, oldest first (the order they were started in) — each with its decision, recorded
 * in its events.jsonl unless `record` is false (a dry run). `memo` keeps what was read for the
 * next call (src/recover/memo.ts), for a caller that asks again and again.
 */
export async function decideRecoveries(
  ctx: { readonly env: Env },
  rc: { readonly ledger: Ledger },
  ref: string | undefined,
  record: boolean,
  only: (run: RunSummary) => boolean = looksInterrupted,
  memo?: RecoveryMemo,
): Promise<Decision[]> {
  const { ledger } = rc;
  const names = ref
    ? [resolveRun(ledger, ref)]
    : memo
      ? memo.names(ledger, only)
      : listRuns(ledger, {})
          .runs.filter(only)
          .map((r) => r.name)
          .reverse();
  const decided = [];
  for (const name of names) decided.push(await decide(ledger, ctx.env, name, record, memo));
  return decided;
}
