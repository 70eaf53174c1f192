import { findClaudeBin } from '../../claude/bin.js';
import type { Config } from '../../config/schema.js';
import type { CommandContext } from '../../context.js';
import { findRepo, type Repo } from '../../git/repo.js';
import { type Ledger, openLedger } from '../../ledger/index.js';
import { loadTrustedConfig, type TrustStatus } from '../../trust/index.js';

export interface RunContext {
  readonly repo: Repo;
  readonly ledger: Ledger;
  readonly config: Config;
  readonly claudeBin: string;
  /** Whether the repository's own commands and settings may be used (src/trust/). */
  readonly trust: TrustStatus;
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
  const { config, trust } = loadTrustedConfig({ repoRoot: repo.root, env: ctx.env });
  const bin = findClaudeBin({ env: ctx.env, config, repoRoot: repo.root, cwd: ctx.cwd });
  return { repo, ledger, config, claudeBin: bin.path, trust: trust! };
}
