import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { canonical } from '../airlock/paths.js';
import { parseMaxCost } from '../budget/budget.js';
import { findClaudeBin } from '../claude/bin.js';
import { parseDuration } from '../config/duration.js';
import { runTimeout } from '../config/schema.js';
import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { addWorktree, headSha } from '../git/worktree.js';
import { createRun, type Ledger, type RunMeta, readRun, runIdOf, updateState } from '../ledger/index.js';
import { processStartTime } from '../process/reap.js';
import { assertSandboxUsable, assertVerifyUsable } from '../sandbox/prepare.js';
import { assertProjectSettings } from '../settings/startup.js';
import { SUPERVISOR_MODES, type SupervisorMode } from '../supervisor/rules.js';
import { writeAtomic } from '../util/fs.js';
import { composeRunPrompt, runTemplates, templateValues, writeRunPrompt } from './compose.js';
import { loadRunContext, type RunContext } from './context.js';
import { executeRun } from './execute.js';
import { notifyRunEnd } from './notify-end.js';
import { liveReporter, printSummary, succeeded } from './print.js';
import { renderEndReport } from './report.js';
import { buildEnvelope, type HeadlessType, needsWorktree, withTemplates } from './tier.js';

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

function supervisorMode(option: string | undefined, configured: SupervisorMode): SupervisorMode {
  const mode = option ?? configured;
  if (!SUPERVISOR_MODES.includes(mode as SupervisorMode)) {
    throw new AgentboxError('USAGE', `invalid --supervisor "${mode}"`, {
      hint: `use one of: ${SUPERVISOR_MODES.join(', ')}`,
    });
  }
  return mode as SupervisorMode;
}

function maxIterations(option: string | undefined, configured: number): number {
  if (option === undefined) return configured;
  const n = Number(option);
  if (!Number.isInteger(n) || n < 1) {
    throw new AgentboxError('USAGE', `invalid --max-iterations "${option}"`, {
      hint: 'use a whole number of 1 or more, e.g. 20',
    });
  }
  return n;
}

function checkTask(task: string): void {
  if (task.trim() === '') {
    throw new AgentboxError('USAGE', 'the task is empty', {
      hint: 'say what to do, e.g. agentbox scout "why is login slow?"',
    });
  }
  if (task.includes('\0'))
    throw new AgentboxError('USAGE', 'the task contains a NUL byte', { hint: 'remove it' });
}

function timeoutMs(option: string | undefined, configured: string): number {
  const text = option ?? configured;
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0) {
    throw new AgentboxError('USAGE', `invalid timeout "${text}"${option ? '' : ' (config runs.timeout)'}`, {
      hint: 'use a duration such as 90s, 30m or 2h',
    });
  }
  return ms;
}

/**
 * Where a fix run's worktree goes: `runs.worktree_dir` (relative to the repository root), else
 * outside the repository in the user's data folder, one folder per repository (named after it and
 * a hash of its path, so two clones never share).
 */
export function worktreeBase(rc: RunContext, env: CommandContext['env']): string {
  const configured = rc.config.runs.worktree_dir;
  if (configured) return path.resolve(rc.repo.root, configured);
  const data = env.XDG_DATA_HOME || (env.HOME ? path.join(env.HOME, '.local', 'share') : null);
  if (!data) return path.join(rc.ledger.dir, 'worktrees');
  const id = `${path.basename(rc.repo.root)}-${createHash('sha256').update(rc.repo.root).digest('hex').slice(0, 8)}`;
  return path.join(data, 'agentbox', 'worktrees', id);
}

function worktreePath(rc: RunContext, env: CommandContext['env'], name: string): string {
  return canonical(path.join(worktreeBase(rc, env), name));
}

/**
 * `agentbox scout|plan|fix|review "<task>"`: creates the run, gives a fix run its worktree, then
 * runs it here (live line, Ctrl-C stops it cleanly) or, with --detach, in a background worker.
 */
