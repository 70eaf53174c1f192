import path from 'node:path';
import type { CommandContext } from '../context.js';
import { runExitCode } from '../engines/exit.js';
import { findRepo } from '../git/repo.js';
import { listRunNames, readState } from '../ledger/index.js';
import { ledgerPaths } from '../ledger/paths.js';
import { isCi } from '../util/ci.js';

/** The run folders of the ledger at `ctx.cwd`; null when there is no ledger (the run will say why). */
async function runNames(ctx: CommandContext): Promise<{ dir: string; names: Set<string> } | null> {
  try {
    const ledger = ledgerPaths((await findRepo(ctx.cwd, ctx.env)).root);
    return { dir: ledger.runsDir, names: new Set(listRunNames(ledger)) };
  } catch {
    return null;
  }
}

/**
 * Starts a run; in CI, a run that failed exits with its failure kind's code (src/engines/exit.ts)
 * instead of 1. The run is the one folder this process created: new since the start, and its
 * state names this process.
 */
export async function withCiExit(ctx: CommandContext, start: () => Promise<number>): Promise<number> {
  if (!isCi(ctx.env)) return start();
  const before = await runNames(ctx);
  const code = await start();
  if (code !== 1 || !before) return code;
  const after = await runNames(ctx);
  const mine = [...(after?.names ?? [])]
    .filter((name) => !before.names.has(name))
    .map((name) => readState(path.join(before.dir, name)))
    .filter((state) => state?.pid === process.pid);
  const state = mine.length === 1 ? mine[0] : null;
  // A run that succeeded never returns 1; if the ledger says otherwise, the 1 stands.
  const mapped = state ? runExitCode(state.status, state.failure?.kind) : 0;
  return mapped === 0 ? code : mapped;
}
