import { EventLog } from '../ledger/events.js';
import { readRun, resolveRun } from '../ledger/index.js';
import { rerunOptions, rerunPlanHere } from '../run/rerun.js';
import { startRun } from '../run/start.js';
import { type ActionContext, domain, startedHere, startOptions } from './actions.js';
import { HttpError } from './http.js';

/**
 * `POST /api/runs/<run>/rerun {confirm?, model?, timeout?, supervisor?, max_iterations?,
 * max_cost?}`: as `agentbox rerun <run> --detach` (src/run/rerun.ts), answered 201 `{ run,
 * rerun_of }`. A fetched run's task is its publication's word: without `confirm` (sent only after
 * the page's confirmation quoted the task) 409 with the task, and the refusal logged in the old
 * run's events.jsonl, as a refused merge is.
 */
export async function rerunAction(ac: ActionContext, ref: string, body: Record<string, unknown>) {
  const typed = startOptions(body);
  return domain(async () => {
    const old = readRun(ac.ledger, resolveRun(ac.ledger, ref));
    const plan = rerunPlanHere(ac.root, ac.env, old.meta);
    if (plan.fetched && body.confirm !== true) {
      const { remote, host } = plan.fetched;
      const detail = `a fetched run's task, not confirmed (from ${remote}, ran on ${host})`;
      new EventLog(old.dir).append({ event: 'rerun_refused', reason: 'unconfirmed', detail, by: 'ui' });
      throw new HttpError(409, `${old.name}: ${detail} — confirm to start it here`, {
        code: 'RERUN_UNCONFIRMED',
        task: plan.task,
        origin: plan.fetched,
      });
    }
    const started = await startedHere(ac, (ctx) =>
      startRun(ctx, plan.type, plan.task, rerunOptions(plan, typed), old.name),
    );
    return { ...started, rerun_of: old.name };
  });
}
