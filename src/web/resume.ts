import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentboxError } from '../errors.js';
import { readRun, resolveRun } from '../ledger/index.js';
import { assertResumable } from '../run/resume.js';
import { openAppend } from '../util/append.js';
import { type ActionContext, STATUS_OF } from './actions.js';
import { HttpError, stringField } from './http.js';

/** The built CLI entry (`src/web` and `dist/web` both sit two levels down). */
const BIN = fileURLToPath(new URL('../../bin/agentbox.cjs', import.meta.url));

/**
 * `POST /api/runs/<run>/resume {instructions?}`: `agentbox resume` in the background (it lasts as
 * long as the run), its output appended to the run's raw/agentbox.log. Checked first in-process
 * (the run exists, and resume would take it), so a typo is a 404 and a run in REVIEW a 409, not a
 * silent background failure.
 */
export async function resumeAction(ac: ActionContext, ref: string, body: Record<string, unknown>) {
  const instructions = stringField(body, 'instructions');
  let name: string;
  try {
    const run = readRun(ac.ledger, resolveRun(ac.ledger, ref));
    name = run.name;
    // A run resume would refuse (REVIEW, running, ended) is a 409 here, not a 202 whose background
    // command then failed where nobody looked (its raw/agentbox.log).
    try {
      assertResumable(run);
    } catch (error) {
      if (error instanceof AgentboxError)
        throw new HttpError(409, `${error.message}${error.hint ? ` — ${error.hint}` : ''}`);
      throw error;
    }
  } catch (error) {
    if (error instanceof AgentboxError) throw new HttpError(STATUS_OF[error.code] ?? 400, error.message);
    throw error;
  }
  const log = openAppend(path.join(ac.ledger.runsDir, name, 'raw', 'agentbox.log'));
  try {
    const child = spawn(process.execPath, [BIN, ...resumeArgs(name, instructions)], {
      cwd: ac.root,
      env: ac.env as NodeJS.ProcessEnv,
      detached: true,
      stdio: ['ignore', log, log],
    });
    child.unref();
    return { run: name, resumed: true, pid: child.pid ?? null };
  } finally {
    fs.closeSync(log);
  }
}

/**
 * `agentbox resume`'s arguments for the page's Resume: the run and the person's instructions as
 * operands, after `--`. NOTE: without it, instructions that begin with a dash were read as options
 * — `--force` resumed a run whose envelope today's configuration would change (the page cannot
 * force), `--help` or `-x …` resumed nothing. Pure.
 */
export function resumeArgs(name: string, instructions: string | undefined): string[] {
  return ['resume', '--', name, ...(instructions ? [instructions] : [])];
}
