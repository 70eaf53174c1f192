import { memoryIo } from '../context.js';
import { type ErrorCode, isAgentboxError } from '../errors.js';
import { claimedRunLine } from '../gate/claims.js';
import { discardRun } from '../gate/discard.js';
import { assertHuman } from '../gate/gate.js';
import { checkMessage, deliveredJson, deliverMessage } from '../gate/inject.js';
import { applyMerge, type MergePlan, prepareMerge } from '../gate/merge.js';
import { notPassingLine } from '../gate/merge-gate.js';
import { changedSinceLine, shortSha } from '../gate/patch-seen.js';
import { awaitStop, requestStop, stopExitCode, stoppedLine, stoppingLine } from '../gate/stop.js';
import type { SensitiveChange } from '../git/sensitive.js';
import { controlSession, restartingLine, sessionJson } from '../interactive/control.js';
import { EventLog } from '../ledger/events.js';
import { type Ledger, readRun, resolveRun } from '../ledger/index.js';
import type { HeadlessType } from '../run/begin/tier.js';
import { type RunOptions, startRun } from '../run/start.js';
import type { Env } from '../util/env.js';
import { styler } from '../util/style.js';
import { groupAsk, startGroupFromUi } from './group-start.js';
import { HttpError, stringField } from './http.js';
import { assertStartable } from './start-check.js';

/**
 * The page's buttons: each action calls the domain functions its CLI command calls (the command in
 * src/commands/ confirms and prints; this answers with data), so every check (the human gate,
 * sensitive changes, conflicts, a run that is still running) is the same code. An AgentboxError
 * becomes an HTTP status.
 */
export interface ActionContext {
  readonly root: string;
  readonly ledger: Ledger;
  readonly env: Env;
}

export const STATUS_OF: Partial<Record<ErrorCode, number>> = {
  USAGE: 400,
  CONFIG_INVALID: 400,
  RUN_NAME_INVALID: 400,
  RUN_AMBIGUOUS: 400,
  RUN_NOT_FOUND: 404,
  MERGE_CONFLICT: 409,
  MERGE_REFUSED: 409,
  RUN_ACTIVE: 409,
  UNSAVED_CHANGES: 409,
  HUMAN_GATE: 403,
  // The page cannot grant trust: only the person at a terminal can (agentbox trust).
  TRUST_REQUIRED: 403,
};

/** The answers quote the CLI's lines without colour. */
const PLAIN = styler(memoryIo());

const RUN_TYPES: readonly HeadlessType[] = ['scout', 'plan', 'fix', 'review'];

/**
 * `POST /api/runs`: starts a run detached, as `agentbox <type> <task> --detach` does; with
 * `attempts` over 1, a group of fix runs, as `agentbox fix <task> --attempts N --detach`.
 */
export async function startRunAction(ac: ActionContext, body: Record<string, unknown>) {
  const type = stringField(body, 'type', true);
  if (!RUN_TYPES.includes(type as HeadlessType))
    throw new HttpError(400, `"type" must be one of scout, plan, fix, review, not "${type}"`);
  // Every bad field at once (the form marks each), before the CLI's checks stop at the first.
  assertStartable(body);
  const task = stringField(body, 'task', true);
  const options = startOptions(body);
  const group = groupAsk(body);
  return domain(() =>
    startedHere(ac, (ctx) =>
      group
        ? startGroupFromUi(ctx, task, options, group)
        : startRun(ctx, type as HeadlessType, task, options),
    ),
  );
}

/** A run's options from the page's fields, as `--detach --json` and the flags of the same names. Pure. */
export function startOptions(body: Record<string, unknown>): RunOptions {
  return {
    detach: true,
    json: true,
    model: stringField(body, 'model'),
    timeout: stringField(body, 'timeout'),
    supervisor: stringField(body, 'supervisor'),
    maxIterations: stringField(body, 'max_iterations'),
    maxCost: stringField(body, 'max_cost'),
  };
}