export async function startRun(
  ctx: CommandContext,
  type: HeadlessType,
  task: string,
  options: RunOptions,
): Promise<number> {
  checkTask(task);
  const rc = await loadRunContext(ctx);
  const model = options.model ?? rc.config.claude.model;
  const timeout = timeoutMs(options.timeout, runTimeout(rc.config));
  const mode = supervisorMode(options.supervisor, rc.config.supervisor.mode);
  const budget = maxIterations(options.maxIterations, rc.config.supervisor.max_iterations);
  const maxCost =
    options.maxCost === undefined ? rc.config.supervisor.max_cost : parseMaxCost(options.maxCost);
  const base = await headSha(rc.repo.root);
  if (needsWorktree(type) && !base) {
    throw new AgentboxError('GIT_FAILED', `agentbox ${type} needs at least one commit in ${rc.repo.root}`, {
      hint: 'commit your work first (git add -A && git commit -m "…"): the run starts from HEAD',
    });
  }
  // Before anything is created: the project's Claude Code settings must load (a broken file is
  // dropped whole by Claude Code, and the project's guard with it), and a fix run needs its sandbox.
  assertProjectSettings(rc.repo.root);
  if (needsWorktree(type)) {
    assertSandboxUsable(ctx.env, rc.config.sandbox);
    assertVerifyUsable(ctx.env, rc.config.sandbox, rc.config.runs.verify);
    assertVerifyUsable(ctx.env, rc.config.sandbox, rc.config.runs.setup, 'runs.setup');
  }
  // Read and checked now: a bad template is an error before any run folder exists.
  const templates = runTemplates(ctx.env, rc.repo.root, type, rc.config);
  const run = await createRun(rc.ledger, {
    type,
    task,
    repoShaStart: base,
    pid: process.pid,
    options: {
      timeout_ms: timeout,
      supervisor: mode,
      max_iterations: budget,
      ...(maxCost === null ? {} : { max_cost_usd: maxCost }),
      ...(options.model ? { model: options.model } : {}),
    },
    envelope: (r) =>
      withTemplates(
        buildEnvelope({
          type,
          runId: r.id,
          model,
          worktree: needsWorktree(type) ? worktreePath(rc, ctx.env, r.name) : null,
          fixAllowed: rc.config.runs.fix_allowed_tools,
        }),
        templates,
      ),
  });
  const fix = needsWorktree(type);
  await writeRunPrompt(
    run.dir,
    composeRunPrompt(
      templates,
      templateValues({
        meta: run.meta,
        worktree: fix ? worktreePath(rc, ctx.env, run.name) : null,
        branch: fix ? `agentbox/${run.name}` : null,
      }),
    ),
    templates,
  );
  if (needsWorktree(type)) {
    const worktree = worktreePath(rc, ctx.env, run.name);
    const branch = `agentbox/${run.name}`;
    try {
      fs.mkdirSync(path.dirname(worktree), { recursive: true });
      await addWorktree(rc.repo.root, { path: worktree, branch, base: base! });
    } catch (error) {
      const message = `could not create the worktree: ${(error as Error).message}`;
      await writeAtomic(
        path.join(run.dir, 'report.md'),
        renderEndReport({ meta: run.meta, status: 'CRASHED', detail: `crashed: ${message}`, next: null }),
      );
      await updateState(rc.ledger, run.name, {
        status: 'CRASHED',
        ended_at: new Date().toISOString(),
        failure: { kind: 'crashed', message },
      });
      throw error;
    }
    await updateState(
      rc.ledger,
      run.name,
      { worktree_path: worktree, branch },
      { event: 'worktree', detail: branch },
    );
  }
  if (options.detach) return detach(ctx, rc.ledger, run.name, options.json === true);
  return runHere(ctx, rc, run.name, options.json === true);
}

