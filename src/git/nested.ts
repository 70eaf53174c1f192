import fs from 'node:fs';
import path from 'node:path';
import { type GitCall, git } from './exec.js';

/**
 * A `.git` below a worktree's root — a nested repository (`git init inner`), a `.git` file
 * pointing at a git dir elsewhere, `git init` in an empty submodule folder — is never followed by
 * agentbox: its folder stays out of every `git add` (export, checkpoints), and when a run ends the
 * `.git` itself is set aside into the run folder, so a person's own `git status` in the worktree
 * cannot run what its config says either (git would enter it as a submodule and honour its
 * `core.fsmonitor`, hooks and filters). The agent's files in that folder stay where they are.
 */
export interface NestedGit {
  /** The folder holding the `.git`, relative to the worktree, `/`-separated. */
  readonly path: string;
  /**
   * A `.git` folder (a repository), a `.git` file (naming a git dir elsewhere), or a symlink
   * (git follows one named `.git` to a git dir).
   */
  readonly kind: 'folder' | 'file' | 'link';
}

/**
 * Folders the search walks before it asks git which folders git ignores as a whole: a real
 * project's worktree holds node_modules/, target/ or a venv, thousands of folders walked at every
 * turn's end while claude waited for its Stop hook (and git never enters an ignored folder: a
 * repository there is nothing its `add` or `status` follows).
 */
export const WALK_BUDGET = 1_000;

/**
 * Every `.git` below `worktree`'s root (folder, file or symlink), in path order. Symlinked folders
 * are not walked into (git does not walk them either); a `.git` is not entered; nor are the
 * folders in `skip` (`/`-separated, relative: ignored ones). NOTE: the name is compared without
 * case: on a case-insensitive file system `.GIT` is the same entry to git.
 */
export function findNestedGit(worktree: string, skip: ReadonlySet<string> = new Set()): NestedGit[] {
  return walkNested(worktree, skip, Number.POSITIVE_INFINITY) ?? [];
}

/**
 * findNestedGit for a worktree of any size: past WALK_BUDGET folders, the folders git ignores as a
 * whole (`ignored`, asked only then) are left out of the walk; when git cannot say, none is.
 */
export async function nestedGitIn(
  worktree: string,
  ignored: () => Promise<ReadonlySet<string>>,
): Promise<NestedGit[]> {
  const quick = walkNested(worktree, new Set(), WALK_BUDGET);
  if (quick) return quick;
  return findNestedGit(worktree, await ignored().catch(() => new Set<string>()));
}

/** The folders git ignores as a whole (node_modules/), as git lists them without walking into them. */
export async function ignoredFolders(call: GitCall): Promise<Set<string>> {
  const out = await git(
    ['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory', '--', ':/'],
    call,
  );
  return new Set(
    out
      .split('\0')
      .filter((p) => p.endsWith('/'))
      .map((p) => p.slice(0, -1)),
  );
}

/** The walk; null once it has entered more than `budget` folders. */
function walkNested(worktree: string, skip: ReadonlySet<string>, budget: number): NestedGit[] | null {
  const found: NestedGit[] = [];
  let entered = 0;
  const walk = (rel: string): boolean => {
    if (++entered > budget) return false;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(worktree, rel), { withFileTypes: true });
    } catch {
      return true; // gone or unreadable meanwhile: nothing git could follow either
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.name.toLowerCase() === '.git') {
        if (rel) found.push({ path: rel, kind: kindOf(entry) });
      } else if (entry.isDirectory() && !skip.has(child) && !walk(child)) {
        return false;
      }
    }
    return true;
  };
  return walk('') ? found : null;
}

const kindOf = (entry: fs.Dirent): NestedGit['kind'] =>
  entry.isDirectory() ? 'folder' : entry.isSymbolicLink() ? 'link' : 'file';

/** The pathspecs that keep nested repositories' folders out of a `git add`. Pure. */
export function nestedExcludes(nested: readonly NestedGit[]): string[] {
  return nested.map((n) => `:(top,literal,exclude)${n.path}`);
}

/**
 * Moves each nested `.git` into `into` (`<n>.git`, numbered in order), with `index.txt` naming
 * where each came from; returns where each went, relative to `into`'s parent folder's parent
 * (the run folder when `into` is `<run>/raw/nested-git`).
 */
export function setAsideNestedGit(worktree: string, nested: readonly NestedGit[], into: string): string[] {
  if (nested.length === 0) return [];
  fs.mkdirSync(into, { recursive: true });
  const start = fs.readdirSync(into).filter((f) => f.endsWith('.git')).length;
  const moved: string[] = [];
  const lines: string[] = [];
  for (const [i, n] of nested.entries()) {
    const dir = path.join(worktree, n.path);
    const name = fs.readdirSync(dir).find((f) => f.toLowerCase() === '.git') ?? '.git';
    const target = path.join(into, `${start + i + 1}.git`);
    move(path.join(dir, name), target);
    moved.push(path.relative(path.dirname(path.dirname(into)), target));
    lines.push(`${path.basename(target)}\t${n.path}/${name}\n`);
  }
  fs.appendFileSync(path.join(into, 'index.txt'), lines.join(''));
  return moved;
}

function move(from: string, to: string): void {
  try {
    fs.renameSync(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    // Another file system: copied as it is (symlinks stay links), then removed.
    fs.cpSync(from, to, { recursive: true, verbatimSymlinks: true });
    fs.rmSync(from, { recursive: true, force: true });
  }
}
