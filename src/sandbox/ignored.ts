import fs from 'node:fs';
import path from 'node:path';
import { isInside } from '../airlock/paths.js';
import { AgentboxError } from '../errors.js';
import { git } from '../git/exec.js';
import { keptAnswer } from '../git/prefetch.js';
import { LEDGER_DIR } from '../ledger/paths.js';

/*
 * A read-only run (scout, plan, review) reads the repository where it lies, the person's working
 * tree: what git tracks, the person's edits to it and their new files — not what they told git to
 * ignore (a `.env`, a local config, keys, build output), which is theirs, as a fix run's worktree
 * never holds it either. git's own list of the ignored entries is denied entry by entry, a wholly
 * ignored folder as one entry (`--directory`), but for the package folders of PACKAGE_FOLDERS (the
 * repository's toolchain, as the home's is opened by src/sandbox/read-allowlist.ts) and what the
 * person opened with `sandbox.allow_read`.
 */

/**
 * Ignored folders a read-only run still reads, by name, at any depth: installed packages, which a
 * question about the code the repository uses needs, and Python's bytecode of the repository's own
 * modules (one `__pycache__` per package: a project of 300 packages reached the cap, found by QA);
 * nothing of the person's is kept in them. docs/security.md quotes this table (a test compares them).
 */
export const PACKAGE_FOLDERS: readonly string[] = ['node_modules', '.venv', 'venv', 'vendor', '__pycache__'];

/**
 * The most ignored entries a run hides one by one. Each is a glob Claude Code expands at its start
 * and at every shell command (measured with 2.1.330: 3,002 entries added ~1.2 s to claude's start
 * and ~1.4 s to each command; docs/internals.md): past it the run does not start.
 */
export const MAX_IGNORED = 300;

const LIST = ['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory'];
const callIn = (repoRoot: string) => ({ cwd: repoRoot, vars: { GIT_CONFIG_NOSYSTEM: '1' } });

/**
 * The repository's ignored entries (files, and folders ignored whole) a read-only run may not
 * read, by their real paths: not a package folder, and not one that leads out of the repository
 * (a link: the fence outside is not the repository's to open or close). git's listing stops at a
 * submodule or a nested repository, whose own ignore rules say what is the person's there: each is
 * listed in turn (MAX_NESTED of them, NESTED_DEPTH deep), and a nested repository's own git config
 * (a token in its remote's URL) is hidden with them. Listed once per command (the run's start asks
 * first, so that git runs while it does the rest, then its sandbox).
 */
export function ignoredEntries(repoRoot: string): Promise<string[]> {
  return keptAnswer(`ignored ${repoRoot}`, async () => {
    const found = new Set<string>();
    const nested = { count: 0 };
    const root = fs.realpathSync(repoRoot);
    await listIgnored(root, 0, found, nested);
    // (the ledger, ignored by init's .gitignore, is hidden from every run by its own rule)
    found.delete(path.join(root, LEDGER_DIR));
    return [...found];
  });
}

/** The most submodules and nested repositories listed, and how deep. */
const MAX_NESTED = 50;
const NESTED_DEPTH = 3;

/**
 * The index (its gitlinks: a repository committed inside, by `git add` of one, with no
 * .gitmodules) and the untracked files one by one (what is not ignored is few), where an untracked
 * repository inside is `dir/`: one call.
 */
const OTHERS = ['ls-files', '-z', '--stage', '--others', '--exclude-standard'];

async function listIgnored(dir: string, depth: number, found: Set<string>, nested: { count: number }) {
  const [ignored, others] = await Promise.all([git(LIST, callIn(dir)), git(OTHERS, callIn(dir))]);
  for (const p of ignoredPaths(dir, ignored.split('\0'), realOrNull)) found.add(p);
  const inner = [...nestedRepos(others), ...submodulePaths(dir)]
    .map((name) => realOrNull(path.join(dir, name)))
    .filter(
      (p): p is string => p !== null && p !== dir && isInside(p, dir) && fs.existsSync(path.join(p, '.git')),
    );
  for (const repo of new Set(inner)) {
    if (++nested.count > MAX_NESTED || depth >= NESTED_DEPTH) {
      throw new AgentboxError(
        'SANDBOX_UNAVAILABLE',
        `${repo}: more than ${MAX_NESTED} submodules and nested git repositories, or nested more than ${NESTED_DEPTH} deep, for a read-only run to hide what each ignores`,
        {
          hint: 'run it in a smaller repository, or let runs read them: sandbox.allow_read in your own config (docs/security.md#read-only-runs)',
        },
      );
    }
    const config = realOrNull(path.join(repo, '.git', 'config'));
    if (config && isInside(config, repo)) found.add(config);
    await listIgnored(repo, depth + 1, found, nested);
  }
}

/** The repositories inside that an OTHERS listing names: gitlinks (mode 160000) and untracked `dir/`. Pure. */
export function nestedRepos(listing: string): string[] {
  const out: string[] = [];
  for (const record of listing.split('\0')) {
    const staged = /^(\d{6}) [0-9a-f]+ \d\t/.exec(record);
    if (staged) {
      if (staged[1] === '160000') out.push(record.slice(staged[0].length));
    } else if (record.endsWith('/')) out.push(record);
  }
  return out;
}

/** The submodules `.gitmodules` in `dir` names (`path = …`), as written there: checked by the caller. */
function submodulePaths(dir: string): string[] {
  let text: string;
  try {
    text = fs.readFileSync(path.join(dir, '.gitmodules'), 'utf8');
  } catch {
    return [];
  }
  return [...text.matchAll(/^\s*path\s*=\s*(.+?)\s*$/gm)].map((m) => m[1]!.replace(/^"(.*)"$/, '$1'));
}

/** Of `ignored`, those the person did not open with `sandbox.allow_read` (`opened`: real paths). Pure. */
export function hiddenIgnored(ignored: readonly string[], opened: readonly string[]): string[] {
  return ignored.filter((p) => !opened.some((o) => isInside(p, o)));
}

/** ignoredEntries' core: git's `names` (relative to `root`) to real paths. Pure given `real`. */
export function ignoredPaths(
  root: string,
  names: readonly string[],
  real: (p: string) => string | null,
): string[] {
  const paths = new Set<string>();
  for (const name of names) {
    if (name === '' || name.split('/').some((part) => PACKAGE_FOLDERS.includes(part))) continue;
    // (git ends a folder's name with a slash)
    const entry = real(path.join(root, name.replace(/\/$/, '')));
    if (entry && entry !== root && isInside(entry, root)) paths.add(entry);
  }
  return [...paths];
}

/** Refuses a run whose repository has more ignored entries to hide than MAX_IGNORED (`root`'s, real paths). */
export function assertFewIgnored(
  ignored: readonly string[],
  root: string,
  /** The person's own config file (userConfigPath), to name. */
  yours = '~/.config/agentbox/config.yaml',
): void {
  if (ignored.length <= MAX_IGNORED) return;
  const some = ignored.slice(0, 3).map((p) => path.relative(root, p));
  throw new AgentboxError(
    'SANDBOX_UNAVAILABLE',
    `${root} has ${ignored.length} files and folders git ignores (${some.join(', ')}, …): a read-only run hides each from its agent, and past ${MAX_IGNORED} that costs seconds per command`,
    {
      hint: `see them with git status --ignored --short; remove what a build can make again (git clean -X -n lists it), or let runs read them: sandbox.allow_read in your own config (${yours}), naming the folders that hold them (docs/security.md#read-only-runs)`,
    },
  );
}

function realOrNull(p: string): string | null {
  try {
    return fs.realpathSync(p);
  } catch {
    return null;
  }
}
