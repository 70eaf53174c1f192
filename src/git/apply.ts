import fs from 'node:fs';
import path from 'node:path';
import { AgentboxError, fsError } from '../errors.js';
import { terminalName } from '../util/terminal-text.js';
import { GitError, type GitResult, runGit, git as runGitText } from './exec.js';
import type { GitSettings } from './inert.js';
import { patchPaths } from './patch.js';
import { parseEntries, summaryLines } from './patch-entries.js';
import { type Inspection, inspectPatch } from './sensitive.js';
import { uninspectedPaths } from './uninspected.js';

// NOTE: `git apply` runs in `repoRoot`, which must be the top of the working tree: from a
// subfolder git silently skips the paths outside it. Messages are read in the C locale.
// `--whitespace=nowarn` and `--no-ignore-whitespace` override apply.whitespace=fix|error and
// apply.ignoreWhitespace: the agent's bytes land as they are, against context that matches exactly.
const APPLY = ['apply', '--binary', '--whitespace=nowarn', '--no-ignore-whitespace'];

/**
 * What the patch would change, for a person to read: `git apply --stat` (which quotes a name as
 * terminalName does), then the summary's lines made here (summaryLines: git's own `--summary`
 * writes names raw). Shown exact (terminalExact): a name's bytes are the agent's.
 */
export async function patchStat(repoRoot: string, patchFile: string): Promise<string> {
  const file = path.resolve(repoRoot, patchFile);
  const patch = readPatch(file);
  if (patch.length === 0) return '';
  const stat = await applyStat(repoRoot, file);
  const summary = summaryLines(parseEntries(patch));
  return summary.length === 0 ? stat : `${stat.trimEnd()}\n${summary.join('\n')}\n`;
}

/** git's `--stat` of a patch file (not empty), read by `git apply`: the lines of a diffstat. */
export async function applyStat(repoRoot: string, file: string): Promise<string> {
  const args = ['apply', '--stat', '--', file];
  const result = await runGit(args, { cwd: repoRoot });
  if (result.exitCode !== 0) throw unreadable(repoRoot, args, result);
  return result.stdout;
}

export type CheckResult = { ok: true; files: string[] } | { ok: false; conflicts: string[]; message: string };

/**
 * Whether the patch applies cleanly to the working tree, without touching it. `config`: settings
 * for git over the inert ones (merge's filters switched off, src/git/person-git.ts), the same as
 * the apply's.
 */
export async function checkPatch(
  repoRoot: string,
  patchFile: string,
  config: GitSettings = [],
): Promise<CheckResult> {
  const file = path.resolve(repoRoot, patchFile);
  const patch = readPatch(file);
  if (patch.length === 0) return { ok: true, files: [] };
  const result = await runGit([...APPLY, '--check', '--', file], { cwd: repoRoot, config });
  if (result.exitCode === 0) return { ok: true, files: patchPaths(patch) };
  const conflicts = conflictNames(result.stderr, patchPaths(patch));
  return { ok: false, conflicts, message: result.stderr.trim() };
}

/**
 * Applies the patch to the working tree (not the index). All or nothing: git checks every file
 * before it writes any, so when this throws MERGE_CONFLICT the tree is exactly as before.
 * Returns the paths it touched, both sides of renames.
 */
export async function applyPatch(
  repoRoot: string,
  patchFile: string,
  config: GitSettings = [],
): Promise<{ files: string[] }> {
  const file = path.resolve(repoRoot, patchFile);
  const patch = readPatch(file);
  if (patch.length === 0) return { files: [] };
  const args = [...APPLY, '--', file];
  const result = await runGit(args, { cwd: repoRoot, config });
  if (result.exitCode === 0) return { files: patchPaths(patch) };
  const conflicts = conflictNames(result.stderr, patchPaths(patch));
  if (conflicts.length === 0) throw unreadable(repoRoot, args, result);
  throw new AgentboxError(
    'MERGE_CONFLICT',
    `the patch does not apply to ${repoRoot}: conflicts in ${conflicts.map(terminalName).join(', ')}`,
    {
      hint:
        `nothing was changed. Those files changed here since the run started; merge by hand with ` +
        `"git apply --3way ${file}", which leaves conflict markers to resolve`,
    },
  );
}

/** One pattern per `git apply` message that names a file; the name is group 1. */
const APPLY_ERRORS = [
  /^error: patch failed: (.+):\d+$/,
  /^error: (.+): (?:patch does not apply|does not match index|already exists in (?:working directory|index)|does not exist in index|wrong type|No such file or directory|Not a directory|Is a directory|Permission denied)$/,
  /^error: cannot apply binary patch to '(.+)' without full index line$/,
  /^error: binary patch does not apply to '(.+)'$/,
  /^error: binary patch to '(.+)' creates incorrect result/,
  /^error: the patch applies to '(.+)' \([0-9a-f]+\), which does not match the current contents\.$/,
  /^error: the patch applies to an empty '(.+)' but it is not empty$/,
  /^error: (.+) has type [0-7]+, expected [0-7]+$/,
  /^error: new mode \([0-7]+\) of (.+) does not match old mode/,
  /^error: affected file '(.+)' is beyond a symbolic link$/,
  /^error: deleted file (.+) still has contents$/,
  /^error: path (.+) has been renamed\/deleted$/,
];

