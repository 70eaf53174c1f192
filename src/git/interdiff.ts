import { GitError, runGitBytes } from './exec.js';

/**
 * What changed from one result to the next (a revision's own change, its interdiff), as a
 * binary-safe patch: `git diff from to` between two commits or trees of the main repository, with
 * the flags pinned as for changes.patch (src/git/patch.ts), so no diff driver or textconv runs.
 */
export async function interdiff(repoRoot: string, from: string, to: string): Promise<Buffer> {
  // A revision that changed nothing: the same result on both sides, nothing to ask git.
  if (from === to) return Buffer.alloc(0);
  const args = [
    '-c',
    'core.quotePath=false',
    'diff',
    '--binary',
    '--full-index',
    '-M',
    '--no-color',
    '--no-ext-diff',
    '--no-textconv',
    '--src-prefix=a/',
    '--dst-prefix=b/',
    '--end-of-options',
    from,
    to,
    '--',
  ];
  const result = await runGitBytes(args, { cwd: repoRoot });
  if (result.exitCode !== 0) {
    throw new GitError(args, { cwd: repoRoot, hint: `run "git diff ${from} ${to}" in ${repoRoot}` }, result);
  }
  return result.stdout;
}
