import { GitError, runGit, git as runGitText } from './exec.js';
import { personFiltersOff } from './person-git.js';

/**
 * What agentbox leaves in git besides worktrees: a branch `agentbox/<run>` per fix run and refs
 * under `refs/agentbox/` (the checkpoints). gc and uninstall --purge find and remove them here.
 */

export const BRANCH_PREFIX = 'agentbox/';
const BRANCH_REFS = `refs/heads/${BRANCH_PREFIX}`;

const git = (cwd: string, args: string[]) => runGitText(args, { cwd });

/** agentbox's branches (`refs/heads/agentbox/…`) and its own refs (`refs/agentbox/…`), full names. */
export async function listAgentboxRefs(root: string): Promise<string[]> {
  const out = await git(root, ['for-each-ref', '--format=%(refname)', BRANCH_REFS, 'refs/agentbox/']);
  return out.split('\n').filter(Boolean);
}

/** `refs/heads/agentbox/x` → `agentbox/x`; null for a ref that is not one of agentbox's branches. */
export function branchOfRef(ref: string): string | null {
  return ref.startsWith(BRANCH_REFS) ? ref.slice('refs/heads/'.length) : null;
}

/** Deletes a branch; one that is already gone is not an error. */
export async function deleteBranch(root: string, branch: string): Promise<void> {
  const args = ['branch', '-D', '--', branch];
  const result = await runGit(args, { cwd: root });
  if (result.exitCode === 0 || /not found/.test(result.stderr)) return;
  throw new GitError(args, { cwd: root }, result);
}

/** Deletes a ref outside refs/heads (a checkpoint); one that is already gone is not an error. */
export async function deleteRef(root: string, ref: string): Promise<void> {
  await git(root, ['update-ref', '-d', ref]);
}

/**
 * The paths git reports as changed in `worktree` (modified, staged, untracked; not ignored),
 * leaving out those under `skip` (folders relative to the worktree, ending in `/`).
 */
export async function uncommittedPaths(worktree: string, skip: readonly string[] = []): Promise<string[]> {
  // `status` compares files by content through their filter: the agent's .gitattributes chose
  // which, so every filter driver of the person's is off (person-git.ts).
  const config = await personFiltersOff({ cwd: worktree });
  const out = await runGitText(['status', '--porcelain=v1', '-z', '--untracked-files=normal'], {
    cwd: worktree,
    config,
  });
  const paths: string[] = [];
  const records = out.split('\0');
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    if (record.length < 4) continue;
    // A rename or copy is followed by its source path in the next record.
    if (record[0] === 'R' || record[0] === 'C') i++;
    const file = record.slice(3);
    if (!skip.some((dir) => file === dir || file.startsWith(dir))) paths.push(file);
  }
  return paths;
}

/**
 * How many commits of `branch` are on no other branch, tag or remote-tracking branch: work that
 * deleting the branch would lose. agentbox's other branches do not count as a safe place.
 */
export async function commitsOnlyOn(root: string, branch: string): Promise<number> {
  const out = await git(root, [
    'rev-list',
    '--count',
    `refs/heads/${branch}`,
    '--not',
    '--tags',
    '--remotes',
    // NOTE: --exclude applies to the next --branches only, and there its pattern has no refs/heads/.
    `--exclude=${BRANCH_PREFIX}*`,
    '--branches',
    '--',
  ]);
  return Number(out.trim());
}
