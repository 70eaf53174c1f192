import path from 'node:path';
import { AgentboxError } from '../errors.js';
import { discardRun } from '../gate/discard.js';
import { decidedHere } from '../ledger/claim.js';
import { runIdOf } from '../ledger/names.js';
import type { Ledger } from '../ledger/paths.js';
import type { RunDetails } from '../ledger/read.js';
import { isAlive } from '../process/reap.js';
import { terminalLine } from '../util/terminal-text.js';
import { type Attempt, groupAttempts } from './attempts.js';
import { groupDecidedHere } from './decided.js';
import { namedAttempt, type Ranked } from './merge-select.js';
import { keepLatestPatch } from './patches.js';
import { rankGroup } from './rank-facts.js';
import { writeGroupReport } from './report.js';
import { findGroup } from './resolve.js';
import { type GroupDetails, readGroup, updateGroupState } from './store.js';
import { PATCHES_DIR } from './types.js';

/*
 * The human gate for a whole group, the domain half: whether the group can be decided now, and
 * settling it once decided — the other attempts discarded as `agentbox discard` does, every
 * attempt's patch kept in the group's folder, the group MERGED or DISCARDED. The merge of the
 * chosen attempt itself is the one run merge (src/gate/merge.ts), unchanged.
 */

/** A group the gate decided already: said with where its patches are. */
export function assertUndecided(root: string, group: GroupDetails): void {
  const { status, merged } = group.state;
  if (!groupDecidedHere(group.state)) return;
  const patches = path.relative(root, path.join(group.dir, 'patches'));
  throw new AgentboxError(
    'USAGE',
    status === 'MERGED'
      ? `group ${group.name} is already merged${merged ? ` (attempt ${merged.attempt}, run ${terminalLine(merged.run)})` : ''}`
      : `group ${group.name} was discarded`,
    { hint: `every attempt's patch is kept in ${patches}/` },
  );
}

/** The attempts still running, and whether some wait for a turn the group's process will give them. */
function liveAttempts(group: GroupDetails, attempts: readonly Attempt[]): string[] {
  const live: string[] = [];
  for (const a of attempts) {
    const s = a.run?.state;
    if (s && (s.status === 'ACTIVE' || s.status === 'STALLED') && isAlive(s.pid, s.pid_start))
      live.push(`attempt ${a.attempt} is running`);
  }
  // NOTE: while the group's process lives it still writes the group's state (its end), which
  // would overwrite the gate's: a group is decided only once that process has let go.
  const scheduler = group.state.status === 'ACTIVE' && isAlive(group.state.pid, group.state.pid_start);
  const waiting = attempts.filter((a) => a.name === null).map((a) => a.attempt);
  if (scheduler && waiting.length > 0 && group.state.halted === null)
    live.push(`attempt(s) ${waiting.join(', ')} wait their turn`);
  else if (scheduler && live.length === 0) live.push(`its process (pid ${group.state.pid}) is ending it`);
  return live;
}

/** Refuses a group with an attempt still running or waiting: its outcome is not known yet. */
export function assertGroupEnded(group: GroupDetails, attempts: readonly Attempt[], command: string): void {
  const live = liveAttempts(group, attempts);
  if (live.length === 0) return;
  const id = runIdOf(group.name);
  throw new AgentboxError('USAGE', `group ${group.name} is still running: ${live.join('; ')}`, {
    hint: `wait for it to end (agentbox watch ${id}), or stop it first: agentbox stop ${id}; then agentbox ${command} ${id}`,
  });
}

/**
 * The group `run` is an attempt of, and which: only when the group lists it — a run's own claim
 * (meta.yaml, state.json, a fetched run's) is not enough. null: a run of its own.
 */
export function attemptGroup(
  ledger: Ledger,
  run: RunDetails,
): { readonly group: GroupDetails; readonly attempt: number } | null {
  const of = run.state?.summary?.group;
  const owner = of ? findGroup(ledger, of.id) : null;
  const group = owner ? readGroup(ledger, owner) : null;
  if (!of || !group?.state.members.some((m) => m.attempt === of.attempt && m.run === run.name)) return null;
  return { group, attempt: of.attempt };
}

