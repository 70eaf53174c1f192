import path from 'node:path';
import { prefetchGit, runGit } from '../git/exec.js';
import type { Env } from '../util/env.js';
import { writeScratchSync } from '../util/fs.js';

/**
 * What a run's git takes from the person's git config: the identity its commits carry, and how line
 * endings are kept. `~/.gitconfig` and `~/.config/git/config` may hold a credential (a
 * `url.<x>.insteadOf` with a token, `http.extraHeader`): the fence denies them, and the run's git
 * reads a global config of its own instead (`GIT_CONFIG_GLOBAL`), written here before it starts,
 * read-only to the run. An allowlist: nothing else of the person's config reaches it.
 */
export const RUN_GIT_KEYS: readonly string[] = ['user.name', 'user.email', 'core.autocrlf'];

/** A value as git config reads it back: quoted, `\` and `"` escaped, control characters dropped. */
function quote(value: string): string {
  const clean = value.replace(/[\u0000-\u001f\u007f]/g, '');
  return `"${clean.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The file's text for `values` (key → value; keys from RUN_GIT_KEYS). Pure. */
export function runGitconfigText(values: Readonly<Record<string, string>>): string {
  const sections = new Map<string, string[]>();
  for (const key of RUN_GIT_KEYS) {
    const value = values[key];
    if (value === undefined) continue;
    const [section, name] = key.split('.') as [string, string];
    sections.set(section, [...(sections.get(section) ?? []), `\t${name} = ${quote(value)}`]);
  }
  const body = [...sections].map(([section, lines]) => `[${section}]\n${lines.join('\n')}\n`).join('');
  return `# agentbox: this run's global git config (yours is not readable in the run)\n${body}`;
}

const RUN_GIT_READ = [
  'config',
  '--null',
  '--get-regexp',
  `^(${RUN_GIT_KEYS.map((k) => k.replace('.', '\\.')).join('|')})$`,
];

/** writeRunGitconfig's read, started now (a read-only run's start: src/git/prefetch.ts). */
export function prefetchRunGitconfig(repoRoot: string, env: Env): void {
  prefetchGit(RUN_GIT_READ, { cwd: repoRoot, env });
}

/**
 * Writes the run's global git config into `dir` with the person's values of RUN_GIT_KEYS as git
 * resolves them in the repository (includes and `includeIf` of their config applied), and returns
 * its path.
 */
export async function writeRunGitconfig(dir: string, repoRoot: string, env: Env): Promise<string> {
  // One git for all the keys (every run starts with it): `key\nvalue\0` each, the last one wins.
  const got = await runGit(RUN_GIT_READ, { cwd: repoRoot, env });
  const values: Record<string, string> = {};
  for (const entry of got.exitCode === 0 ? got.stdout.split('\0') : []) {
    const cut = entry.indexOf('\n');
    if (cut > 0) values[entry.slice(0, cut).toLowerCase()] = entry.slice(cut + 1);
  }
  const file = path.join(dir, 'gitconfig');
  writeScratchSync(file, runGitconfigText(values), 0o600);
  return file;
}
