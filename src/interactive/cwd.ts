import fs from 'node:fs';
import path from 'node:path';
import { AgentboxError } from '../errors.js';

export type CwdSource = 'cli_flag' | 'config' | 'repo_root';

/**
 * The working directory of an interactive session, resolved once, in a fixed order: the --workdir flag
 * (relative to where agentbox was started), the config's `interactive.cwd` (relative to the
 * repository root), the repository root. A value that names no folder is an error naming where it
 * came from, never a silent fall-through to the next source (a typo would move the session).
 * NOTE: the config's folder must lie inside the repository, links resolved: its rule is `free`
 * (src/config/rules.ts: a cloned repository's value applies untrusted), which holds only for a
 * folder of the repository; `..`, an absolute path or a link out would start your own session
 * anywhere. --workdir is yours and goes anywhere.
 */
export function resolveCwd(input: {
  flag: string | undefined;
  config: string | null;
  repoRoot: string;
  invocationCwd: string;
}): { path: string; source: CwdSource } {
  const check = (value: string, base: string, label: string, source: CwdSource) => {
    const full = path.resolve(base, value);
    let stat: fs.Stats;
    try {
      stat = fs.statSync(full);
    } catch {
      throw new AgentboxError('USAGE', `${label}: path does not exist: ${full}`, {
        hint: 'fix the path, or leave it out to use the repository root',
      });
    }
    if (!stat.isDirectory()) {
      throw new AgentboxError('USAGE', `${label}: path is not a directory: ${full}`, {
        hint: 'give a folder',
      });
    }
    return { path: fs.realpathSync(full), source };
  };
  if (input.flag !== undefined) return check(input.flag, input.invocationCwd, '--workdir flag', 'cli_flag');
  if (input.config) {
    const found = check(input.config, input.repoRoot, 'config interactive.cwd', 'config');
    const rel = path.relative(fs.realpathSync(input.repoRoot), found.path);
    if (rel.startsWith('..') || path.isAbsolute(rel))
      throw new AgentboxError(
        'USAGE',
        `config interactive.cwd: ${found.path} is not inside the repository (${input.repoRoot})`,
        {
          hint: 'give a folder of the repository, relative to its root; --workdir <dir> starts a session anywhere',
        },
      );
    return found;
  }
  return { path: input.repoRoot, source: 'repo_root' };
}
