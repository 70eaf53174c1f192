import fs from 'node:fs';
import path from 'node:path';

/**
 * Empty files and folders Claude Code's sandbox leaves on the host (mount points bubblewrap needs,
 * and its own bookkeeping), measured with 2.1.330. A run removes those it created (they were not
 * there before it started) and that are still empty, so the person's repository is left as it was.
 */
export function leftoverCandidates(opts: {
  readonly repoRoot: string;
  readonly mainGitDir: string;
  /** null: a read-only run, whose commands run in the repository itself. */
  readonly worktree: string | null;
  readonly worktreeGitDir: string | null;
}): string[] {
  return [
    path.join(opts.repoRoot, '.claude', '.cc-writes'),
    ...(opts.worktree ? [path.join(opts.worktree, '.claude', '.cc-writes')] : []),
    path.join(opts.mainGitDir, 'glab-cli'),
    path.join(opts.mainGitDir, 'config.worktree'),
    path.join(opts.mainGitDir, 'info', '.claude-sandbox-noreplace'),
    ...(opts.worktreeGitDir
      ? [path.join(opts.worktreeGitDir, 'config.worktree'), path.join(opts.worktreeGitDir, 'glab-cli')]
      : []),
  ];
}

/** Which candidates do not exist yet: the ones the run may clean up afterwards. */
export function absentBefore(candidates: readonly string[]): string[] {
  return candidates.filter((p) => !fs.existsSync(p));
}

/** Removes each path that is an empty folder or an empty file now. Never throws. */
export function removeEmpty(paths: readonly string[]): void {
  for (const p of paths) {
    try {
      const stat = fs.lstatSync(p);
      if (stat.isDirectory() && fs.readdirSync(p).length === 0) fs.rmdirSync(p);
      else if (stat.isFile() && stat.size === 0) fs.rmSync(p);
    } catch {
      // Gone, not empty, or not ours to remove: leave it.
    }
  }
}

/**
 * Runs of one repository share its git dir, so its mount points: bubblewrap binds each of them on
 * every shell command, and one that went while a sibling ran failed that sibling's next command
 * ("bwrap: Can't get type of source …/.git/glab-cli", an attempt of a group whose sibling ended
 * first). So a run that ends while another of the repository runs hands its leftovers to `file`,
 * and the last one to end removes them all.
 */
export interface LeftoverShare {
  /** Another run of this repository is running now. */
  othersRunning(): boolean;
  /** Where handed-over paths wait, a line each (in the ledger, which no agent may write). */
  readonly file: string;
}

/** Removes a run's leftovers at its end, or hands them over (see LeftoverShare). Never throws. */
export function releaseLeftovers(own: readonly string[], share?: LeftoverShare): void {
  if (!share) {
    removeEmpty(own);
    return;
  }
  try {
    if (share.othersRunning()) {
      if (own.length > 0) {
        fs.mkdirSync(path.dirname(share.file), { recursive: true });
        fs.appendFileSync(share.file, own.map((p) => `${p}\n`).join(''));
      }
      return;
    }
    let waiting: string[] = [];
    try {
      waiting = fs
        .readFileSync(share.file, 'utf8')
        .split('\n')
        .filter((p) => path.isAbsolute(p));
      fs.rmSync(share.file, { force: true });
    } catch {
      // None handed over.
    }
    removeEmpty([...new Set([...own, ...waiting])]);
  } catch {
    // Leftovers are empty files and folders: left, they harm nothing.
  }
}
