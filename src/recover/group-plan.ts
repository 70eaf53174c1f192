import type { Env } from '../context.js';
import { isAgentboxError } from '../errors.js';
import { type Attempt, groupAttempts, isOwnAttempt } from '../group/attempts.js';
import { type GroupDetails, listGroupNames, readGroup } from '../group/store.js';
import { listRuns } from '../ledger/list.js';
import { runIdOf } from '../ledger/names.js';
import type { Ledger } from '../ledger/paths.js';
import { readRun } from '../ledger/read.js';
import { isAlive } from '../process/reap.js';
import { resumeBlocker } from '../run/resume.js';
import type { AttemptPlan } from './group.js';
import { decideRecoveries } from './recover.js';

/*
 * What taking a group up again does with each of its attempts: `recover` decides for each run as
 * it does for any run (src/recover/decide.ts); `resume` continues what a person stopped too.
 */

/**
 * Runs made for an attempt that the group's state does not name, by attempt: the group's process
 * died between making attempt k's run and recording it (src/group/attempt.ts createAttempt). Found
 * by the run's own record (its state's summary, then its meta.yaml, which a group's state.json
 * cannot change); recover takes such a run up as the attempt's instead of starting another.
 */
function unrecordedRuns(ledger: Ledger, group: GroupDetails): Map<number, string> {
  const id = runIdOf(group.name);
  const named = new Set(group.state.members.flatMap((m) => (m.run ? [m.run] : [])));
  const found = new Map<number, string>();
  for (const r of listRuns(ledger).runs) {
    if (r.group !== id || r.attempt === undefined || named.has(r.name) || found.has(r.attempt)) continue;
    if (group.state.members[r.attempt - 1]?.run !== null) continue;
    try {
      if (isOwnAttempt(group.name, r.attempt, readRun(ledger, r.name).meta)) found.set(r.attempt, r.name);
    } catch {
      // A run folder that cannot be read is not taken for anything.
    }
  }
  return found;
}

/** An attempt with no run to go on: never started, could not start, or its folder is gone. */
function withoutRun(group: GroupDetails, a: Attempt, startWaiting: boolean): AttemptPlan {
  const member = group.state.members[a.attempt - 1];
  const base = { attempt: a.attempt, run: a.name };
  if (a.name) return { ...base, action: 'leave', reason: 'its run folder is gone' };
  const never = member?.error ? `it could not start (${member.error})` : 'it never started';
  if (!startWaiting) {
    const why = group.state.halted ? `the group was halted (${group.state.halted.reason})` : 'not asked';
    return { ...base, action: 'leave', reason: `${never}: ${why}` };
  }
  return { ...base, action: 'start', reason: member?.error ? `${never}: it starts again` : never };
}

/**
 * `agentbox recover` of a group: each run decided as recover decides for any run (the decision
 * recorded in its events.jsonl unless `record` is false); the attempts that never started start,
 * unless the group was halted before its process died.
 */
export async function planRecover(
  ctx: { readonly env: Env },
  rc: { readonly ledger: Ledger },
  group: GroupDetails,
  record: boolean,
): Promise<AttemptPlan[]> {
  const plans: AttemptPlan[] = [];
  const attempts = groupAttempts(rc.ledger, group);
  const lost = attempts.some((a) => a.name === null) ? unrecordedRuns(rc.ledger, group) : new Map();
  for (const a of attempts) {
    const adopted = a.name === null ? lost.get(a.attempt) : undefined;
    if (!a.run && !adopted) {
      plans.push(withoutRun(group, a, group.state.halted === null));
      continue;
    }
    const name = a.run?.name ?? adopted!;
    const [decided] = await decideRecoveries(ctx, rc, name, record);
    const action = decided!.action;
    const base = {
      attempt: a.attempt,
      run: name,
      reason: adopted ? `its run was made but not recorded; ${action.reason}` : action.reason,
      ...(adopted ? { adopt: true } : {}),
    };
    if (action.kind === 'resume') plans.push({ ...base, action: 'resume', recovery: action });
    else if (action.kind === 'rollback_replay') plans.push({ ...base, action: 'replay', recovery: action });
    else plans.push({ ...base, action: 'leave' });
  }
  return plans;
}

/**
 * `agentbox resume <group>` (every attempt) or `resume <attempt>` (`only`: that one): a CRASHED,
 * ABORTED or STALLED attempt goes on in its session (or is replayed, as `resume` of a run would);
 * REVIEW and DONE are left; attempts that never started start (not with `only`).
 */
