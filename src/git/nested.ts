import fs from 'node:fs';
import path from 'node:path';

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
 * Every `.git` below `worktree`'s root (folder, file or symlink), in path order. Symlinked folders
 * are not walked into (git does not walk them either); a `.git` is not entered; nor are the
 * folders in `skip` (`/`-separated, relative: ignored ones a live diff must not pay for). NOTE: the name is compared without case: on a
 * case-insensitive file system `.GIT` is the same entry to git.
 */
export function findNestedGit(worktree: string, skip: ReadonlySet<string> = new Set()): NestedGit[] {
  const found: NestedGit[] = [];
  const walk = (rel: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(worktree, rel), { withFileTypes: true });
    } catch {
      return; // gone or unreadable meanwhile: nothing git could follow either
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.name.toLowerCase() === '.git') {
        if (rel) found.push({ path: rel, kind: kindOf(entry) });
      } else if (entry.isDirectory() && !skip.has(child)) {
        walk(child);
      }
    }
  };
  walk('');
  return found;
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
