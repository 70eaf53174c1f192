import { AgentboxError } from '../errors.js';
import { assertHuman } from '../gate/gate.js';
import { attemptToMerge, settleGroup } from '../group/merge.js';
import { EventLog } from '../ledger/events.js';
import { type ActionContext, domain, mergeAction } from './actions.js';
import { foreignMembers, groupNamed } from './groups.js';
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

/** A refusal of `merge <group> --attempt k`'s checks: the group's state, so a 409 (with its hint). */
function conflict(work: () => ReturnType<typeof attemptToMerge>) {
  try {
    return work();
  } catch (error) {
    if (!(error instanceof AgentboxError)) throw error;
    throw new HttpError(409, error.message, {
      code: 'MERGE_REFUSED',
      ...(error.hint ? { hint: error.hint } : {}),
    });
  }
}

/**
 * `POST /api/groups/<group>/merge {attempt, commit?, acknowledged?, force?}`: `agentbox merge
 * <group> --attempt k` with the page's confirmation — the group's checks (src/group/merge.ts: not
 * decided, nothing running, attempt k in REVIEW), then attempt k's run through the run merge's
 * every check (mergeAction: the human gate, a run that did not pass, sensitive changes, conflicts),
 * then the group settled (the others discarded, every patch kept, the group MERGED).
 */
export async function mergeGroupAction(ac: ActionContext, ref: string, body: Record<string, unknown>) {
  await domain(async () => assertHuman(ac.env, 'merge', ac.root));
  const group = groupNamed(ac.ledger, ref);
  const k = attemptNumber(body, group.meta.attempts);
  // NOTE: settling discards every run the group folder names: one that is not the group's own
  // attempt (a hand edit, a fetched group naming the person's run) stops the merge first.
  const foreign = foreignMembers(ac.ledger, group);
  if (foreign.length > 0)
    throw new HttpError(
      409,
      `group ${group.name} names run(s) that are not its attempts: ${foreign.join(', ')} — nothing was merged`,
      { code: 'MERGE_REFUSED', hint: `look at ${group.dir}/state.json; merge the run you want by itself` },
    );
  const run = conflict(() => attemptToMerge(ac.root, ac.ledger, group, k));
  const merged = await mergeAction(ac, run.name, body);
  new EventLog(run.dir).append({ event: 'group_merged', group: group.name, attempt: k, by: 'ui' });
  const settled = await domain(() => settleGroup(ac.root, ac.ledger, group, { attempt: k, run: run.name }));
  return { group: group.name, attempt: k, ...merged, discarded: settled.discarded, failed: settled.failed };
}
