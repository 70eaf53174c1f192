import { AgentboxError } from '../errors.js';
import { GitError, runGit, runGitBytes } from './exec.js';
import type { GitSettings } from './inert.js';
import { personFiltersOff } from './person-git.js';
import { type LeftOut, leftOutOf, PATCH_MAX_BYTES, patchTooLarge, stagedSizes } from './too-large.js';

export type PatchFileStatus = 'added' | 'modified' | 'deleted' | 'renamed' | 'copied' | 'type-changed';

export interface PatchFile {
  path: string;
  status: PatchFileStatus;
  /** The path before a rename or copy. */
  oldPath?: string;
  binary: boolean;
}

export interface ExportedPatch {
  /** What `git apply` takes: bytes, not text (a latin-1 file must survive byte for byte). */
  patch: Buffer;
  files: PatchFile[];
  /** git's `--stat` text. */
  stat: string;
  /** The agent's files too large for the patch, left out of it (too-large.ts). */
  leftOut?: readonly LeftOut[];
}

/**
 * Everything the agent changed in its worktree against `base`: its commits, staged, unstaged and
 * untracked (not ignored) files, as one binary-safe patch. `exclude` paths (relative to the
 * worktree) are left out and never staged. Uses the worktree's index: it is agentbox's own branch;
 * `vars` may name another (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE: the live diff, live-diff.ts).
 */
export async function exportPatch(
  worktree: string,
  opts: {
    base: string;
    exclude?: string[];
    vars?: Readonly<Record<string, string>>;
    /** The filters switched off, when the caller read them already (personFiltersOff). */
    config?: GitSettings;
    /** What git's diff output may reach (tests lower it). */
    maxPatchBytes?: number;
  },
): Promise<ExportedPatch> {
  const excluded = (p: string) => `:(top,literal,exclude)${p}`;
  const pathspec = [':/', ...(opts.exclude ?? []).map(excluded)];
  const vars = opts.vars ?? {};
  // The agent's .gitattributes may hand its files to a filter of the person's that runs them.
  const config = opts.config ?? (await personFiltersOff({ cwd: worktree, vars }));
  // Files too large for a patch are never staged: what is not in the index is not in the diff.
  const leftOut = leftOutOf(await stagedSizes(pathspec, { cwd: worktree, vars, config }));
  const add = ['add', '-A', '--pathspec-from-file=-', '--pathspec-file-nul'];
  const input = [...pathspec, ...leftOut.map((f) => excluded(f.path))].map((p) => `${p}\0`).join('');
  const added = await runGit(add, { cwd: worktree, vars, config, input });
  // NOTE: git add exits 1 when an exclude pathspec names an ignored path ("The following paths are
  // ignored…") after staging everything else correctly. Run commands are ignored through
  // .gitignore, so that is the normal case for agentbox, not a failure.
  if (added.exitCode !== 0 && !onlyIgnoredExcludes(added.stderr, opts.exclude ?? [])) {
    throw new GitError(
      add,
      { cwd: worktree, hint: `run "git add -A" in ${worktree} to see what git objects to` },
      added,
    );
  }
  // NOTE: one git process for raw + numstat + stat + patch keeps the export as cheap as a bare
  // `git diff`. The flags pin down what user config could change: prefixes (diff.noprefix),
  // colour, external diff drivers, textconv and rename detection.
  const args = ['-c', 'core.quotePath=false', 'diff', ...DIFF_FLAGS, opts.base, '--', ...pathspec];
  const diff = await runGitBytes(args, {
    cwd: worktree,
    vars,
    config,
    maxStdout: opts.maxPatchBytes ?? PATCH_MAX_BYTES,
  });
  if (diff.cut) throw patchTooLarge(worktree, opts.base, opts.maxPatchBytes ?? PATCH_MAX_BYTES);
  if (diff.exitCode !== 0) {
    const stderr = diff.stderr.trim();
    if (/bad revision|unknown revision|ambiguous argument/.test(stderr)) {
      throw new AgentboxError('BAD_REVISION', `not a commit in ${worktree}: ${opts.base}`, {
        hint: 'pass the commit the run started from (its base sha)',
      });
    }
    const hint = `run "git diff --cached ${opts.base}" in ${worktree} to see git's full message`;
    throw new GitError(args, { cwd: worktree, hint }, diff);
  }
  return { ...parseCombinedDiff(diff.stdout), leftOut };
}