/**
 * Starts something detached in the server's process, as the CLI would in `ac.root`, and answers
 * what it printed: startRun prints how it started (src/run/start.ts), with --detach --json one
 * JSON line; so does startGroup (`{ group, detached }`).
 */
export async function startedHere(
  ac: ActionContext,
  start: (ctx: {
    cwd: string;
    env: ActionContext['env'];
    io: ReturnType<typeof memoryIo>;
  }) => Promise<unknown>,
): Promise<Record<string, unknown>> {
  const io = memoryIo();
  await start({ cwd: ac.root, env: ac.env, io });
  return startedAnswer(io);
}

/** What a run started detached with --json printed, as the answer; its stderr as `notice`. */
function startedAnswer(io: { stdout: string; stderr: string }): Record<string, unknown> {
  // What the run goes without, as the CLI says it on stderr: the page shows it every time too.
  const notice = io.stderr.trim() ? { notice: io.stderr.trim() } : {};
  try {
    return { ...(JSON.parse(io.stdout) as Record<string, unknown>), ...notice };
  } catch {
    return { output: io.stdout.trim(), ...notice };
  }
}

/** An AgentboxError from the domain, as the HTTP status it means. */
export async function domain<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!isAgentboxError(error)) throw error;
    throw new HttpError(STATUS_OF[error.code] ?? 500, error.message, {
      code: error.code,
      ...(error.hint ? { hint: error.hint } : {}),
    });
  }
}

/**
 * The sensitive paths of the patch as it is now that `acknowledged` (the paths the person ticked on
 * the page) does not name. Checked against the patch at merge time, not what the page showed: a
 * patch that gained a sensitive change since (a resumed run) is refused, whatever the page sent.
 */
function unacknowledgedPaths(sensitive: readonly SensitiveChange[], acknowledged: unknown): string[] {
  const named = new Set(
    Array.isArray(acknowledged) ? acknowledged.filter((p): p is string => typeof p === 'string') : [],
  );
  return [...new Set(sensitive.map((c) => c.path))].filter((p) => !named.has(p));
}

/**
 * `POST /api/runs/<run>/merge {commit?, acknowledged?, force?, patch_sha256?}`: the page confirmed;
 * the patch must be the one the page showed (`patch_sha256`), a patch with sensitive changes still
 * needs `acknowledged`, every sensitive path by name (the person ticked each one), as `--yes`
 * needs `--allow-sensitive`, and a run that did not pass, or a fetched run (what it claims was not
 * checked here), needs `force`, as `--yes` needs `--force`. The same checks and merge as the
 * CLI's (src/gate/merge.ts), as data.
 */
export async function mergeAction(ac: ActionContext, ref: string, body: Record<string, unknown>) {
  return domain(async () => {
    assertHuman(ac.env, 'merge', ac.root);
    const run = readRun(ac.ledger, resolveRun(ac.ledger, ref));
    const plan = await prepareMerge(ac.root, run);
    refuseUnseen(plan, body.patch_sha256);
    if (plan.claim && body.force !== true) {
      const detail = claimedRunLine(plan.claim);
      new EventLog(run.dir).append({ event: 'merge_refused', reason: 'claimed', detail, by: 'ui' });
      throw new HttpError(409, `${run.name} ${detail} — confirm to merge it anyway`, {
        code: 'MERGE_REFUSED',
        claim: plan.claim,
      });
    }
    if (plan.notPassing && body.force !== true) {
      const detail = notPassingLine(plan.notPassing);
      new EventLog(run.dir).append({ event: 'merge_refused', reason: 'not_passing', detail, by: 'ui' });
      throw new HttpError(409, `${run.name} did not pass: ${detail} — confirm to merge it anyway`, {
        code: 'MERGE_REFUSED',
        not_passing: plan.notPassing,
      });
    }
    const unacknowledged = unacknowledgedPaths(plan.sensitive, body.acknowledged);
    if (unacknowledged.length > 0) {
      const detail = unacknowledged.join(', ');
      new EventLog(run.dir).append({ event: 'merge_refused', reason: 'sensitive', detail, by: 'ui' });
      throw new HttpError(
        409,
        `${run.name} has ${plan.sensitive.length} sensitive change(s), not acknowledged: ${detail} — tick each one on the run's page, then merge`,
        { code: 'MERGE_REFUSED', sensitive: plan.sensitive },
      );
    }
    return applyMerge(plan, { commit: body.commit === true });
  });
}

