import { findRepo } from '../git/repo.js';
import { type Ledger, openLedger, type RunDetails, readRun, resolveRun } from '../ledger/index.js';
import type { Env } from '../util/env.js';

/** The run a command names (a name, its short id, a prefix or "latest"), in the repository at `cwd`. */
export async function openRun(
  cwd: string,
  ref: string,
  env?: Env,
): Promise<{ root: string; ledger: Ledger; run: RunDetails }> {
  const repo = await findRepo(cwd, env);
  const ledger = openLedger(repo.root);
  return { root: repo.root, ledger, run: readRun(ledger, resolveRun(ledger, ref)) };
}
