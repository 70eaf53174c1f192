import fs from 'node:fs';
import path from 'node:path';
import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { hasCommit, resultTree } from '../git/result-commit.js';
import type { RunDetails } from '../ledger/index.js';
import { readRevision, revisionDir } from '../ledger/revisions.js';
import { type DiffOptions, runDiff, showDiff } from './diff.js';

/**
 * `agentbox diff <run> --revision k`: revision k's own change (its interdiff), from the result of
 * revision k-1 to its own — as git shows any diff, through the pager. Revision 1 is the run's
 * first result against its start.
 */
export async function showRevisionDiff(
  ctx: CommandContext,
  root: string,
  run: RunDetails,
  typed: string,
  options: DiffOptions,
): Promise<void> {
  const last = run.state?.revision?.number ?? 1;
  const k = Number(typed);
  if (!Number.isInteger(k) || k < 1 || k > last) {
    throw new AgentboxError(
      'USAGE',
      `--revision ${typed}: run ${run.name} has revision${last === 1 ? ' 1' : `s 1 to ${last}`}`,
      {
        hint: `its whole change: agentbox diff ${run.meta.run_id}`,
      },
    );
  }
  if (last === 1) return showDiff(ctx, root, run, options);
  const record = readRevision(run.dir, k);
  if (!record) {
    throw new AgentboxError('USAGE', `revision ${k} of ${run.name} has not ended yet`, {
      hint: `follow it: agentbox watch ${run.meta.run_id}; its change so far: agentbox diff ${run.meta.run_id}`,
    });
  }
  const base = run.meta.repo_sha_start;
  if (!base) throw new AgentboxError('RUN_CORRUPT', `run ${run.name} records no commit it started from`);
  if (options.json) {
    const patch = fs.readFileSync(path.join(revisionDir(run.dir, k), 'interdiff.patch'), 'utf8');
    const data = { run: run.name, id: run.meta.run_id, revision: k, of: last, in_progress: false, patch };
    ctx.io.out(`${JSON.stringify(data, null, 2)}\n`);
    return;
  }
  const from = await resultOf(root, base, record.from_commit, patchOf(run.dir, k - 1));
  const to = await resultOf(root, base, record.commit, patchOf(run.dir, k));
  const mark = `revision ${k} of ${last} of ${run.name}: its own change, against ${k === 1 ? 'the start' : `revision ${k - 1}`}`;
  await runDiff(ctx, root, { options, from, to, marks: [mark] });
}

/** Revision k's whole change (its changes.patch), when it has one. */
function patchOf(runDir: string, k: number): string | null {
  const file = path.join(revisionDir(runDir, k), 'changes.patch');
  return k >= 1 && fs.existsSync(file) && fs.statSync(file).size > 0 ? file : null;
}

/** A revision's result in git: its commit while the repository has it, else its patch's tree. */
async function resultOf(root: string, base: string, commit: string | null, patch: string | null) {
  if (commit && (await hasCommit(root, commit))) return commit;
  return patch ? resultTree(root, base, patch) : base;
}
