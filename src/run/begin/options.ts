import { findClaudeBin } from '../../claude/bin.js';
import { parseDuration } from '../../config/duration.js';
import type { CommandContext } from '../../context.js';
import { AgentboxError } from '../../errors.js';
import type { RunMeta, RunState } from '../../ledger/index.js';
import { SUPERVISOR_MODES, type SupervisorMode } from '../../supervisor/rules.js';
import type { RunContext } from './context.js';
import type { ExecuteInput } from './input.js';
import { needsWorktree } from './tier.js';

// A run's options: as typed on the command line (checked), as stored in meta.yaml, and what they
// and the configuration make of an execution.

export interface RunOptions {
  readonly json?: boolean;
  readonly detach?: boolean;
  readonly model?: string;
  readonly timeout?: string;
  readonly supervisor?: string;
  readonly maxIterations?: string;
  /** As typed after --max-cost: USD. */
  readonly maxCost?: string;
}

/** What meta.yaml records about how the run was started (read back by the worker and resume). */
export interface StoredOptions {
  readonly timeout_ms: number;
  readonly supervisor: SupervisorMode;
  readonly max_iterations: number;
  /** The cost budget in USD; null: none. */
  readonly max_cost_usd: number | null;
}

export function storedOptions(meta: RunMeta): StoredOptions {
  const o = meta.options ?? {};
  const timeout = o.timeout_ms;
  const mode = o.supervisor;
  const max = o.max_iterations;
  const cost = o.max_cost_usd;
  return {
    timeout_ms: typeof timeout === 'number' && timeout > 0 ? timeout : 30 * 60_000,
    supervisor: SUPERVISOR_MODES.includes(mode as SupervisorMode) ? (mode as SupervisorMode) : 'rules',
    max_iterations: typeof max === 'number' && max >= 1 ? max : 50,
    max_cost_usd: typeof cost === 'number' && cost > 0 ? cost : null,
  };
}

export function supervisorMode(option: string | undefined, configured: SupervisorMode): SupervisorMode {
  const mode = option ?? configured;
  if (!SUPERVISOR_MODES.includes(mode as SupervisorMode)) {
    throw new AgentboxError('USAGE', `invalid --supervisor "${mode}"`, {
      hint: `use one of: ${SUPERVISOR_MODES.join(', ')}`,
    });
  }
  return mode as SupervisorMode;
}

export function maxIterations(option: string | undefined, configured: number): number {
  if (option === undefined) return configured;
  const n = Number(option);
  if (!Number.isInteger(n) || n < 1) {
    throw new AgentboxError('USAGE', `invalid --max-iterations "${option}"`, {
      hint: 'use a whole number of 1 or more, e.g. 20',
    });
  }
  return n;
}

export function checkTask(task: string): void {
  if (task.trim() === '') {
    throw new AgentboxError('USAGE', 'the task is empty', {
      hint: 'say what to do, e.g. agentbox scout "why is login slow?"',
    });
  }
  if (task.includes('\0'))
    throw new AgentboxError('USAGE', 'the task contains a NUL byte', { hint: 'remove it' });
}

export function timeoutMs(option: string | undefined, configured: string): number {
  const text = option ?? configured;
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0) {
    throw new AgentboxError('USAGE', `invalid timeout "${text}"${option ? '' : ' (config runs.timeout)'}`, {
      hint: 'use a duration such as 90s, 30m or 2h',
    });
  }
  return ms;
}

/** The supervisor's binary: config supervisor.bin (a name on PATH or a path), else the runs' claude. */
function supervisorBin(ctx: CommandContext, rc: RunContext): string {
  const bin = rc.config.supervisor.bin;
  if (!bin) return rc.claudeBin;
  const config = { ...rc.config, claude: { ...rc.config.claude, bin } };
  return findClaudeBin({
    env: { ...ctx.env, AGENTBOX_CLAUDE_BIN: undefined },
    config,
    repoRoot: rc.repo.root,
    cwd: ctx.cwd,
  }).path;
}

/**
 * How a run in the ledger is executed, from its stored options and the configuration: everything
 * `executeRun` needs but the run's own callbacks (Ctrl-C, the live line) and resume or replay.
 */
export function executionOf(
  ctx: CommandContext,
  rc: RunContext,
  meta: RunMeta,
  state: RunState,
): ExecuteInput {
  const stored = storedOptions(meta);
  const { config } = rc;
  const fix = needsWorktree(meta.type);
  return {
    ledger: rc.ledger,
    meta,
    state,
    env: ctx.env,
    claudeBin: rc.claudeBin,
    envPass: config.runs.env_pass,
    trust: rc.trust,
    sandbox: config.sandbox,
    timeoutMs: stored.timeout_ms,
    maxCostUsd: stored.max_cost_usd,
    supervisor: {
      mode: stored.supervisor,
      maxIterations: stored.max_iterations,
      timeoutMs: timeoutMs(undefined, config.supervisor.timeout),
      bin: supervisorBin(ctx, rc),
      model: config.supervisor.model ?? meta.model,
    },
    checks: {
      verify: fix ? config.runs.verify : null,
      verifyTimeoutMs: timeoutMs(undefined, config.runs.verify_timeout),
      maxCorrections: config.supervisor.max_corrections,
      failOnViolation: config.supervisor.fail_on_violation,
      requireFormat: config.supervisor.require_format_validation,
      enforce: config.supervisor.enabled,
    },
    setup:
      fix && config.runs.setup
        ? {
            command: config.runs.setup,
            timeoutMs: timeoutMs(undefined, config.runs.setup_timeout),
            domains: config.runs.setup_domains,
          }
        : null,
  };
}
