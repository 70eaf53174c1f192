import fs from 'node:fs';
import { userConfigPath } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { isAgentboxError } from '../errors.js';
import type { Repo } from '../git/repo.js';
import { hiddenByPerson } from '../sandbox/fence.js';
import { assertFewIgnored, MAX_IGNORED } from '../sandbox/ignored.js';
import type { Env } from '../util/env.js';
import type { CheckResult } from './checks.js';

/**
 * What a scout, plan or review of this repository hides of what git ignores (docs/security.md
 * "What git ignores is yours"), and whether it is too much to hide: such a run is refused before it
 * starts, so doctor says so first.
 */
export async function checkReadOnlyFence(repo: Repo, env: Env, config: Config): Promise<CheckResult> {
  const name = 'read-only fence';
  if (config.sandbox.mode === 'off')
    return { name, ok: true, detail: 'read-only runs are not fenced (sandbox.mode: off)' };
  const opts = { env, repoRoot: repo.root, config: config.sandbox };
  let hidden: string[];
  try {
    hidden = await hiddenByPerson(opts);
    assertFewIgnored(hidden, fs.realpathSync(repo.root), userConfigPath(env));
  } catch (error) {
    if (!isAgentboxError(error)) throw error;
    return { name, ok: false, detail: error.message, ...(error.hint ? { fix: error.hint } : {}) };
  }
  return {
    name,
    ok: true,
    detail: `scouts, plans and reviews hide ${hidden.length} file(s) and folder(s) git ignores here (at most ${MAX_IGNORED})`,
  };
}
