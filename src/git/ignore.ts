import path from 'node:path';
import { GitError, runGit } from './exec.js';
import type { Repo } from './repo.js';

export const IGNORE_MARK = '# agentbox: run ledger and run-scoped commands (added by agentbox init)';

export interface IgnoreRule {
  /** The line written to the ignore file. */
  readonly pattern: string;
  /** A path that the pattern must cover; asked of `git check-ignore`. */
  readonly probe: string;
}

export const LEDGER_IGNORES: readonly IgnoreRule[] = [
  { pattern: '.agents/', probe: '.agents/INDEX.md' },
  { pattern: '.claude/commands/run_*/', probe: '.claude/commands/run_0a1b2c/scout_0a1b2c.md' },
];

export type IgnoreScope = 'shared' | 'local';

/** shared: the committed `.gitignore`; local: `.git/info/exclude`, which only this clone reads. */
export function ignoreFilePath(repo: Repo, scope: IgnoreScope): string {
  return scope === 'shared'
    ? path.join(repo.root, '.gitignore')
    : path.join(repo.commonDir, 'info', 'exclude');
}

/** The rules git does not already ignore (by any ignore file, including the user's own lines). */
export async function unignored(root: string, rules: readonly IgnoreRule[]): Promise<IgnoreRule[]> {
  const missing: IgnoreRule[] = [];
  for (const rule of rules) {
    // NOTE: exit 0 = ignored, 1 = not ignored, 128 = error.
    const args = ['check-ignore', '-q', '--no-index', rule.probe];
    const result = await runGit(args, { cwd: root });
    if (result.exitCode === 1) missing.push(rule);
    else if (result.exitCode !== 0) throw new GitError(args, { cwd: root }, result);
  }
  return missing;
}

/** The ignore file with agentbox's block appended (or extended). Pure. */
export function addIgnoreBlock(text: string | undefined, patterns: readonly string[]): string {
  const current = text ?? '';
  if (patterns.length === 0) return current;
  const lines = current.split('\n');
  const at = lines.indexOf(IGNORE_MARK);
  if (at >= 0) {
    let end = at + 1;
    while (end < lines.length && lines[end] !== '') end++;
    lines.splice(end, 0, ...patterns);
    return lines.join('\n');
  }
  // NOTE: one "\n" either way: after a final newline it makes the blank line above the block (also
  // when the file already ends with a blank line), after a file without one it only ends the last
  // line. removeIgnoreBlock takes out exactly that, so add then remove gives back the same bytes.
  const sep = current === '' ? '' : '\n';
  return `${current}${sep}${IGNORE_MARK}\n${patterns.join('\n')}\n`;
}

/**
 * The ignore file without agentbox's block: the mark and the lines under it that agentbox
 * writes. A line the user added under the mark stays. Pure.
 */
export function removeIgnoreBlock(
  text: string,
  known: readonly string[],
): { text: string; removed: string[] } {
  const lines = text.split('\n');
  const at = lines.indexOf(IGNORE_MARK);
  if (at < 0) return { text, removed: [] };
  const removed: string[] = [];
  let end = at + 1;
  while (end < lines.length && lines[end] !== '') end++;
  const kept = lines.slice(at + 1, end).filter((line) => {
    if (known.includes(line)) {
      removed.push(line);
      return false;
    }
    return true;
  });
  const before = lines.slice(0, at);
  const after = lines.slice(end);
  // Drop the separator addIgnoreBlock put above the block: the blank line, or, when the block
  // ends a file that had no final newline before, the newline that ended the user's last line.
  if (kept.length === 0 && before.length > 0) {
    if (before.at(-1) === '' && (after.length === 0 || after[0] === '')) before.pop();
    else if (after.length === 1 && after[0] === '') after.pop();
  }
  return { text: [...before, ...kept, ...after].join('\n'), removed };
}

/** The lines of agentbox's block in an ignore file (none when it has no block). Pure. */
export function blockPatterns(text: string | undefined): string[] {
  const lines = (text ?? '').split('\n');
  const at = lines.indexOf(IGNORE_MARK);
  if (at < 0) return [];
  let end = at + 1;
  while (end < lines.length && lines[end] !== '') end++;
  return lines.slice(at + 1, end);
}

export interface IgnoreEdit {
  readonly text: string;
  /** agentbox's lines taken out. */
  readonly removed: readonly string[];
  /** Kept lines moved here from the shared file. */
  readonly added: readonly string[];
}

/**
 * Both ignore files without agentbox's lines (`known`), except the patterns in `keep`, which
 * cover what stays on disk (a kept ledger): those stay ignored, in the local file, so the shared
 * file a team commits is as it was before init. null where a file does not change. Pure.
 */
export function planIgnoreRemoval(
  files: { readonly shared: string | undefined; readonly local: string | undefined },
  known: readonly string[],
  keep: readonly string[],
): { shared: IgnoreEdit | null; local: IgnoreEdit | null } {
  let moved: string[] = [];
  let shared: IgnoreEdit | null = null;
  if (files.shared !== undefined) {
    const cut = removeIgnoreBlock(files.shared, known);
    moved = keep.filter((p) => cut.removed.includes(p));
    if (cut.text !== files.shared) shared = { ...cut, added: [] };
  }
  const before = blockPatterns(files.local);
  const stays = keep.filter((p) => before.includes(p) || moved.includes(p));
  const added = moved.filter((p) => !before.includes(p));
  // The block is taken out whole and written again with what stays, under its mark, so that a
  // later uninstall --purge still knows those lines are agentbox's.
  const cut = removeIgnoreBlock(files.local ?? '', known);
  const removed = cut.removed.filter((p) => !stays.includes(p));
  const local =
    removed.length === 0 && added.length === 0
      ? null
      : { text: addIgnoreBlock(cut.text, stays), removed, added };
  return { shared, local };
}
