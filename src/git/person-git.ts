import fs from 'node:fs';
import path from 'node:path';
import { AgentboxError } from '../errors.js';
import { isExecutableFile } from '../util/fs.js';
import { type GitCall, git, runGit } from './exec.js';
import type { GitSettings } from './inert.js';

/*
 * What git would run of the person's own when agentbox's git — outside any box, as them — reads
 * or writes files a run's agent wrote: in a run's worktree (the patch, a checkpoint and its
 * restore, the live diff) and in the person's main tree at merge. Their hooks, which the runner
 * never runs (src/git/inert.ts keeps hooksPath at /dev/null), and their filter drivers, which a
 * `.gitattributes` — theirs, or one the agent wrote — hands files to: a driver's program is the
 * person's, but what it loads is not always (`sh scripts/clean.sh`; `python -m nbstripout` finds
 * the folder's modules first; a formatter reads the repository's config). Each such call switches
 * every driver off by name (filtersOff); merge's rules are src/gate/merge-git.ts.
 */

/**
 * The hooks merge's `add -N` and `commit` would run (githooks(5)). `pre-auto-gc` is left out: it
 * runs only when a commit sets off `gc --auto`, and the list says what would have run.
 */
export const COMMIT_HOOKS = [
  'commit-msg',
  'post-commit',
  'post-index-change',
  'pre-commit',
  'prepare-commit-msg',
  'reference-transaction',
] as const;

/** Where the person's hooks are (relative to `root` when inside it) and which commit hooks are there. */
export async function personHooks(root: string): Promise<{ dir: string; hooks: string[] }> {
  const where = await git(['rev-parse', '--git-path', 'hooks'], { cwd: root, personHooksPath: true });
  const dir = path.resolve(root, where);
  // git skips a hook file that is not executable (with a warning): it would not have run either.
  const hooks = COMMIT_HOOKS.filter((name) => isExecutableFile(path.join(dir, name)));
  const inside = path.relative(root, dir);
  return { dir: inside && !inside.startsWith('..') && !path.isAbsolute(inside) ? inside : dir, hooks };
}

/**
 * The filter drivers the config git reads in `call.cwd` defines (`filter.<driver>.*`), in order.
 * Read at the moment it is asked: a config file git includes may be one a patch just wrote.
 * `call` as the git that follows will run (a live diff's GIT_DIR is the main repository's).
 */
export async function definedFilters(call: Pick<GitCall, 'cwd' | 'env' | 'vars'>): Promise<string[]> {
  const listed = await runGit(['config', '-z', '--name-only', '--get-regexp', '^filter\\.'], call);
  // Exit 1: no such key at all.
  if (listed.exitCode === 1) return [];
  if (listed.exitCode !== 0) {
    throw new AgentboxError(
      'GIT_FAILED',
      `could not read the filter drivers of ${call.cwd}: ${listed.stderr.trim()}`,
      {
        hint: `run "git -C ${call.cwd} config --get-regexp '^filter\\.'" to see git's message`,
      },
    );
  }
  const drivers = new Set<string>();
  for (const key of listed.stdout.split('\0')) {
    const last = key.lastIndexOf('.');
    if (last > 'filter.'.length) drivers.add(key.slice('filter.'.length, last));
  }
  return [...drivers].sort();
}

/**
 * Settings that switch each of `drivers` off: no command, not required (a required driver with no
 * command stops git), so git reads and writes the bytes as they are. Pure.
 * NOTE: `GIT_CONFIG_PARAMETERS` splits `'key=value'` at its first `=`: a driver named with one
 * could not be switched off, so it stops the git that would have run it instead.
 */
export function filtersOff(drivers: readonly string[]): GitSettings {
  const out: [string, string][] = [];
  for (const driver of drivers) {
    if (/[=\n]/.test(driver)) {
      throw new AgentboxError('GIT_FAILED', `cannot switch off your git filter ${JSON.stringify(driver)}`, {
        hint: `agentbox runs no git filter on a run's files: rename it in your git config (git config --rename-section "filter.${driver}" filter.<new name>)`,
      });
    }
    for (const key of ['clean', 'smudge', 'process']) out.push([`filter.${driver}.${key}`, '']);
    out.push([`filter.${driver}.required`, 'false']);
  }
  return out;
}

/**
 * Which of `files` the attributes now on disk in `root` give one of `drivers` as their filter, in
 * order. `git check-attr` runs no driver.
 */
export async function filteredFiles(
  root: string,
  files: readonly string[],
  drivers: readonly string[],
): Promise<{ path: string; driver: string }[]> {
  if (files.length === 0 || drivers.length === 0) return [];
  const input = files.map((f) => `${f}\0`).join('');
  const out = await git(['check-attr', '-z', '--stdin', 'filter'], { cwd: root, input });
  const fields = out.split('\0');
  const found: { path: string; driver: string }[] = [];
  for (let i = 0; i + 2 < fields.length; i += 3) {
    const file = fields[i]!;
    const driver = fields[i + 2]!;
    if (drivers.includes(driver)) found.push({ path: file, driver });
  }
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * The files inside `root`'s working tree (relative paths, `.git` aside) that the config git reads
 * there includes (`include.path`, `includeIf.<cond>.path`, followed as git follows them; a
 * condition is not weighed: any such file counts). A patch that writes one writes git's config:
 * a `gpg.program` with `commit.gpgSign`, a filter driver. A file that does not exist yet counts.
 */
export async function configFilesInTree(root: string): Promise<string[]> {
  // `--type=path` expands `~/` as git does.
  const args = ['config', '-z', '--type=path', '--show-origin', '--get-regexp', '^include(if\\..+)?\\.path$'];
  const listed = await runGit(args, { cwd: root });
  if (listed.exitCode !== 0) return [];
  const found = new Set<string>();
  const fields = listed.stdout.split('\0');
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const origin = fields[i]!;
    const value = fields[i + 1]!.slice(fields[i + 1]!.indexOf('\n') + 1);
    if (!origin.startsWith('file:') || value === '') continue;
    const from = path.dirname(path.resolve(root, origin.slice('file:'.length)));
    const target = path.resolve(from, value);
    for (const file of [target, realTarget(target)]) {
      const inside = path.relative(root, file);
      if (
        inside &&
        !inside.startsWith('..') &&
        !path.isAbsolute(inside) &&
        inside.split(path.sep)[0] !== '.git'
      )
        found.add(inside.split(path.sep).join('/'));
    }
  }
  return [...found].sort();
}

/** The path with its existing folders' symlinks resolved (the file itself may not exist yet). */
function realTarget(file: string): string {
  try {
    return path.join(fs.realpathSync(path.dirname(file)), path.basename(file));
  } catch {
    return file;
  }
}

/** Settings that switch off every filter driver the config of `call` defines (for its git to follow). */
export async function personFiltersOff(call: Pick<GitCall, 'cwd' | 'env' | 'vars'>): Promise<GitSettings> {
  return filtersOff(await definedFilters(call));
}
