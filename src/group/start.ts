import path from 'node:path';
import type { CommandContext } from '../context.js';
import { EventLog } from '../ledger/events.js';
import { runIdOf } from '../ledger/names.js';
import type { Ledger } from '../ledger/paths.js';
import { processStartTime } from '../process/reap.js';
import type { RunContext } from '../run/begin/context.js';
import { spawnWorker } from '../run/detach.js';
import { preflight, type RunOptions } from '../run/start.js';
import { terminalJson } from '../util/json-out.js';
import { type GroupFlags, groupPlan } from './options.js';
import { runGroup } from './run.js';
import { createGroup, groupDir, updateGroupState } from './store.js';

export type GroupOptions = RunOptions & GroupFlags;

/** Whether `fix` was asked for a group (--attempts N > 1, or a group flag, which then errs). */
export function wantsGroup(options: GroupOptions): boolean {
  return groupPlan(options, 1) !== null;
}

/**
 * `agentbox fix "<task>" --attempts N`: checks everything a fix run checks, creates the group and
 * runs its attempts here (or, with --detach, in one background worker for the whole group).
 */
export async function startGroup(ctx: CommandContext, task: string, options: GroupOptions): Promise<number> {
  const { rc, flags, base } = await preflight(ctx, 'fix', task, options);
  const plan = groupPlan(options, rc.config.runs.max_parallel)!;
  const group = await createGroup(rc.ledger, {
    task,
    attempts: plan.attempts,
    models: plan.models,
    maxParallel: plan.maxParallel,
    firstPass: plan.firstPass,
    maxCostUsd: flags.maxCost,
    repoShaStart: base!,
    runOptions: {
      timeout_ms: flags.timeout_ms,
      supervisor: flags.supervisor,
      max_iterations: flags.max_iterations,
      model: options.model ?? null,
    },
  });
  new EventLog(group.dir).append({
    event: 'group_created',
    attempts: plan.attempts,
    max_parallel: plan.maxParallel,
    first_pass: plan.firstPass,
    max_cost_usd: flags.maxCost,
    models: plan.models,
  });
  if (options.detach) return detachGroup(ctx, rc.ledger, group.name, options.json === true);
  if (!options.json)
    ctx.io.out(`started group ${group.name}: ${plan.attempts} attempts, ${plan.maxParallel} at a time\n`);
  return runGroup(ctx, rc, group.name, { json: options.json === true });
}

/** The whole group in one background worker (`agentbox __exec-group <group>`); returns at once. */
async function detachGroup(
  ctx: CommandContext,
  ledger: Ledger,
  name: string,
  json: boolean,
): Promise<number> {
  await spawnWorker(
    ctx,
    ledger.root,
    ['__exec-group', name],
    path.join(groupDir(ledger, name), 'agentbox.log'),
    (pid) =>
      updateGroupState(ledger, name, () => ({
        pid: pid ?? null,
        pid_start: pid ? processStartTime(pid) : null,
      })),
  );
  const id = runIdOf(name);
  if (json) ctx.io.out(`${terminalJson({ group: name, detached: true })}\n`);
  else
    ctx.io.out(
      `${name}\n  running in the background — follow it: agentbox watch ${id} · stop it: agentbox stop ${id}\n`,
    );
  return 0;
}

/** The worker's side: runs (or goes on with) a group already in the ledger. */
export function runGroupHere(ctx: CommandContext, rc: RunContext, name: string): Promise<number> {
  return runGroup(ctx, rc, name, { json: false });
}
