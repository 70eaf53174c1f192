import { type CommandContext, memoryIo } from '../context.js';
import { assertHuman } from '../gate/gate.js';
import { findGroup } from '../group/resolve.js';
import { readRun, resolveRun } from '../ledger/index.js';
import type { RecoveryAction } from '../recover/decide.js';
import { planLines, takeUpGroup, withGroupLock } from '../recover/group.js';
import {
  attemptRuns,
  groupsToRecover,
  planGroupRecovery,
  type RecoverTarget,
} from '../recover/group-plan.js';
import { carryOut, decideRecoveries, looksInterrupted } from '../recover/recover.js';
import { loadRunContext, type RunContext } from '../run/begin/context.js';
import { terminalJson } from '../util/json-out.js';
import { terminalLine, terminalText } from '../util/terminal-text.js';

export interface RecoverOptions {
  readonly dryRun?: boolean;
  readonly json?: boolean;
  readonly force?: boolean;
}

const LABEL: Record<RecoveryAction['kind'], string> = {
  none: 'nothing to do',
  keep_waiting: 'keeps waiting',
  resume: 'resume',
  rollback_replay: 'roll back and replay',
  give_up: 'left as it is',
};

type Result = { run: string; action: string; reason: string; status?: string | undefined };
type AttemptResult = { attempt: number; run: string | null; action: string; reason: string; status?: string };
type GroupResult = { group: string; attempts: AttemptResult[]; status?: string };

/**
 * `agentbox recover [<run>|<group>]`: after agentbox or the machine went down, decides for every
 * run that was running (or the one named) whether to resume it, roll it back and replay it, or
 * leave it waiting for you, records each decision, and carries them out one after another. A
 * group's attempts are taken up through their group, in one process (those never started start).
 */
export async function recover(
  ctx: CommandContext,
  ref: string | undefined,
  options: RecoverOptions,
): Promise<number> {
  assertHuman(ctx.env, 'recover', ctx.cwd);
  const rc = await loadRunContext(ctx);
  const dry = options.dryRun === true;
  const named = ref === undefined ? undefined : namedGroup(rc, ref);
  const groups = named === null ? [] : groupsToRecover(rc.ledger, named ?? null);
  const grouped = await recoverGroups(ctx, rc, groups, options);
  let code = grouped.code;
  // Every attempt belongs to its group: none is taken up alone.
  const inGroups = named === null ? attemptRuns(rc.ledger) : new Set<string>();
  const decided =
    named === undefined || named === null
      ? await decideRecoveries(ctx, rc, ref, !dry, (r) => looksInterrupted(r) && !inGroups.has(r.name))
      : [];
  const results: Result[] = [];
  for (const { name, action } of decided) {
    const line = `${name}: ${LABEL[action.kind]} — ${terminalLine(action.reason)}`;
    if (!options.json) ctx.io.out(`${line}\n`);
    const result: Result = { run: name, action: action.kind, reason: action.reason };
    if (!dry && (action.kind === 'resume' || action.kind === 'rollback_replay')) {
      // In --json mode each run's own output is collected, and one document is printed at the end.
      const runCtx = options.json ? { ...ctx, io: memoryIo() } : ctx;
      try {
        const exit = await carryOut(runCtx, rc, name, action, {
          json: false,
          force: options.force === true,
        });
        if (exit !== 0) code = 1;
      } catch (error) {
        code = 1;
        const message = error instanceof Error ? error.message : String(error);
        if (!options.json) ctx.io.err(`agentbox: recovering ${name} failed: ${terminalText(message)}\n`);
        result.reason = `${action.reason} (failed: ${message})`;
      }
      result.status = readRun(rc.ledger, name).state?.status;
    }
    results.push(result);
  }
  if (options.json)
    ctx.io.out(`${terminalJson({ dry_run: dry, runs: results, groups: grouped.results }, 2)}\n`);
  else if (decided.length === 0 && groups.length === 0) ctx.io.out('no runs to recover\n');
  else if (dry) ctx.io.out('dry run: nothing was changed\n');
  return code;
}

/**
 * The group `ref` names (`only`: the attempt, when it names one of a group's runs); null when it
 * names a run of no group (recover takes it alone). Resolution as every command's (group first).
 */
function namedGroup(rc: RunContext, ref: string): { name: string; only?: number } | null {
  const group = findGroup(rc.ledger, ref);
  if (group) return { name: group };
  const of = readRun(rc.ledger, resolveRun(rc.ledger, ref)).state?.summary?.group;
  const itsGroup = of ? findGroup(rc.ledger, of.id) : null;
  return of && itsGroup ? { name: itsGroup, only: of.attempt } : null;
}

/** Each group's plan said, then carried out (unless a dry run) in one process per group. */
async function recoverGroups(
  ctx: CommandContext,
  rc: RunContext,
  targets: readonly RecoverTarget[],
  options: RecoverOptions,
): Promise<{ code: number; results: GroupResult[] }> {
  let code = 0;
  const results: GroupResult[] = [];
  for (const target of targets) {
    const result: GroupResult = { group: target.name, attempts: [] };
    results.push(result);
    try {
      const go = () => recoverGroup(ctx, rc, target, result, options);
      const exit = await (options.dryRun ? go() : withGroupLock(rc, target.name, go));
      if (exit !== 0) code = 1;
    } catch (error) {
      code = 1;
      const message = error instanceof Error ? error.message : String(error);
      if (!options.json)
        ctx.io.err(`agentbox: recovering group ${target.name} failed: ${terminalText(message)}\n`);
      result.status = `failed: ${message}`;
    }
    for (const a of result.attempts) if (a.run) a.status = readRun(rc.ledger, a.run).state?.status;
  }
  return { code, results };
}

/** One group: planned (its decisions recorded unless a dry run), said, then taken up. */
async function recoverGroup(
  ctx: CommandContext,
  rc: RunContext,
  target: RecoverTarget,
  result: GroupResult,
  options: RecoverOptions,
): Promise<number> {
  const dry = options.dryRun === true;
  const { group, plans } = await planGroupRecovery(ctx, rc, target, !dry);
  const todo = plans.some((p) => p.action !== 'leave');
  if (!options.json)
    ctx.io.out(`group ${group.name}: ${todo ? 'take up' : 'nothing to do'}\n${planLines(plans)}`);
  result.attempts = plans.map((p) => ({
    attempt: p.attempt,
    run: p.run,
    action: p.action,
    reason: p.reason,
  }));
  if (!todo || dry) return 0;
  return takeUpGroup(options.json ? { ...ctx, io: memoryIo() } : ctx, rc, group, plans, {
    json: false,
    force: options.force === true,
    command: `agentbox recover ${group.meta.group_id}`,
    by: 'recover',
  });
}