/** The files named by `git apply`'s error messages: unique, in order. Pure. */
export function parseApplyErrors(stderr: string): string[] {
  const out = new Set<string>();
  for (const line of stderr.split(/\r?\n/)) {
    for (const pattern of APPLY_ERRORS) {
      const name = pattern.exec(line)?.[1];
      if (name !== undefined) {
        out.add(name);
        break;
      }
    }
  }
  return [...out];
}

/**
 * The patch's own names for the files git's messages name: git writes each control character of
 * a name as `?` in a message, so the name it prints is not the file's. A name that stands for
 * exactly one of the patch's paths is that path; any other stays as git wrote it. Pure.
 */
export function realNames(named: readonly string[], paths: readonly string[]): string[] {
  return named.map((name) => {
    if (!name.includes('?')) return name;
    const pattern = new RegExp(`^${name.split('?').map(escapeRegExp).join('[\\x00-\\x1f\\x7f?]')}$`);
    const found = paths.filter((p) => pattern.test(p));
    return found.length === 1 ? found[0]! : name;
  });
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The patch's files `git apply`'s messages name. A name with a line end spans two lines of git's
 * message (git writes every other control as `?`, a line end as it is), which no pattern of one
 * line reads: such a path is looked for whole, as git writes it, after `error: `. Pure.
 */
export function conflictNames(stderr: string, paths: readonly string[]): string[] {
  const named = realNames(parseApplyErrors(stderr), paths);
  for (const path of paths) {
    if (!path.includes('\n') || named.includes(path)) continue;
    const shown = path.replace(/[\x00-\x09\x0b-\x1f\x7f]/g, '?');
    if ([`error: ${shown}:`, `error: patch failed: ${shown}:`, `'${shown}'`].some((s) => stderr.includes(s)))
      named.push(path);
  }
  return named;
}

function gitIn(cwd: string, args: string[]): Promise<string> {
  // Literal pathspecs: a file named `*.ts` is that file, not a glob.
  return runGitText(['--literal-pathspecs', ...args], {
    cwd,
    hint: `run "git status" in ${cwd} to see what git objects to`,
  });
}

/**
 * What is sensitive in the patch for this repository (see src/git/sensitive.ts), with the facts
 * the pure inspection cannot read itself: core.hooksPath, and the tree's symlinks (when the patch
 * has a symlink or a rename, the only changes they matter to).
 */
export async function inspectPatchFile(repoRoot: string, patchFile: string): Promise<Inspection> {
  const patch = readPatch(path.resolve(repoRoot, patchFile));
  // The person's hooksPath, not the runner's own /dev/null (inert.ts), which would hide it.
  const hooks = await runGit(['config', '--path', '--get', 'core.hooksPath'], {
    cwd: repoRoot,
    personHooksPath: true,
  });
  const configured = hooks.exitCode === 0 ? hooks.stdout.trim() : '';
  // The root is a real path; so must an absolute hooksPath be to compare (/tmp → /private/tmp).
  const hooksPath =
    path.isAbsolute(configured) && exists(configured) ? fs.realpathSync(configured) : configured;
  const links = LINKS_MATTER.test(patch.toString('latin1')) ? await treeSymlinks(repoRoot) : new Map();
  const inspection = inspectPatch(patch, repoRoot, { hooksPath, symlinks: links });
  const unnamed = await uninspectedPaths(repoRoot, path.resolve(repoRoot, patchFile), patch);
  if (unnamed.length === 0) return inspection;
  const detail =
    'a change outside any `diff --git` section: agentbox did not inspect it, and never applies it';
  return {
    ...inspection,
    refused: [
      ...inspection.refused,
      ...unnamed.map((file) => ({ path: file, kind: 'uninspected' as const, detail })),
    ],
  };
}

const LINKS_MATTER = /^(?:(?:new file mode|new mode|index \S+) 120000|(?:rename|copy) from .*)$/m;

/** The tracked symlinks of the working tree, with their targets as they are on disk. */
async function treeSymlinks(repoRoot: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const record of (await gitIn(repoRoot, ['ls-files', '-s', '-z'])).split('\0')) {
    if (!record.startsWith('120000 ')) continue;
    const file = record.slice(record.indexOf('\t') + 1);
    try {
      out.set(file, fs.readlinkSync(path.join(repoRoot, file)));
    } catch {
      // Gone from the working tree, or no longer a link: nothing to point through.
    }
  }
  return out;
}

function exists(file: string): boolean {
  try {
    fs.lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

function readPatch(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (error) {
    throw fsError(error, 'read the patch', file);
  }
}

/** git could not read the patch at all (it names no file it refused). */
function unreadable(repoRoot: string, args: string[], result: GitResult): GitError {
  const file = args.at(-1);
  const hint = `nothing was changed; check the patch with "git apply --check -v ${file}"`;
  return new GitError(args, { cwd: repoRoot, hint }, result);
}
