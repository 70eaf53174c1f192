import fs from 'node:fs';
import path from 'node:path';
import { assertHuman } from '../gate/gate.js';
import { discardRun } from '../gate/merge.js';
import { type GroupDetails, groupDir, updateGroupState } from '../group/store.js';
import { PATCHES_DIR } from '../group/types.js';
import { EventLog } from '../ledger/events.js';
import { writeAtomic } from '../util/fs.js';
import { type ActionContext, domain, mergeAction } from './actions.js';
import { groupNamed, ownAttempts } from './groups.js';
import { HttpError } from './http.js';

/** `attempt` of a request body: a whole number from 1 to the group's N, else a 400 naming it. */
export function attemptNumber(body: Record<string, unknown>, attempts: number): number {
  const raw = body.attempt;
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 1 || raw > attempts)
    throw new HttpError(
      400,
      `"attempt" must be a whole number from 1 to ${attempts}, not ${JSON.stringify(raw) ?? 'nothing'}`,
    );
  return raw;
}

/** Why the group cannot be merged now (the gate decided, or an attempt still runs), or null. */
function groupProblem(group: GroupDetails, running: readonly string[]): string | null {
  const { status, merged } = group.state;
  if (status === 'MERGED') return `group ${group.name} is merged already (attempt ${merged?.attempt ?? '?'})`;
  if (status === 'DISCARDED') return `group ${group.name} was discarded`;
  if (running.length > 0)
    return `group ${group.name} is still running (${running.join(', ')}): wait for it, or stop it first (agentbox stop ${group.meta.group_id})`;
  return null;
}

/**
 * `POST /api/groups/<group>/merge {attempt, commit?, acknowledged?, force?}`: attempt k's run goes
 * through the run merge's every check (src/web/actions.ts mergeAction: the human gate, a run that
 * did not pass, sensitive changes, conflicts), then the others are set aside. A refusal is logged in
 * the attempt's events (merge_refused) or, for the group itself, answered and logged by the server.
 */
export async function mergeGroupAction(ac: ActionContext, ref: string, body: Record<string, unknown>) {
  await domain(async () => assertHuman(ac.env, 'merge', ac.root));
  const group = groupNamed(ac.ledger, ref);
  const k = attemptNumber(body, group.meta.attempts);
  const attempts = ownAttempts(ac.ledger, group);
  const running = attempts
    .filter((a) => a.run?.state?.status === 'ACTIVE')
    .map((a) => `attempt ${a.attempt}`);
  const problem = groupProblem(group, running);
  if (problem) throw new HttpError(409, problem, { code: 'MERGE_REFUSED' });
  const picked = attempts.find((a) => a.attempt === k);
  if (!picked?.run)
    throw new HttpError(409, `attempt ${k} of ${group.name} never started: nothing to merge`, {
      code: 'MERGE_REFUSED',
    });
  const merged = await mergeAction(ac, picked.run.name, body);
  new EventLog(picked.run.dir).append({ event: 'group_merged', group: group.name, attempt: k, by: 'ui' });
  const others = await settleGroup(ac, group, k, picked.run.name);
  return { group: group.name, attempt: k, ...merged, discarded: others };
}

/**
 * After attempt `k` is merged: every attempt's patch is kept in the group's folder, the others'
 * worktrees and branches go, and the group is MERGED. NOTE: the one stand-in for
 * `agentbox merge <group> --attempt k`'s own ending (src/group/merge*.ts, being written): once it is
 * on main, this function calls it instead.
 */
async function settleGroup(
  ac: ActionContext,
  group: GroupDetails,
  k: number,
  run: string,
): Promise<string[]> {
  const discarded: string[] = [];
  const patches = path.join(groupDir(ac.ledger, group.name), PATCHES_DIR);
  fs.mkdirSync(patches, { recursive: true });
  for (const a of ownAttempts(ac.ledger, group)) {
    if (!a.run) continue;
    const patch = path.join(a.run.dir, 'changes.patch');
    const kept = path.join(patches, `agent_${a.attempt}.patch`);
    if (fs.existsSync(patch) && !fs.existsSync(kept)) await writeAtomic(kept, fs.readFileSync(patch));
    if (a.attempt === k || a.run.state?.status === 'DISCARDED') continue;
    await discardRun(ac.root, a.run);
    discarded.push(a.run.name);
  }
  const at = new Date().toISOString();
  await updateGroupState(ac.ledger, group.name, () => ({
    status: 'MERGED',
    merged: { attempt: k, run, at },
    ended_at: at,
  }));
  return discarded;
}
