import { AgentboxError } from '../errors.js';
import { commitFiles } from '../git/apply.js';
import type { GitSettings } from '../git/inert.js';
import { openLedger, type RunDetails, updateState } from '../ledger/index.js';
import { mergeMessage } from '../present/result-message.js';

/**
 * `merge --commit`'s commit, once the patch is applied; logged (`merge_git`) when made or not. A
 * commit git still refuses (what src/git/commit-ready.ts could not foresee before the apply) leaves
 * the merged files in the tree: the run is recorded MERGED, as it is, and the error says so and
 * how to commit them — not a run in REVIEW whose second merge is refused on its own files.
 */
export async function commitMerged(
  plan: { readonly root: string; readonly run: RunDetails; readonly sha256: string },
  files: string[],
  after: { readonly config: GitSettings; readonly log: (committed: boolean) => void },
): Promise<string> {
  const { root, run } = plan;
  let commit: string;
  try {
    commit = await commitFiles(root, files, mergeMessage(run.name, run.meta.task), after.config);
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
  return commit;
}
