import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AgentboxError } from '../errors.js';
import { git as runGit, runGit as tryGit } from './exec.js';

/** Who agentbox's own commits are from: the run's result is the agent's work, recorded by agentbox. */
export const AGENTBOX_IDENTITY = {
  GIT_AUTHOR_NAME: 'agentbox',
  GIT_AUTHOR_EMAIL: 'agentbox@localhost',
  GIT_COMMITTER_NAME: 'agentbox',
  GIT_COMMITTER_EMAIL: 'agentbox@localhost',
} as const;

export interface ResultCommit {
  readonly commit: string;
  readonly parent: string;
  /** The branch's commit before, when it was neither the start commit nor agentbox's last result. */
  readonly replaced: string | null;
  /** false: the branch already held this result (a second finalisation of the same state). */
  readonly created: boolean;
}

/**
 * Records a fix run's result as a commit on its branch: the start commit plus exactly
 * `patchFile` (applied to a private index, so the commit is the patch byte for byte), parented on
 * agentbox's previous result for this run when the branch still points at it (a resumed run adds
 * a commit), else on the start commit. Plumbing only: no hook runs, no working tree or index of
 * anyone's is touched. The branch then answers `git log/diff/push` like any other.
 */
export async function recordResultCommit(opts: {
  readonly repoRoot: string;
  readonly branch: string;
  readonly base: string;
  readonly previous: string | null;
  readonly patchFile: string;
  readonly message: string;
}): Promise<ResultCommit> {
  const ref = `refs/heads/${opts.branch}`;
  // The branch's commit and its tree are read while the patch is applied: independent of each other.
  const [branch, tree] = await Promise.all([
    branchTip(opts.repoRoot, ref),
    resultTree(opts.repoRoot, opts.base, opts.patchFile),
  ]);
  const tip = branch?.commit ?? null;
  const parent = tip !== null && tip === opts.previous ? tip : opts.base;
  if (tip !== null && tip === parent && tip !== opts.base && branch?.tree === tree) {
    return { commit: tip, parent: opts.base, replaced: null, created: false };
  }
  const commit = await git(
    opts.repoRoot,
    ['commit-tree', tree, '-p', parent, '-F', '-'],
    AGENTBOX_IDENTITY,
    false,
    opts.message,
  );
  // The old value guards against a branch that moved meanwhile: then git refuses, nothing changes.
  await git(opts.repoRoot, ['update-ref', '-m', "agentbox: the run's result", ref, commit, tip ?? '']);
  return {
    commit,
    parent,
    replaced: tip !== null && tip !== opts.base && tip !== opts.previous ? tip : null,
    created: true,
  };
}

/**
 * The commit `ref` points at and its tree, in one git call; null when there is no such branch (or it
 * names no commit). `for-each-ref` also lists the refs below `ref`: only `ref` itself counts.
 */
async function branchTip(repoRoot: string, ref: string): Promise<{ commit: string; tree: string } | null> {
  const format = '--format=%(objecttype) %(objectname) %(tree) %(refname)';
  const out = await git(repoRoot, ['for-each-ref', format, ref]);
  for (const line of out.split('\n')) {
    const [type, commit, tree, ...name] = line.split(' ');
    if (type === 'commit' && commit && tree && name.join(' ') === ref) return { commit, tree };
  }
  return null;
}

/**
 * The tree of `base` with `patchFile` applied, written to the repository's objects through a
 * private index (nobody's index or files are touched). What the result commit holds, and what
 * `agentbox diff` shows for a run that has no commit.
 */
export async function resultTree(repoRoot: string, base: string, patchFile: string): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-result-'));
  try {
    const vars = { GIT_INDEX_FILE: path.join(dir, 'index') };
    // The base may be a fetched run's start commit, a stranger's text: never an option.
    await git(repoRoot, ['read-tree', '--end-of-options', `${base}^{tree}`], vars);
    await git(
      repoRoot,
      ['apply', '--cached', '--binary', '--whitespace=nowarn', '--no-ignore-whitespace', '--', patchFile],
      vars,
    );
    return await git(repoRoot, ['write-tree'], vars);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The tree `patchFile` makes of `base`, checked against the run's result commit when the repository
 * has it (`commit`): the commit is made from that patch byte for byte, so two trees mean one of
 * them was changed after the run ended. What `diff` shows and hashes and what `merge` applies is
 * then the patch, and only a patch that is the run's result.
 */
export async function patchResult(
  repoRoot: string,
  run: { readonly name: string; readonly id: string },
  opts: { readonly base: string; readonly patchFile: string; readonly commit: string | null },
): Promise<string> {
  const [tree, recorded] = await Promise.all([
    resultTree(repoRoot, opts.base, opts.patchFile),
    opts.commit ? commitTree(repoRoot, opts.commit) : null,
  ]);
  if (recorded !== null && recorded !== tree) {
    throw new AgentboxError(
      'RUN_CORRUPT',
      `the changes.patch of ${run.name} is not the run's result (commit ${opts.commit!.slice(0, 12)}): one of them was changed after the run ended, so it is neither shown nor merged`,
      {
        hint: `see how they differ: git -C ${repoRoot} diff ${opts.commit!.slice(0, 12)} ${tree.slice(0, 12)}; then discard the run (agentbox discard ${run.id}), or take what you trust by hand`,
      },
    );
  }
  return tree;
}

/** The tree of commit `sha`, or null when the repository has no such commit (gc dropped it). */
async function commitTree(repoRoot: string, sha: string): Promise<string | null> {
  const args = ['rev-parse', '--verify', '--quiet', '--end-of-options', `${sha}^{commit}^{tree}`];
  return (await git(repoRoot, args, {}, true)) || null;
}

/** Whether `sha` names a commit in the repository (a result commit gc may have dropped). */
export async function hasCommit(repoRoot: string, sha: string): Promise<boolean> {
  return (
    (await git(
      repoRoot,
      ['rev-parse', '--verify', '--quiet', '--end-of-options', `${sha}^{commit}`],
      {},
      true,
    )) !== ''
  );
}

/** `quiet`: a failure reads as '' (a ref that may not exist). */
async function git(
  cwd: string,
  args: string[],
  vars: Record<string, string> = {},
  quiet = false,
  input?: string,
): Promise<string> {
  const hint = `the run's changes are kept in changes.patch; run "git -C ${cwd} status" to see what git objects to`;
  const call = { cwd, vars, input, hint };
  if (!quiet) return runGit(args, call);
  const result = await tryGit(args, call);
  return result.exitCode === 0 ? result.stdout.trim() : '';
}
