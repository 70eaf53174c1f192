import type { CommandContext } from '../context.js';
import { type RunDetails, readRun, runIdOf } from '../ledger/index.js';
import type { RunProgress } from '../present/live.js';
import type { RunContext } from '../run/begin/context.js';
import { logTrust } from '../run/begin/context.js';
import { executionOf } from '../run/begin/options.js';
import type { Finalized } from '../run/end/finalize.js';
import type { StopReason } from '../run/end/outcome.js';
import { executeRun } from '../run/execute.js';
import { addRunWorktree, createHeadlessRun, worktreePath } from '../run/start.js';
import type { SupervisorMode } from '../supervisor/rules.js';
import { type GroupDetails, updateGroupState } from './store.js';

/** A running attempt, as the group's scheduler holds it. */
export interface Running {
  readonly attempt: number;
  readonly name: string;
  readonly dir: string;
  /** Ends it as `agentbox stop` would (ABORTED, "stopped by …"). */
  stop(by: string): void;
  /** Ends it for the group's own reason (its budget). */
  halt(reason: StopReason): void;
  readonly done: Promise<Finalized>;
}

/**
 * Creates attempt k's run — its folder, prompt and worktree — and records it as the member's run
 * before the worktree is made, so that a crash in between leaves a run `recover` can account for.
 */
export async function createAttempt(
  ctx: CommandContext,
  rc: RunContext,
  group: GroupDetails,
  k: number,
): Promise<string> {
  const m = group.meta;
  const member = group.state.members[k - 1]!;
  const model = member.model ?? m.run_options.model;
  const run = await createHeadlessRun(ctx, rc, {
    type: 'fix',
    task: m.task,
    base: m.repo_sha_start,
    options: model ? { model } : {},
    flags: {
      timeout_ms: m.run_options.timeout_ms,
      supervisor: m.run_options.supervisor as SupervisorMode,
      max_iterations: m.run_options.max_iterations,
      maxCost: m.max_cost_usd,
    },
    // The folder's name and id, never group.json's text: the run's own record of its group is what
    // makes it one of the group's attempts (src/group/attempts.ts isOwnAttempt).
    group: { id: runIdOf(group.name), name: group.name, attempt: k, attempts: m.attempts },
  });
  logTrust(rc, run.dir);
  // A start that failed before (recover starts it again) is no longer the member's story.
  await setMember(rc, group, k, { run: run.name, error: undefined });
  await addRunWorktree(rc, run, worktreePath(rc, ctx.env, run.name), m.repo_sha_start);
  return run.name;
}

export function setMember(
  rc: RunContext,
  group: GroupDetails,
  k: number,
  patch: { run?: string; error?: string | undefined },
): Promise<unknown> {
  return updateGroupState(rc.ledger, group.name, (s) => ({
    members: s.members.map((x) => (x.attempt === k ? { ...x, ...patch } : x)),
  }));
}

/** Runs attempt k (new, or resumed) in this process; the group holds the handle to stop it. */
export function executeAttempt(
  ctx: CommandContext,
  rc: RunContext,
  k: number,
  run: RunDetails,
  how: {
    resume?: { more?: string };
    replay?: { note: string };
    onProgress?: (p: RunProgress) => void;
    onSpend?: (usd: number) => void;
  },
): Running {
  let stopRun: ((by: string) => void) | null = null;
  let haltRun: ((reason: StopReason) => void) | null = null;
  // Asked before claude started (in its setup step): kept, and given as soon as the run subscribes.
  let pendingStop: string | null = null;
  let pendingHalt: StopReason | null = null;
  const done = executeRun({
    ...executionOf(ctx, rc, run.meta, run.state!),
    ...(how.resume ? { resume: how.resume } : {}),
    ...(how.replay ? { replay: how.replay } : {}),
    onInterrupt: (stop) => {
      stopRun = stop;
      if (pendingStop) stop(pendingStop);
      return () => {};
    },
    onHalt: (halt) => {
      haltRun = halt;
      if (pendingHalt) halt(pendingHalt);
      return () => {};
    },
    ...(how.onProgress ? { onProgress: how.onProgress } : {}),
    ...(how.onSpend ? { onSpend: how.onSpend } : {}),
  });
  return {
    attempt: k,
    name: run.name,
    dir: run.dir,
    stop: (by) => {
      pendingStop ??= by;
      (stopRun as ((by: string) => void) | null)?.(by);
    },
    halt: (reason) => {
      pendingHalt ??= reason;
      (haltRun as ((r: StopReason) => void) | null)?.(reason);
      if (!haltRun) (stopRun as ((by: string) => void) | null)?.('the group');
    },
    done,
  };
}

/** attempt k's run read back (after its creation, or to resume it). */
export const readAttemptRun = (rc: RunContext, name: string): RunDetails => readRun(rc.ledger, name);
