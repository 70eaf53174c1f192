import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { memoryIo } from '../context.js';
import { type Ledger, listRuns, openLedger } from '../ledger/index.js';
import { decideRecoveries, resumable } from '../recover/recover.js';
import { loadRunContext } from '../run/context.js';
import { assertHuman } from '../run/gate.js';
import type { Env } from '../util/env.js';

/** The built CLI entry (`src/web` and `dist/web` both sit two levels down). */
const BIN = fileURLToPath(new URL('../../bin/agentbox.cjs', import.meta.url));

export interface Interrupted {
  readonly run: string;
  readonly action: string;
  readonly reason: string;
}

/** What `agentbox recover --dry-run` would do: the runs it would resume or replay. Changes nothing. */
export async function interruptedRuns(root: string, env: Env): Promise<Interrupted[]> {
  const ctx = { cwd: root, env, io: memoryIo() };
  assertHuman(env, 'recover', root);
  // NOTE: asked on every page load: most ledgers have no run to recover, and thousands waiting for
  // review (decided from their files one by one, ~1 s for 10,000 runs, measured): those are not
  // read, and without a candidate the run context (the claude binary's version) is not loaded.
  if (!listRuns(openLedger(root), {}).runs.some(resumable)) return [];
  const decided = await decideRecoveries(ctx, await loadRunContext(ctx), undefined, false, resumable);
  return decided
    .filter(({ action }) => action.kind === 'resume' || action.kind === 'rollback_replay')
    .map(({ run, action }) => ({ run: run.name, action: action.kind, reason: action.reason }));
}

/**
 * `agentbox recover` in the background (it lasts as long as the runs it resumes), its output in
 * `.agents/ui/recover.log`. The same command a person would type, so the same decisions.
 */
export function startRecover(root: string, ledger: Ledger, env: Env): { pid: number | null; log: string } {
  const logFile = path.join(ledger.dir, 'ui', 'recover.log');
  fs.mkdirSync(path.dirname(logFile), { recursive: true, mode: 0o700 });
  const log = fs.openSync(logFile, 'a');
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
