import fs from 'node:fs';
import path from 'node:path';
import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { interdiff } from '../git/interdiff.js';
import { hasCommit, resultTree } from '../git/result-commit.js';
import type { RunDetails } from '../ledger/index.js';
import { readRevision, revisionDir } from '../ledger/revisions.js';
import { terminalJson } from '../util/json-out.js';
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
  const { from, to, claimed } = await revisionEnds(root, run, k);
  if (options.json) {
    const patch = await revisionPatch(root, run, k);
    const data = { run: run.name, id: run.meta.run_id, revision: k, of: last, in_progress: false, patch };
    ctx.io.out(`${terminalJson(claimed ? { ...data, claimed } : data, 2)}\n`);
    return;
  }
  const against = k === 1 ? 'the start' : `revision ${k - 1}`;
  const mark = `revision ${k} of ${last} of ${run.name}: its own change, against ${against}${claimed ? claimedNote(run, k, last) : ''}`;
  await runDiff(ctx, root, { options, from, to, marks: [mark] });
}

/** What a fetched run's interdiff rests on: its publication's word, but for the patch merge applies. Pure. */
const claimedNote = (run: RunDetails, k: number, last: number) =>
  k === last
    ? ` as its publication claims it (not checked here); it ends on the patch merge applies`
    : ` as its publication claims it (not checked here; the whole change merge applies: agentbox diff ${run.meta.run_id})`;

/**
 * Where revision k's own change starts and ends in git. Its last revision ends on the run's
 * changes.patch (its result commit while the repository has it): the patch `diff` shows and
 * `merge` applies. A fetched run's records are its publication's claims: a commit they name may
 * be any a pusher put on the run's branch, so none is taken (as its result_commit is not,
 * src/remote/imported.ts) and only patches are read. `claimed`: a fetched run.
 */
export async function revisionEnds(root: string, run: RunDetails, k: number) {
  const record = readRevision(run.dir, k);
  if (!record) {
    throw new AgentboxError('USAGE', `revision ${k} of ${run.name} has not ended yet`, {
      hint: `follow it: agentbox watch ${run.meta.run_id}; its change so far: agentbox diff ${run.meta.run_id}`,
    });
  }
  const base = run.meta.repo_sha_start;
  if (!base) throw new AgentboxError('RUN_CORRUPT', `run ${run.name} records no commit it started from`);
  const claimed = run.meta.origin !== undefined;
  const own = (commit: string | null) => (claimed ? null : commit);
  const last = k === (run.state?.revision?.number ?? 1);
  const from = await resultOf(root, base, own(record.from_commit), patchOf(run.dir, k - 1));
  const to = last
    ? await resultOf(root, base, own(run.state?.result_commit ?? null), wholePatch(run.dir))
    : await resultOf(root, base, own(record.commit), patchOf(run.dir, k));
  return { from, to, claimed };
}

/** Revision k's own change as a patch: its interdiff.patch, or, for a fetched run, made here. */
export async function revisionPatch(root: string, run: RunDetails, k: number): Promise<string> {
  if (run.meta.origin === undefined)
    return fs.readFileSync(path.join(revisionDir(run.dir, k), 'interdiff.patch'), 'utf8');
  const { from, to } = await revisionEnds(root, run, k);
  return (await interdiff(root, from, to)).toString('utf8');
}

const nonEmpty = (file: string) => (fs.existsSync(file) && fs.statSync(file).size > 0 ? file : null);

/** Revision k's whole change (its changes.patch), when it has one. */
const patchOf = (runDir: string, k: number) =>
  k >= 1 ? nonEmpty(path.join(revisionDir(runDir, k), 'changes.patch')) : null;

/** The run's whole change now: what merge applies. */
const wholePatch = (runDir: string) => nonEmpty(path.join(runDir, 'changes.patch'));

/** A revision's result in git: its commit while the repository has it, else its patch's tree. */
async function resultOf(root: string, base: string, commit: string | null, patch: string | null) {
  if (commit && (await hasCommit(root, commit))) return commit;
  return patch ? resultTree(root, base, patch) : base;
}