const DIFF_FLAGS = [
  '--cached',
  '--binary',
  '--full-index',
  '-M',
  '--no-color',
  '--no-ext-diff',
  '--no-textconv',
  '--no-relative',
  '--submodule=short',
  '--src-prefix=a/',
  '--dst-prefix=b/',
  '--raw',
  '-z',
  '--numstat',
  '--stat',
  '--patch',
  '--end-of-options',
];

const STATUS: Record<string, PatchFileStatus> = {
  A: 'added',
  M: 'modified',
  D: 'deleted',
  R: 'renamed',
  C: 'copied',
  T: 'type-changed',
};

/**
 * Splits the output of `git diff --raw -z --numstat --stat --patch`: NUL-terminated raw records
 * (`:<modes> <shas> <status>\0<path>\0[<path>\0]`), then as many NUL-terminated numstat records
 * (`-\t-\t` marks binary; a rename is `a\td\t\0<old>\0<new>\0`), then the stat text, then a NUL,
 * then the patch. Pure.
 */
export function parseCombinedDiff(out: Buffer): ExportedPatch {
  if (out.length === 0) return { patch: Buffer.alloc(0), files: [], stat: '' };
  let pos = 0;
  const next = (): string => {
    const end = out.indexOf(0, pos);
    if (end < 0) throw badOutput(pos);
    const token = out.subarray(pos, end).toString('utf8');
    pos = end + 1;
    return token;
  };
  const files: PatchFile[] = [];
  while (out[pos] === 0x3a /* ':' */) {
    const meta = next();
    const letter = meta.slice(meta.lastIndexOf(' ') + 1, meta.lastIndexOf(' ') + 2);
    const status = STATUS[letter] ?? 'modified';
    const first = next();
    if (status === 'renamed' || status === 'copied') {
      files.push({ path: next(), status, oldPath: first, binary: false });
    } else {
      files.push({ path: first, status, binary: false });
    }
  }
  for (const file of files) {
    const counts = next();
    file.binary = counts.startsWith('-\t-\t');
    const path =
      file.oldPath === undefined ? counts.slice(counts.indexOf('\t', counts.indexOf('\t') + 1) + 1) : '';
    if (file.oldPath !== undefined) {
      next();
      if (next() !== file.path) throw badOutput(pos);
    } else if (path !== file.path) {
      throw badOutput(pos);
    }
  }
  const separator = out.indexOf(0, pos);
  if (separator < 0) throw badOutput(pos);
  return {
    files,
    stat: out.subarray(pos, separator).toString('utf8'),
    patch: out.subarray(separator + 1),
  };
}

function badOutput(at: number): AgentboxError {
  return new AgentboxError('GIT_FAILED', `unexpected output from git diff (at byte ${at})`, {
    hint: 'this is a bug in agentbox or an unsupported git version: report it with "git --version"',
  });
}

/**
 * The paths a git patch touches, both sides of a rename, in order, each once: what must be staged
 * to commit it. Reads only the headers of each `diff --git` section (names may be C-quoted). Pure.
 */