/**
 * The patch the page showed is the one merged: `patch_sha256` (what the page got with the patch
 * it drew) must be the patch's hash now; without one (a script), the patch must not have changed
 * since it was last shown here, as for `agentbox merge --yes`.
 */
function refuseUnseen(plan: MergePlan, shown: unknown): void {
  const sent = typeof shown === 'string' ? shown : null;
  if (sent === null ? !plan.seen.changed : sent === plan.sha256) return;
  const detail =
    sent === null
      ? changedSinceLine(plan.seen)
      : `the patch changed since the page showed it: ${shortSha(sent)} → ${shortSha(plan.sha256)}`;
  new EventLog(plan.run.dir).append({ event: 'merge_refused', reason: 'patch_changed', detail, by: 'ui' });
  throw new HttpError(409, `${plan.run.name}: ${detail} — read the patch it has now, then merge`, {
    code: 'MERGE_REFUSED',
    patch_sha256: plan.sha256,
  });
}

export async function discardAction(ac: ActionContext, ref: string) {
  return domain(async () => {
    assertHuman(ac.env, 'discard', ac.root);
    return discardRun(ac.root, readRun(ac.ledger, resolveRun(ac.ledger, ref)));
  });
}

/** `POST /api/runs/<run>/stop`: as `agentbox stop`; its lines and exit code. */
export async function stopAction(ac: ActionContext, ref: string) {
  return domain(async () => {
    assertHuman(ac.env, 'stop', ac.root);
    const run = readRun(ac.ledger, resolveRun(ac.ledger, ref));
    if (run.meta.type === 'interactive') {
      await controlSession(run, 'stop', { graceful: true });
      return { output: `✓ stopping ${run.name}`, code: 0 };
    }
    const pid = await requestStop(run);
    const outcome = await awaitStop(run, pid, {});
    return {
      output: `${stoppingLine(run, pid)}${stoppedLine(run, outcome, PLAIN)}`.trim(),
      code: stopExitCode(outcome),
    };
  });
}

/** `POST /api/runs/<run>/restart {fresh?}`: an interactive session's claude, restarted. */
export async function restartAction(ac: ActionContext, ref: string, body: Record<string, unknown>) {
  return domain(async () => {
    assertHuman(ac.env, 'restart', ac.root);
    const run = readRun(ac.ledger, resolveRun(ac.ledger, ref));
    const fresh = body.fresh === true;
    await controlSession(run, 'restart', { mode: fresh ? 'fresh' : 'resume' });
    return { output: restartingLine(run, fresh, PLAIN.ok('✓')).trim(), code: 0 };
  });
}

/** `GET /api/runs/<run>/session`: an interactive session's state, from its IPC socket. */
export async function sessionState(ac: ActionContext, ref: string) {
  return domain(async () => {
    const run = readRun(ac.ledger, resolveRun(ac.ledger, ref));
    return sessionJson(run, await controlSession(run, 'state'));
  });
}

export async function injectAction(ac: ActionContext, ref: string, body: Record<string, unknown>) {
  const text = stringField(body, 'text', true);
  return domain(async () => {
    assertHuman(ac.env, 'inject', ac.root);
    checkMessage(text);
    const run = readRun(ac.ledger, resolveRun(ac.ledger, ref));
    return deliveredJson(run.name, await deliverMessage(run, text));
  });
}