/** Executes a run that is already in the ledger, in this process, and prints how it ended. */
export async function runHere(
  ctx: CommandContext,
  rc: RunContext,
  name: string,
  json: boolean,
  resume?: { more?: string },
  replay?: { note: string },
  /** A detached worker: its output is the run's raw/agentbox.log, which gets a line per tool call. */
  worker = false,
): Promise<number> {
  const details = readRun(rc.ledger, name);
  if (!details.state) throw new AgentboxError('RUN_NOT_FOUND', `run ${name} has no state.json`);
  const stored = storedOptions(details.meta);
  // --json prints one JSON document: no live line, no line per tool call (but a worker's log does).
  const live = json && !worker ? { update() {}, clear() {} } : liveReporter(ctx.io);
  if (!json) ctx.io.out(`${resume ? 'resuming' : replay ? 'replaying' : 'started'} ${name}\n`);
  assertProjectSettings(rc.repo.root);
  if (needsWorktree(details.meta.type)) assertSandboxUsable(ctx.env, rc.config.sandbox);
  const done = await executeRun({
    ledger: rc.ledger,
    meta: details.meta,
    state: details.state,
    env: ctx.env,
    claudeBin: rc.claudeBin,
    envPass: rc.config.runs.env_pass,
    sandbox: rc.config.sandbox,
    timeoutMs: stored.timeout_ms,
    maxCostUsd: stored.max_cost_usd,
    supervisor: {
      mode: stored.supervisor,
      maxIterations: stored.max_iterations,
      timeoutMs: timeoutMs(undefined, rc.config.supervisor.timeout),
      bin: supervisorBin(ctx, rc),
      model: rc.config.supervisor.model ?? details.meta.model,
    },
    checks: {
      verify: needsWorktree(details.meta.type) ? rc.config.runs.verify : null,
      verifyTimeoutMs: timeoutMs(undefined, rc.config.runs.verify_timeout),
      maxCorrections: rc.config.supervisor.max_corrections,
      failOnViolation: rc.config.supervisor.fail_on_violation,
      requireFormat: rc.config.supervisor.require_format_validation,
      enforce: rc.config.supervisor.enabled,
    },
    setup:
      needsWorktree(details.meta.type) && rc.config.runs.setup
        ? {
            command: rc.config.runs.setup,
            timeoutMs: timeoutMs(undefined, rc.config.runs.setup_timeout),
            domains: rc.config.runs.setup_domains,
          }
        : null,
    ...(resume ? { resume } : {}),
    ...(replay ? { replay } : {}),
    ...(ctx.onInterrupt ? { onInterrupt: ctx.onInterrupt } : {}),
    onProgress: (p) => live.update(p),
  });
  live.clear();
  printSummary(ctx.io, details.dir, rc.ledger.root, done, json);
  await notifyRunEnd(ctx, rc.config, rc.ledger.root, details.dir, details.meta, done, json);
  return succeeded(done.status) ? 0 : 1;
}

/** The built CLI entry, for starting a worker (`src/run` and `dist/run` both sit two levels down). */
const BIN = fileURLToPath(new URL('../../bin/agentbox.js', import.meta.url));

/**
 * Hands the run to a background worker (`agentbox __exec <run>`) in its own session, with its
 * output in the run's raw/agentbox.log, and returns at once.
 */
async function detach(ctx: CommandContext, ledger: Ledger, name: string, json: boolean): Promise<number> {
  const logFile = path.join(ledger.runsDir, name, 'raw', 'agentbox.log');
  const log = fs.openSync(logFile, 'a');
  try {
    const worker = spawn(process.execPath, [BIN, '__exec', name], {
      cwd: ledger.root,
      env: ctx.env as NodeJS.ProcessEnv,
      detached: true,
      stdio: ['ignore', log, log],
    });
    worker.unref();
    await updateState(
      ledger,
      name,
      { pid: worker.pid ?? null, pid_start: worker.pid ? processStartTime(worker.pid) : null },
      { event: 'detached', detail: `worker pid ${worker.pid}` },
    );
  } finally {
    fs.closeSync(log);
  }
  if (json) ctx.io.out(`${JSON.stringify({ run: name, detached: true })}\n`);
  else {
    const id = runIdOf(name);
    ctx.io.out(
      `${name}\n  running in the background — follow it: agentbox watch ${id} · stop it: agentbox stop ${id}\n`,
    );
  }
  return 0;
}