export function patchPaths(patch: Buffer | string): string[] {
  // latin1 maps each byte to one char, so hunks in any encoding pass through; names are turned
  // back into UTF-8 at the end (C-quoted names are octal bytes too).
  const text = (typeof patch === 'string' ? Buffer.from(patch) : patch).toString('latin1');
  const out = new Set<string>();
  let section: Section | null = null;
  let reading = false;
  const flush = () => {
    if (!section) return;
    for (const name of sectionNames(section))
      if (name !== null) out.add(Buffer.from(name, 'latin1').toString());
  };
  for (const line of text.split('\n')) {
    if (line.startsWith('diff --git ')) {
      flush();
      section = { git: line.slice('diff --git '.length), names: [] };
      reading = true;
    } else if (section && reading) {
      if (line.startsWith('rename from ') || line.startsWith('copy from ')) {
        section.from = unquote(line.slice(line.indexOf(' from ') + 6));
      } else if (line.startsWith('rename to ') || line.startsWith('copy to ')) {
        section.to = unquote(line.slice(line.indexOf(' to ') + 4));
        section.copy = line.startsWith('copy');
      } else if (line.startsWith('--- ') || line.startsWith('+++ ')) {
        section.names.push(headerName(line.slice(4)));
        // Hunks follow `+++`, and their `--- ` lines are content, not headers.
        reading = !line.startsWith('+++ ');
      } else if (line.startsWith('@@') || line === 'GIT binary patch' || line.startsWith('Binary files ')) {
        reading = false;
      }
    }
  }
  flush();
  return [...out];
}

interface Section {
  /** What follows `diff --git `. */
  git: string;
  /** From the `---` and `+++` lines (null for /dev/null). */
  names: (string | null)[];
  from?: string;
  to?: string;
  copy?: boolean;
}

function sectionNames(section: Section): (string | null)[] {
  // A copy leaves its source as it was: only the new file needs staging.
  if (section.to !== undefined) return section.copy ? [section.to] : [section.from ?? null, section.to];
  if (section.names.length > 0) return section.names;
  // Binary and mode-only changes have no ---/+++ lines.
  return [namesOfGitLine(section.git)];
}

/** `a/x` or `"a/x\tq"` (with a tab after names that contain a space) → `x`; /dev/null → null. */
function headerName(raw: string): string | null {
  const name = raw.startsWith('"') ? unquote(raw) : raw.replace(/\t$/, '');
  return name === '/dev/null' ? null : stripPrefix(name);
}

/** `a/x b/x` → `x` (both names are the same when there is no rename). */
function namesOfGitLine(rest: string): string | null {
  if (rest.startsWith('"')) return stripPrefix(unquote(rest));
  const half = (rest.length - 1) / 2;
  return Number.isInteger(half) ? stripPrefix(rest.slice(0, half)) : null;
}

function stripPrefix(name: string): string {
  return name.slice(name.indexOf('/') + 1);
}

const ESCAPES: Record<string, string> = { a: '\x07', b: '\b', t: '\t', n: '\n', v: '\v', f: '\f', r: '\r' };

/** Undoes git's C-style quoting of one name (`"a\\303\\251"`); unquoted names pass through. */
export function unquote(raw: string): string {
  if (!raw.startsWith('"')) return raw;
  let out = '';
  for (let i = 1; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '"') return out;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = raw[++i] ?? '';
    if (/[0-7]/.test(e)) {
      out += String.fromCharCode(Number.parseInt(raw.slice(i, i + 3), 8));
      i += 2;
    } else {
      out += ESCAPES[e] ?? e;
    }
  }
  return out;
}

/** Whether git add's complaint is only "these excluded paths are ignored". Pure. */
export function onlyIgnoredExcludes(stderr: string, exclude: readonly string[]): boolean {
  const lines = stderr.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('hint:'));
  if (lines[0] !== 'The following paths are ignored by one of your .gitignore files:') return false;
  return (
    lines.length > 1 &&
    // git names the ignored folder an excluded path lies in (node_modules for node_modules/pkg,
    // a nested repository there) as well as the path itself or a file in it.
    lines
      .slice(1)
      .every((l) => exclude.some((e) => l === e || l.startsWith(`${e}/`) || e.startsWith(`${l}/`)))
  );
}
