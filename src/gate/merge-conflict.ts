import { statusRecords } from '../git/commit-patch.js';
import { runGit } from '../git/exec.js';
import type { GitSettings } from '../git/inert.js';
import { terminalName } from '../util/terminal-text.js';

/* A patch that does not apply to the person's tree: which files they are editing, and what to do. */

/** Which of `files` have uncommitted changes in the working tree or index. */
export async function locallyChanged(
  root: string,
  files: readonly string[],
  config: GitSettings,
): Promise<string[]> {
  if (files.length === 0) return [];
  const status = await runGit(['--literal-pathspecs', 'status', '--porcelain=v1', '-z', '--', ...files], {
    cwd: root,
    config,
  });
  if (status.exitCode !== 0) return [];
  // (the same records merge --commit reads: a rename's source record skipped)
  return statusRecords(status.stdout).map((record) => record.path);
}

/**
 * What to do when the patch does not apply, pure: a file the person is editing must be committed
 * or stashed first (`git apply --3way` refuses a file that does not match the index too); a file
 * that changed in a commit since the run started is merged by hand with --3way, then recorded.
 */
export function conflictHint(runId: string, patch: string, edited: readonly string[]): string {
  const byHand = `merge by hand (git apply --3way ${patch}, resolve the conflict markers), then: agentbox merge ${runId} --mark-merged`;
  if (edited.length > 0) {
    return (
      `nothing was changed. You have uncommitted changes in ${edited.map(terminalName).join(', ')}: commit them, or stash them ` +
      `(git stash), run agentbox merge ${runId} again, then git stash pop; or ${byHand}`
    );
  }
  return `nothing was changed. Those files changed here since the run started: ${byHand}; or discard the run (agentbox discard ${runId})`;
}
