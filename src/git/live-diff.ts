import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Env } from '../util/env.js';
import { git } from './exec.js';
import { findNestedGit, ignoredFolders } from './nested.js';
import { type ExportedPatch, exportPatch } from './patch.js';
import { personFiltersOff } from './person-git.js';

/** A worktree's changes so far: the patch changes.patch would hold now, and the same as a tree. */
export interface LiveTree extends ExportedPatch {
  /** A tree object: `git diff <base> <tree>` shows the change, with `objects` among git's vars. */
  readonly tree: string;
  /** GIT_OBJECT_DIRECTORY and its alternates: where `tree` and the new blobs are, until dispose. */
  readonly objects: Readonly<Record<string, string>>;
  /** Removes the temp folder (index and objects); safe twice. */
  dispose(): void;
}

/**
 * The changes in a worktree an agent is working in right now, against `base`, exactly as
 * exportPatch (changes.patch) takes them, without touching the worktree, its index or the main
 * repository: the files are staged into a private index in a temp folder (GIT_INDEX_FILE), seeded
 * from the worktree's own index for its stat cache, and their blobs go to objects in that folder
 * too (the main repository's are borrowed read-only), so a page refreshing the diff of a growing
 * file does not fill the person's repository.
 *
 * NOTE: git is never pointed at the worktree's `.git` (the agent may rewrite it to name a git dir
 * whose config it wrote: a filter, a textconv): GIT_DIR is the main repository's git dir,
 * read-only to the sandbox, and GIT_WORK_TREE the worktree. Every call goes through the one runner
 * (exec.ts, inert.ts). `exclude` is the caller's (changesExcludes); nested repositories found
 * now are left out as well, as the run's end will set them aside.
 */
export async function liveTree(input: {
  readonly commonDir: string;
  readonly worktree: string;
  readonly base: string;
  readonly exclude: readonly string[];
  readonly env?: Env;
}): Promise<LiveTree> {
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-live-'));
  const dispose = () => fs.rmSync(temp, { recursive: true, force: true });
  try {
    const objects = {
      GIT_OBJECT_DIRECTORY: path.join(temp, 'objects'),
      GIT_ALTERNATE_OBJECT_DIRECTORIES: path.join(input.commonDir, 'objects'),
    };
    fs.mkdirSync(path.join(temp, 'objects', 'info'), { recursive: true });
    fs.mkdirSync(path.join(temp, 'objects', 'pack'));
    const index = path.join(temp, 'index');
    const vars = {
      GIT_DIR: input.commonDir,
      GIT_WORK_TREE: input.worktree,
      GIT_INDEX_FILE: index,
      ...objects,
    };
    const where = { cwd: input.worktree, vars, ...(input.env ? { env: input.env } : {}) };
    // Writing an index compares racily clean files by content, through their filter: every filter
    // driver of the person's is off (person-git.ts), since the agent's .gitattributes chose them.
    const config = await personFiltersOff(where);
    const call = { ...where, config };
    const own = worktreeIndex(input.commonDir, input.worktree);
    if (own) copyIndex(own, index);
    else await git(['read-tree', input.base], call);
    const nested = findNestedGit(input.worktree, await ignoredFolders(call)).map((n) => n.path);
    const exclude = [...new Set([...input.exclude, ...nested])];
    const changes = await exportPatch(input.worktree, { base: input.base, exclude, vars, config });
    const tree = await git(['write-tree'], call);
    return { ...changes, tree, objects, dispose };
  } catch (error) {
    dispose();
    throw error;
  }
}

/**
 * The worktree's own index, found from the main git dir's records (`worktrees/<id>/gitdir` names
 * the worktree's `.git`), never from the worktree's `.git` file; null when none matches.
 */
export function worktreeIndex(commonDir: string, worktree: string): string | null {
  const admin = path.join(commonDir, 'worktrees');
  const want = realpath(worktree);
  let ids: string[];
  try {
    ids = fs.readdirSync(admin);
  } catch {
    return null;
  }
  for (const id of ids) {
    let named: string;
    try {
      named = fs.readFileSync(path.join(admin, id, 'gitdir'), 'utf8').trim();
    } catch {
      continue;
    }
    const index = path.join(admin, id, 'index');
    if (realpath(path.dirname(named)) === want && fs.existsSync(index)) return index;
  }
  return null;
}

/**
 * NOTE: with its time: git trusts an entry's stat data only when the file is older than the
 * index file itself ("racy git"); a copy made now would hide a same-size edit of the last second.
 */
function copyIndex(from: string, to: string): void {
  fs.copyFileSync(from, to);
  const { atime, mtime } = fs.statSync(from);
  fs.utimesSync(to, atime, mtime);
}

function realpath(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}
