import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { memoryIo } from '../context.js';
import { assertHuman } from '../gate/gate.js';
import { type Ledger, openLedger, type RunSummary } from '../ledger/index.js';
import { type Decision, mayResume } from '../recover/decide.js';
import { attemptRuns, groupsToRecover } from '../recover/group-plan.js';
import { RecoveryMemo } from '../recover/memo.js';
import { decideRecoveries } from '../recover/recover.js';
import { loadRunContext } from '../run/begin/context.js';
import { openAppend } from '../util/append.js';
import type { Env } from '../util/env.js';

/** The built CLI entry (`src/web` and `dist/web` both sit two levels down). */
const BIN = fileURLToPath(new URL('../../bin/agentbox.cjs', import.meta.url));

export interface Interrupted {
  readonly run: string;
  readonly action: string;
  readonly reason: string;
}

/** Only the runs that could be resumed or replayed: what the page offers to recover. */
const offered = (run: RunSummary) => mayResume(run.status, run.failure_kind, run.type, run.ran_on);

/** Per ledger, while the server runs (the command and the page share it): what was read, and the last answer. */
const kept = new Map<string, { memo: RecoveryMemo; decided: readonly Decision[]; runs: Interrupted[] }>();

/** What `agentbox recover --dry-run` would do: the runs it would resume or replay. Changes nothing. */
export async function interruptedRuns(root: string, env: Env): Promise<Interrupted[]> {
  const ctx = { cwd: root, env, io: memoryIo() };
  assertHuman(env, 'recover', root);
  const ledger = openLedger(root);
  // A group whose process went is taken up whole by `agentbox recover` (src/recover/group.ts): it
  // is offered as one, also when none of its attempts had started.
  const groups = groupsToRecover(ledger, null).map(
    ({ name }): Interrupted => ({
      run: name,
      action: 'group',
      reason: "the group's process is gone; recover takes up its attempts together",
    }),
  );
  const inGroups = groups.length > 0 ? attemptRuns(ledger) : new Set<string>();
  const runs = await interruptedSingleRuns(ctx, ledger);
  return [...groups, ...runs.filter((r) => !inGroups.has(r.run))];
}

/** The runs, not attempts of a group, that `agentbox recover` would resume or replay. */
async function interruptedSingleRuns(
  ctx: { cwd: string; env: Env; io: ReturnType<typeof memoryIo> },
  ledger: Ledger,
) {
  const last = kept.get(ledger.dir) ?? { memo: new RecoveryMemo(), decided: [], runs: [] };
  kept.set(ledger.dir, last);
  // NOTE: asked on every page load, with thousands of runs: only those that could be resumed or
  // replayed are read, what was read is kept (src/recover/memo.ts), and without a candidate the
  // run context (config, the claude binary) is not loaded.
  if (last.memo.names(ledger, offered).length === 0) return [];
  const rc = await loadRunContext(ctx);
  const decided = await decideRecoveries(ctx, rc, undefined, false, offered, last.memo);
  // The same decisions (the memo gives the same objects): the same answer, nothing new to make.
  if (decided.length === last.decided.length && decided.every((d, i) => d === last.decided[i]))
    return last.runs;
  last.decided = decided;
  last.runs = decided
    .filter(({ action }) => action.kind === 'resume' || action.kind === 'rollback_replay')
    .map(({ name, action }) => ({ run: name, action: action.kind, reason: action.reason }));
  return last.runs;
}

/**
 * `agentbox recover` in the background (it lasts as long as the runs it resumes), its output in
 * `.agents/ui/recover.log`. The same command a person would type, so the same decisions.
 */
export function startRecover(root: string, ledger: Ledger, env: Env): { pid: number | null; log: string } {
  const logFile = path.join(ledger.dir, 'ui', 'recover.log');
  fs.mkdirSync(path.dirname(logFile), { recursive: true, mode: 0o700 });
  const log = openAppend(logFile);
  try {
    const child = spawn(process.execPath, [BIN, 'recover'], {
      cwd: root,
      env: env as NodeJS.ProcessEnv,
      detached: true,
      stdio: ['ignore', log, log],
    });
    child.unref();
    return { pid: child.pid ?? null, log: logFile };
  } finally {
    fs.closeSync(log);
  }
}