/** The attempt a merge recorded when the group itself was not settled after it (an interrupted merge). */
export function mergedAttempt(attempts: readonly Attempt[]): Attempt | null {
  // An attempt a publication claims was merged elsewhere was not merged here.
  return attempts.find((a) => a.run?.state?.status === 'MERGED' && decidedHere(a.run.state)) ?? null;
}

/** The group's attempts as the choice needs them, in the ranking's order (src/group/rank.ts). */
export function rankedAttempts(ledger: Ledger, group: GroupDetails): Ranked {
  return {
    order: rankGroup(ledger, group).attempts.map((a) => ({
      attempt: a.attempt,
      run: a.run,
      status: a.status,
      verified: a.verified,
      place: a.place,
      reason: a.reason,
      ...(a.claimedBy ? { claimed: true } : {}),
      ...(a.revised ? { revised: a.revised } : {}),
    })),
  };
}

/**
 * What `merge <group> --attempt k` checks before the merge itself, for a caller that confirms its
 * own way (the web UI): the group not decided yet, nothing of it running, attempt k in REVIEW.
 * Returns attempt k's run, for the run merge (src/gate/merge.ts); then settleGroup.
 */
export function attemptToMerge(root: string, ledger: Ledger, group: GroupDetails, k: number): RunDetails {
  assertUndecided(root, group);
  const attempts = groupAttempts(ledger, group);
  assertGroupEnded(group, attempts, 'merge');
  namedAttempt(runIdOf(group.name), rankedAttempts(ledger, group).order, k);
  return attempts.find((a) => a.attempt === k)!.run!;
}

export interface SettleResult {
  readonly status: 'MERGED' | 'DISCARDED';
  /** The other attempts discarded now (worktree, branch). */
  readonly discarded: readonly { attempt: number; run: string; worktree: boolean; branch: boolean }[];
  /** Attempts that could not be discarded: each with why (the group is settled all the same). */
  readonly failed: readonly { attempt: number; run: string; message: string }[];
  /** The group's patches folder. */
  readonly patches: string;
}

/**
 * After the gate decided: every attempt but the merged one discarded (worktree and branch removed,
 * the run DISCARDED, as `agentbox discard` does), every attempt's patch kept as its run has it now (a revised attempt's last revision),
 * and the group MERGED with `merged` or DISCARDED. Runs twice harmlessly: a second settle finds
 * the worktrees gone and the patches kept.
 */
export async function settleGroup(
  root: string,
  ledger: Ledger,
  group: GroupDetails,
  merged: { readonly attempt: number; readonly run: string } | null,
): Promise<SettleResult> {
  const attempts = groupAttempts(ledger, group);
  const discarded: SettleResult['discarded'][number][] = [];
  const failed: SettleResult['failed'][number][] = [];
  for (const a of attempts) {
    if (!a.name || !a.run) continue;
    if (a.attempt !== merged?.attempt) {
      try {
        const done = await discardRun(root, a.run);
        discarded.push({
          attempt: a.attempt,
          run: a.name,
          worktree: done.removedWorktree,
          branch: done.deletedBranch,
        });
      } catch (error) {
        failed.push({ attempt: a.attempt, run: a.name, message: (error as Error).message });
      }
    }
    await keepLatestPatch(ledger, group.name, a.attempt, path.join(ledger.runsDir, a.name));
  }
  const at = new Date().toISOString();
  await updateGroupState(ledger, group.name, (current) => {
    // A decision a publication claimed is replaced by this one, made here.
    const own = groupDecidedHere(current);
    return {
      status: merged ? 'MERGED' : 'DISCARDED',
      merged: merged ? ((own ? current.merged : null) ?? { ...merged, at }) : own ? current.merged : null,
      ended_at: current.ended_at ?? at,
      claimed_status: undefined,
    };
  });
  // The ranking as the gate left it: which attempt was merged, which discarded.
  await writeGroupReport(ledger, group.name);
  return {
    status: merged ? 'MERGED' : 'DISCARDED',
    discarded,
    failed,
    patches: path.join(group.dir, PATCHES_DIR),
  };
}
