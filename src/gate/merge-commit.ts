import { AgentboxError } from '../errors.js';
import {
  landPatchCommit,
  makePatchCommit,
  type PatchCommit,
  type Uncommitted,
  uncommittedIn,
} from '../git/commit-patch.js';
import { refuseUncommittable } from '../git/commit-ready.js';
import { GitError } from '../git/exec.js';
import type { GitSettings } from '../git/inert.js';
import { openLedger, type RunDetails, updateState } from '../ledger/index.js';
import { mergeMessage } from '../present/result-message.js';
import { terminalName } from '../util/terminal-text.js';

/*
 * `merge --commit`'s commit is HEAD plus the patch (src/git/commit-patch.ts), made before anything
 * is applied: when git cannot make it — the patch does not apply to HEAD or to what the person
 * staged, a signing program fails — the merge is refused with nothing changed. It lands once the
 * patch is in the working tree; a landing that fails (the branch moved meanwhile) leaves the merged
 * files in the tree: the run is recorded MERGED, as it is, and the error says so and how to commit
 * them — not a run in REVIEW whose second merge is refused on its own files.
 */

type Plan = {
  readonly root: string;
  readonly run: RunDetails;
  readonly patch: string;
  readonly sha256: string;
};

/** The commit, made and not landed; refused (MERGE_REFUSED, GIT_FAILED) with nothing changed. */
export async function prepareCommit(
  plan: Plan,
  exclude: readonly string[],
  config: GitSettings,
): Promise<PatchCommit> {
  const { root, run } = plan;
  const id = run.meta.run_id;
  await refuseUncommittable(root, config, id);
  const without = `or merge without --commit (agentbox merge ${id}) and commit yourself`;
  let made: Awaited<ReturnType<typeof makePatchCommit>>;
  try {
    made = await makePatchCommit(root, plan.patch, {
      message: mergeMessage(run.name, run.meta.task),
      exclude,
      config,
    });
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    throw new AgentboxError(
      'GIT_FAILED',
      `refusing to merge with --commit: git could not make the commit in ${root}: ${error.stderr.split('\n')[0]}`,
      {
        hint: `nothing was changed. Set right what git says (your signing program, say), then merge again; ${without}`,
      },
    );
  }
  if ('commit' in made) return made;
  const files = made.conflicts.map(terminalName).join(', ') || '(see below)';
  const message =
    made.refused === 'staged'
      ? `refusing to merge with --commit: the changes of ${run.name} do not apply to what you staged in ${files}`
      : `refusing to merge with --commit: the changes of ${run.name} do not apply to HEAD's ${files}, only to your uncommitted edits of it`;
  const hint =
    made.refused === 'staged'
      ? `nothing was changed. Commit what you staged, or unstage it (git restore --staged ${files}), then merge again; ${without}`
      : `nothing was changed. Commit your edits of ${files} first, then merge again; ${without}`;
  throw new AgentboxError('MERGE_REFUSED', message, { hint });
}

/**
 * Lands the commit once the patch is applied; logged (`merge_git`) when landed or not. Returns the
 * commit and the merged files the person still has edits of their own in (left out of it).
 */
export async function landCommit(
  plan: Plan,
  made: PatchCommit,
  files: readonly string[],
  after: { readonly config: GitSettings; readonly log: (committed: boolean) => void },
): Promise<{ commit: string; uncommitted: Uncommitted[] }> {
  const { root, run } = plan;
  try {
    await landPatchCommit(root, made, after.config);
  } catch (error) {
    after.log(false);
    const why = error instanceof Error ? error.message.split('\n')[0]! : String(error);
    await updateState(
      openLedger(root),
      run.name,
      { status: 'MERGED' },
      {
        event: 'merged',
        detail: `patch sha256 ${plan.sha256} · ${files.length} file(s) applied, not committed: ${why}`,
      },
    );
    throw new AgentboxError(
      'GIT_FAILED',
      `merged ${run.name} into ${root}, but git could not commit it: ${why}`,
      {
        hint: 'the run is recorded MERGED and its files are in your working tree, not committed: commit them yourself (git status lists them)',
      },
    );
  }
  after.log(true);
  // What is left is the person's: said, never a reason to fail a merge that is done.
  const uncommitted = await uncommittedIn(root, files, after.config).catch(() => []);
  return { commit: made.commit, uncommitted };
}
