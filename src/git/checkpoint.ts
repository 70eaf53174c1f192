import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AgentboxError } from '../errors.js';
import type { Env } from '../util/env.js';
import { git as runGit } from './exec.js';
import type { GitSettings } from './inert.js';
import { ignoredFolders, nestedExcludes, nestedGitIn } from './nested.js';
import { personFiltersOff } from './person-git.js';
import { AGENTBOX_IDENTITY } from './result-commit.js';

/**
 * Checkpoints of a fix run's worktree: at the end of every turn the whole worktree (tracked,
 * changed and untracked files, not ignored ones) is stored as a commit on top of the branch's
 * current commit, without touching the branch, the index or any file; a ref keeps it alive.
 * After a crash that left the run in an unknown state, the worktree is put back to that point.
 */
export interface WorktreeCheckpoint {
  /** The snapshot commit: its tree is the worktree at the checkpoint. */
  readonly commit: string;
  /** The branch's commit at that moment (the agent may commit too). */
  readonly head: string;
}

export const checkpointRef = (runName: string) => `refs/agentbox/checkpoints/${runName}`;

/** A fixed identity: the snapshot must not depend on (or fail without) the user's git config. */
const IDENTITY = AGENTBOX_IDENTITY;

/** git in `worktree`, in the command's environment when the caller has it. */
function gitIn(worktree: string, env: Env | undefined, config: GitSettings = []) {
  const hint = `run "git -C ${worktree} status" to see the state of the worktree`;
  return (args: string[], vars: Record<string, string> = {}) =>
    runGit(args, { cwd: worktree, env, vars, hint, config });
}

/**
 * git in `worktree` that reads or writes the agent's files: every filter driver of the person's
 * switched off (person-git.ts), since the agent's .gitattributes may hand its files to one whose
 * program runs them.
 */
async function unfilteredGitIn(worktree: string, env: Env | undefined) {
  return gitIn(worktree, env, await personFiltersOff({ cwd: worktree, ...(env ? { env } : {}) }));
}

/** Takes a checkpoint of `worktree`, leaving out the folders in `exclude` (relative paths). */
export async function takeCheckpoint(
  worktree: string,
  runName: string,
  options: { exclude?: readonly string[]; message?: string; env?: Env } = {},
): Promise<WorktreeCheckpoint> {
  // The worktree's git dir and HEAD are asked while the person's filters are read (one round, not two).
  const [git, found] = await Promise.all([
    unfilteredGitIn(worktree, options.env),
    gitIn(worktree, options.env)(['rev-parse', '--absolute-git-dir', '--verify', 'HEAD']),
  ]);
  const [gitDir, head] = found.split('\n');
  if (!gitDir || !head) throw new AgentboxError('IO_FAILED', `${worktree} has no commit to checkpoint on`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-checkpoint-'));
  try {
    // A private index: the agent's own index (what it staged) stays exactly as it is. It starts as
    // a copy of the real one, whose file stats spare `git add` re-reading every unchanged file.
    const index = path.join(dir, 'index');
    const vars = { ...IDENTITY, GIT_INDEX_FILE: index };
    try {
      const real = path.join(gitDir, 'index');
      fs.copyFileSync(real, index);
      // With the real one's time: git trusts a file's cached stats only when the file changed
      // before its index was written ("racy git"). The copy, made later, made a same-size edit in
      // the second the index was written look unchanged, and the checkpoint missed it (seen under
      // load: test/unit/worktree-filters.test.ts).
      const { atime, mtime } = fs.statSync(real);
      fs.utimesSync(index, atime, mtime);
    } catch {
      await git(['read-tree', head], vars);
    }
    // A nested repository is never followed (nested.ts): the agent may still be using it, so it is
    // left in place, only kept out.
    const excludes = [
      ...(options.exclude ?? []).map((p) => `:(exclude)${p}`),
      ...nestedExcludes(
        await nestedGitIn(worktree, () => ignoredFolders({ cwd: worktree, env: options.env })),
      ),
    ];
    await git(['add', '-A', '--', '.', ...excludes], vars);
    const tree = await git(['write-tree'], vars);
    const commit = await git(
      ['commit-tree', tree, '-p', head, '-m', options.message ?? `agentbox checkpoint of ${runName}`],
      vars,
    );
    await git(['update-ref', checkpointRef(runName), commit]);
    return { commit, head };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Puts `worktree` back to `checkpoint`: the branch at its `head`, every file as it was in the
 * snapshot (files created since are removed, files deleted since come back), the index equal to
 * the branch. Folders in `keep` (relative paths) and ignored files are left alone.
 */
export async function restoreCheckpoint(
  worktree: string,
  checkpoint: WorktreeCheckpoint,
  options: { keep?: readonly string[]; env?: Env } = {},
): Promise<void> {
  const git = await unfilteredGitIn(worktree, options.env);
  // Stale locks of the killed claude's git would make every step below fail.
  const gitDir = await git(['rev-parse', '--absolute-git-dir']);
  fs.rmSync(path.join(gitDir, 'index.lock'), { force: true });
  for (const op of ['rebase-merge', 'rebase-apply'])
    fs.rmSync(path.join(gitDir, op), { recursive: true, force: true });
  for (const file of ['MERGE_HEAD', 'CHERRY_PICK_HEAD', 'REVERT_HEAD'])
    fs.rmSync(path.join(gitDir, file), { force: true });
  // The kept folders step outside while git works (the agent may even have committed them).
  const aside = fs.mkdtempSync(`${worktree}.agentbox-keep-`);
  const kept = (options.keep ?? []).filter((p) => fs.existsSync(path.join(worktree, p)));
  for (const [i, p] of kept.entries()) fs.renameSync(path.join(worktree, p), path.join(aside, String(i)));
  try {
    await git(['reset', '-q', '--hard', checkpoint.head]);
    await git(['clean', '-fdq', ...(options.keep ?? []).flatMap((p) => ['-e', p])]);
    await git(['read-tree', '-u', '--reset', `${checkpoint.commit}^{tree}`]);
    await git(['reset', '-q']);
  } finally {
    for (const [i, p] of kept.entries()) {
      const target = path.join(worktree, p);
      fs.rmSync(target, { recursive: true, force: true });
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.renameSync(path.join(aside, String(i)), target);
    }
    fs.rmSync(aside, { recursive: true, force: true });
  }
}

/** Whether a git operation is half done in the worktree (a lock or an operation in progress). */
export async function gitBusy(worktree: string, env?: Env): Promise<string | null> {
  const git = gitIn(worktree, env);
  let gitDir: string;
  try {
    gitDir = await git(['rev-parse', '--absolute-git-dir']);
  } catch {
    return 'it is not a git worktree any more';
  }
  if (fs.existsSync(path.join(gitDir, 'index.lock'))) return 'git left index.lock behind';
  for (const [file, what] of [
    ['MERGE_HEAD', 'a merge'],
    ['rebase-merge', 'a rebase'],
    ['rebase-apply', 'a rebase'],
    ['CHERRY_PICK_HEAD', 'a cherry-pick'],
  ] as const) {
    if (fs.existsSync(path.join(gitDir, file))) return `${what} is in progress`;
  }
  return null;
}