export async function planResume(
  env: Env,
  ledger: Ledger,
  group: GroupDetails,
  only?: number,
): Promise<AttemptPlan[]> {
  const plans: AttemptPlan[] = [];
  for (const a of groupAttempts(ledger, group)) {
    if (only !== undefined && a.attempt !== only) continue;
    if (!a.run) {
      plans.push(withoutRun(group, a, only === undefined));
      continue;
    }
    const base = { attempt: a.attempt, run: a.run.name };
    const status = a.run.state?.status;
    if (status === 'REVIEW' || status === 'DONE') {
      plans.push({ ...base, action: 'leave', reason: `it ended ${status}` });
      continue;
    }
    try {
      const replay = await resumeBlocker(a.run, env);
      plans.push(
        replay
          ? { ...base, action: 'replay', reason: replay.reason, recovery: replay }
          : {
              ...base,
              action: 'resume',
              reason: `${status}: it goes on in its session`,
              recovery: { kind: 'resume', reason: 'resumed by a person' },
            },
      );
    } catch (error) {
      if (!isAgentboxError(error)) throw error;
      plans.push({ ...base, action: 'leave', reason: error.message });
    }
  }
  return plans;
}

/** What `agentbox recover` takes up of one group. */
export interface GroupRecovery {
  readonly group: GroupDetails;
  readonly plans: AttemptPlan[];
}

const STOPPED: ReadonlySet<string> = new Set(['ACTIVE', 'CRASHED', 'STALLED']);

/**
 * Whether a group may have something to recover: not decided by the gate, its process gone, and
 * it crashed (marked, or still ACTIVE) or an attempt of it did. Reads only the attempts' states.
 */
function mayRecover(ledger: Ledger, group: GroupDetails): boolean {
  const { status, pid, pid_start, crashed } = group.state;
  if (status === 'MERGED' || status === 'DISCARDED' || isAlive(pid, pid_start)) return false;
  if (status === 'ACTIVE' || crashed) return true;
  // An attempt that could not start (its worktree, its run folder) is started again.
  if (group.state.halted === null && group.state.members.some((m) => m.error && m.run === null)) return true;
  return groupAttempts(ledger, group).some((a) => STOPPED.has(a.run?.state?.status ?? ''));
}

/** A group `agentbox recover` looks at (`only`: one attempt of it). */
export interface RecoverTarget {
  readonly name: string;
  readonly only?: number;
}

/** The groups `agentbox recover` looks at: the one named, else every one that may have something to recover, oldest first. */
export function groupsToRecover(ledger: Ledger, named: RecoverTarget | null): RecoverTarget[] {
  if (named) return [named];
  return listGroupNames(ledger)
    .map((name) => readGroup(ledger, name))
    .filter((g) => mayRecover(ledger, g))
    .map((g) => ({ name: g.name }));
}

/**
 * What `agentbox recover` does with each attempt of a group, read now (under the group's take-up
 * lock, so that no other process is taking it up meanwhile): every attempt left when the group runs
 * or the gate decided it.
 */
export async function planGroupRecovery(
  ctx: { readonly env: Env },
  rc: { readonly ledger: Ledger },
  target: RecoverTarget,
  record: boolean,
): Promise<GroupRecovery> {
  const group = readGroup(rc.ledger, target.name);
  const busy = notTakeable(group);
  const plans = busy
    ? group.state.members.map(
        (m): AttemptPlan => ({ attempt: m.attempt, run: m.run, action: 'leave', reason: busy }),
      )
    : await planRecover(ctx, rc, group, record);
  if (target.only === undefined) return { group, plans };
  return {
    group,
    plans: plans
      .filter((p) => p.attempt === target.only)
      .map((p) => (p.action === 'start' ? leaveWaiting(p) : p)),
  };
}

/** Why a group cannot be taken up now (its process runs it, or the gate decided), or null. */
function notTakeable(group: GroupDetails): string | null {
  const { status, pid, pid_start } = group.state;
  if (status === 'MERGED' || status === 'DISCARDED') return `the group is ${status}`;
  return status === 'ACTIVE' && isAlive(pid, pid_start) ? `the group is running (pid ${pid})` : null;
}

const leaveWaiting = (p: AttemptPlan): AttemptPlan => ({ ...p, action: 'leave', reason: 'it never started' });

/**
 * The runs of every group's attempts: recover takes them up through their group, never alone. Only
 * a group's own attempts (src/group/attempts.ts): a group whose state.json names another run (a
 * hand edit) cannot keep that run from being recovered as the run it is.
 */
export function attemptRuns(ledger: Ledger): Set<string> {
  const runs = new Set<string>();
  for (const name of listGroupNames(ledger))
    for (const a of groupAttempts(ledger, readGroup(ledger, name))) if (a.run) runs.add(a.run.name);
  return runs;
}
