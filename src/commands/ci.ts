import path from 'node:path';
import type { CommandContext } from '../context.js';
import { renderNoRun, renderSummary } from '../engines/summary.js';
import { parseEntries } from '../git/patch-entries.js';
import { findRepo } from '../git/repo.js';
import { type Ledger, ledgerPaths, listRunNames, readRun, resolveRun } from '../ledger/index.js';
import { readTextIfExists } from '../util/fs.js';

export interface SummaryOptions {
  readonly logUrl?: string;
}

/** Whether the ledger holds any run; a job that failed before `agentbox init` has no ledger. */
function hasRuns(ledger: Ledger): boolean {
  try {
    return listRunNames(ledger).length > 0;
  } catch {
    return false;
  }
}

/**
 * `agentbox ci summary [run]`: the Markdown a CI job posts on its issue and in its job summary.
 * Without a run: the newest one, or a note that the job recorded none (still exit 0: the job
 * comments either way).
 */
export async function summary(
  ctx: CommandContext,
  ref: string | undefined,
  options: SummaryOptions,
): Promise<number> {
  const repo = await findRepo(ctx.cwd, ctx.env);
  const ledger = ledgerPaths(repo.root);
  if (ref === undefined && !hasRuns(ledger)) {
    ctx.io.out(renderNoRun(options.logUrl));
    return 0;
  }
  const run = readRun(ledger, resolveRun(ledger, ref ?? 'latest'));
  const file = (name: string) => readTextIfExists(path.join(run.dir, name)) ?? null;
  const patch = file('changes.patch');
  ctx.io.out(
    renderSummary({
      run,
      report: file('report.md') ?? file('plan.md'),
      changedFiles: patch ? parseEntries(patch).length : 0,
      logUrl: options.logUrl,
    }),
  );
  return 0;
}
