import { findClaudeBin } from '../claude/bin.js';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import type { CommandContext } from '../context.js';
import { findRepo, type Repo } from '../git/repo.js';
import { type Ledger, openLedger } from '../ledger/index.js';

export interface RunContext {
  readonly repo: Repo;
  readonly ledger: Ledger;
  readonly config: Config;
  readonly claudeBin: string;
}

/**
 * Everything a run needs from the outside, checked before the run is created: a repository,
 * an initialised ledger, a valid config and a Claude Code binary that exists.
 */
export async function loadRunContext(ctx: CommandContext): Promise<RunContext> {
  return runContextIn(ctx, await findRepo(ctx.cwd, ctx.env));
}

/** loadRunContext once the repository is known. */
export function runContextIn(ctx: CommandContext, repo: Repo): RunContext {
  const ledger = openLedger(repo.root);
  const { config } = loadConfig({ repoRoot: repo.root, env: ctx.env });
  const bin = findClaudeBin({ env: ctx.env, config, repoRoot: repo.root, cwd: ctx.cwd });
  return { repo, ledger, config, claudeBin: bin.path };
}
