import { findClaudeBin } from '../../claude/bin.js';
import type { Config } from '../../config/schema.js';
import type { CommandContext } from '../../context.js';
import { AgentboxError } from '../../errors.js';
import { findRepo, type Repo } from '../../git/repo.js';
import { EventLog } from '../../ledger/events.js';
import { type Ledger, openLedger } from '../../ledger/index.js';
import { entryLine, loadTrustedConfig, type TrustStatus, trustEvent } from '../../trust/index.js';

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

/**
 * A fix run is made for the project's own setup and verification: without them it would not be
 * what the project asked for, and a run whose verification was left out must not look verified.
 * So while they await trust the run does not start.
 */
export function refuseUntrustedChecks(rc: RunContext): void {
  if (rc.trust.trusted) return;
  const checks = rc.trust.entries.filter((e) => e.key === 'runs.setup' || e.key === 'runs.verify');
  if (checks.length === 0) return;
  throw new AgentboxError(
    'TRUST_REQUIRED',
    `this repository's setup and verification commands are not trusted yet, so no fix run starts:\n${checks.map((e) => entryLine(e)).join('\n')}`,
    { hint: 'review them, then run "agentbox trust" (or "agentbox trust --yes" in a script)' },
  );
}

/** A run that goes without the repository's entries says so in its log, naming each. */
export function logTrust(rc: RunContext, runDir: string): void {
  if (!rc.trust.trusted) new EventLog(runDir).append(trustEvent(rc.trust));
}
