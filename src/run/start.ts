import { parseMaxCost } from '../budget/budget.js';
import { runTimeout } from '../config/schema.js';
import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { prefetchScope } from '../git/prefetch.js';
import { prefetchPrivateGit } from '../git/private.js';
import { findRepo } from '../git/repo.js';
import { headSha } from '../git/worktree.js';
import {
  createRun,
  type RunMeta,
  type RunState,
  readRun,
  readState,
  regenerateIndexMd,
} from '../ledger/index.js';
import { liveReporter, printSummary, succeeded } from '../present/print.js';
import { probeSandboxAsync } from '../sandbox/available.js';
import { assertReadOnlyFence } from '../sandbox/fence.js';
import { ignoredEntries } from '../sandbox/ignored.js';
import { assertSandboxUsable, assertVerifyUsable } from '../sandbox/prepare.js';
import { prefetchRunGitconfig } from '../sandbox/run-gitconfig.js';
import { assertProjectSettings } from '../settings/startup.js';
import type { RunTemplates } from '../templates/load.js';
import { untrustedNotice } from '../trust/index.js';
import {
  composeRunPrompt,
  provisionalValues,
  runTemplates,
  templateValues,
  writeRunPrompt,
} from './begin/compose.js';
import { logTrust, type RunContext, refuseUntrustedChecks, runContextIn } from './begin/context.js';
import { onceStarted } from './begin/dashboard.js';
import {
  checkTask,
  executionOf,
  maxIterations,
  type RunOptions,
  supervisorMode,
  timeoutMs,
} from './begin/options.js';
import { buildEnvelope, type HeadlessType, needsWorktree, withTemplates } from './begin/tier.js';
import { addRunWorktree, worktreePath } from './begin/worktree.js';
import { detachRun } from './detach.js';
import { notifyRunEnd } from './end/notify-end.js';
import { executeRun } from './execute.js';

export { type RunOptions, type StoredOptions, storedOptions } from './begin/options.js';
export { addRunWorktree, worktreeBase, worktreePath } from './begin/worktree.js';

/**
 * `agentbox scout|plan|fix|review "<task>"`: creates the run, gives a fix run its worktree, then
 * runs it here (live line, Ctrl-C stops it cleanly) or, with --detach, in a background worker.
 */
export function startRun(
  ctx: CommandContext,
  type: HeadlessType,
  task: string,
  options: RunOptions,
  /** `agentbox rerun`: the run this one reruns, recorded as meta.yaml `rerun_of`. */
  rerunOf?: string,
): Promise<number> {
  // The git a run's start asks early is taken by this run only (src/git/prefetch.ts).
  return prefetchScope(() => startRunHere(ctx, type, task, options, rerunOf));
}

async function startRunHere(
  ctx: CommandContext,
  type: HeadlessType,
  task: string,
  options: RunOptions,
  rerunOf: string | undefined,
): Promise<number> {
  const { rc, flags, base } = await preflight(ctx, type, task, options);
  const fix = needsWorktree(type);
  // INDEX.md (the dashboard) is written once claude has started, while it starts up (see onceStarted).
  const run = await createHeadlessRun(ctx, rc, {
    type,
    task,
    base,
    options,
    flags,
    rerunOf,
    dashboard: false,
  });
  const dashboard = onceStarted(() => regenerateIndexMd(rc.ledger), run.dir);
  try {
    logTrust(rc, run.dir);
    if (fix) await addRunWorktree(rc, run, worktreePath(rc, ctx.env, run.name), base!);
    if (options.detach) {
      await dashboard();
      return await detachRun(ctx, rc.ledger, run.name, options.json === true);
    }
    // The run as just created, not read back (parsing meta.yaml again cost ~8 ms before claude
    // starts); a fix run's state has its worktree since.
    const state = fix ? readState(run.dir) : run.state;
    if (!state) throw new AgentboxError('RUN_NOT_FOUND', `run ${run.name} has no state.json`);
    return await runLoaded(ctx, rc, { ...run, state }, { json: options.json === true, onStarted: dashboard });
  } finally {
    // A run that ended before claude started (or never did) gets its dashboard line all the same.
    await dashboard();
  }
}

/**
 * Everything checked before a run (or a group of attempts, src/group/) is created: the task, the
 * repository, the configuration and the flags against it, the project's settings, the sandbox,
 * and for a fix the trust of the project's checks. Nothing is written.
 */
export async function preflight(ctx: CommandContext, type: HeadlessType, task: string, options: RunOptions) {
  checkTask(task);
  const repo = await findRepo(ctx.cwd, ctx.env);
  // git answers, and bubblewrap is tried, while the configuration is read and checked (~10 ms and
  // 5-25 ms of a scout's start).
  const head = headSha(repo.root);
  // NOTE: awaited below; until then a failure must not count as unhandled (a bad config throws first).
  head.catch(() => {});
  const box = probeSandboxAsync(ctx.env);
  const rc = runContextIn(ctx, repo);
  // A read-only run's private git is made of the repository itself: its reads start now, and are
  // done by the time the run gets there (src/git/prefetch.ts). A detached run makes it elsewhere.
  if (!needsWorktree(type) && !options.detach && rc.config.sandbox.mode !== 'off') {
    prefetchPrivateGit(repo.root);
    prefetchRunGitconfig(repo.root, ctx.env);
    void ignoredEntries(repo.root);
  }
  ctx.io.err(untrustedNotice(rc.trust));
  const flags = checkFlags(rc, options);
  const base = await head;
  const fix = needsWorktree(type);
  if (fix && !base) {
    throw new AgentboxError('GIT_FAILED', `agentbox ${type} needs at least one commit in ${rc.repo.root}`, {
      hint: 'commit your work first (git add -A && git commit -m "…"): the run starts from HEAD',
    });
  }
  // Before anything is created: the project's Claude Code settings must load (a broken file is
  // dropped whole by Claude Code, and the project's guard with it), and a fix run needs its sandbox.
  assertProjectSettings(rc.repo.root);
  assertSandboxUsable(ctx.env, rc.config.sandbox, type, await box);
  if (!fix && rc.config.sandbox.mode !== 'off')
    await assertReadOnlyFence({ env: ctx.env, repoRoot: rc.repo.root, config: rc.config.sandbox });
  if (fix) {
    refuseUntrustedChecks(rc);
    assertVerifyUsable(ctx.env, rc.config.sandbox, rc.config.runs.verify);
    assertVerifyUsable(ctx.env, rc.config.sandbox, rc.config.runs.setup, 'runs.setup');
  }
  return { rc, flags, base };
}

export type RunFlags = ReturnType<typeof checkFlags>;

/** The options as typed, checked against the configuration (bad input: an error before the run exists). */
function checkFlags(rc: RunContext, options: RunOptions) {
  return {
    timeout_ms: timeoutMs(options.timeout, runTimeout(rc.config)),
    supervisor: supervisorMode(options.supervisor, rc.config.supervisor.mode),
    max_iterations: maxIterations(options.maxIterations, rc.config.supervisor.max_iterations),
    maxCost: options.maxCost === undefined ? rc.config.supervisor.max_cost : parseMaxCost(options.maxCost),
  };
}

/** A group's attempt (src/group/): recorded in meta.yaml options.group. */
export interface AttemptTag {
  readonly id: string;
  readonly name: string;
  readonly attempt: number;
  readonly attempts: number;
}

/** The run in the ledger, with its envelope and its prompt composed from the templates. */
export async function createHeadlessRun(
  ctx: CommandContext,
  rc: RunContext,
  input: {
    type: HeadlessType;
    task: string;
    base: string | null;
    options: RunOptions;
    flags: RunFlags;
    group?: AttemptTag;
    rerunOf?: string | undefined;
    /** false: INDEX.md is the caller's to write (createRun's `dashboard`). */
    dashboard?: false;
  },
) {
  const { type, options } = input;
  const { maxCost, ...stored } = input.flags;
  // Read and checked now: a bad template is an error before any run folder exists.
  const templates = runTemplates(ctx.env, rc.repo.root, type, rc.config);
  const fix = needsWorktree(type);
  // So is a template that fills past what Claude Code takes (names and paths at their longest).
  composeRunPrompt(templates, provisionalValues(type, input.task, rc.repo.root, fix));
  const run = await createRun(rc.ledger, {
    type,
    task: input.task,
    repoShaStart: input.base,
    pid: process.pid,
    ...(input.rerunOf === undefined ? {} : { rerunOf: input.rerunOf }),
    ...(input.dashboard === false ? { dashboard: false } : {}),
    options: {
      ...stored,
      ...(maxCost === null ? {} : { max_cost_usd: maxCost }),
      ...(options.model ? { model: options.model } : {}),
      ...(input.group ? { group: input.group } : {}),
    },
    envelope: (r) =>
      withTemplates(
        buildEnvelope({
          type,
          runId: r.id,
          model: options.model ?? rc.config.claude.model,
          worktree: fix ? worktreePath(rc, ctx.env, r.name) : null,
          fixAllowed: rc.config.runs.fix_allowed_tools,
        }),
        templates,
      ),
  });
  await writePrompt(ctx, rc, run, templates, fix);
  return run;
}

async function writePrompt(
  ctx: CommandContext,
  rc: RunContext,
  run: Awaited<ReturnType<typeof createRun>>,
  templates: RunTemplates,
  fix: boolean,
): Promise<void> {
  const values = templateValues({
    meta: run.meta,
    worktree: fix ? worktreePath(rc, ctx.env, run.name) : null,
    branch: fix ? `agentbox/${run.name}` : null,
  });
  await writeRunPrompt(run.dir, composeRunPrompt(templates, values), templates);
}

/** How a run goes on in its session: more instructions, or a whole next turn; `header`: the line printed first. */
export interface ResumeTurn {
  readonly more?: string;
  readonly message?: string;
  readonly header?: string;
}

/** Executes a run that is already in the ledger, in this process, and prints how it ended. */
export async function runHere(
  ctx: CommandContext,
  rc: RunContext,
  name: string,
  json: boolean,
  resume?: ResumeTurn,
  replay?: { note: string },
  /** A detached worker: its output is the run's raw/agentbox.log, which gets a line per tool call. */
  worker = false,
): Promise<number> {
  const details = readRun(rc.ledger, name);
  if (!details.state) throw new AgentboxError('RUN_NOT_FOUND', `run ${name} has no state.json`);
  // Checked when the run was created too; a run read back may have waited since.
  assertProjectSettings(rc.repo.root);
  if (!worker) {
    ctx.io.err(untrustedNotice(rc.trust));
    logTrust(rc, details.dir);
  }
  assertSandboxUsable(ctx.env, rc.config.sandbox, details.meta.type);
  return runLoaded(ctx, rc, { ...details, state: details.state }, { json, resume, replay, worker });
}

/** runHere with the run's meta and state in hand. */
async function runLoaded(
  ctx: CommandContext,
  rc: RunContext,
  run: { readonly name: string; readonly dir: string; readonly meta: RunMeta; readonly state: RunState },
  how: {
    json: boolean;
    resume?: ResumeTurn;
    replay?: { note: string };
    worker?: boolean;
    onStarted?: () => Promise<void>;
  },
): Promise<number> {
  const { json, resume, replay } = how;
  // --json prints one JSON document: no live line, no line per tool call (but a worker's log does).
  const live = json && !how.worker ? { update() {}, clear() {} } : liveReporter(ctx.io);
  const header = resume
    ? (resume.header ?? `resuming ${run.name}`)
    : `${replay ? 'replaying' : 'started'} ${run.name}`;
  if (!json) ctx.io.out(`${header}\n`);
  const done = await executeRun({
    ...executionOf(ctx, rc, run.meta, run.state),
    ...(resume ? { resume: { ...resume } } : {}),
    ...(replay ? { replay } : {}),
    ...(ctx.onInterrupt ? { onInterrupt: ctx.onInterrupt } : {}),
    ...(how.onStarted ? { onStarted: how.onStarted } : {}),
    onProgress: (p) => live.update(p),
  });
  live.clear();
  printSummary(ctx.io, run.dir, rc.ledger.root, done, json);
  await notifyRunEnd(ctx, rc.config, rc.ledger.root, run.dir, run.meta, done, json);
  return succeeded(done.status) ? 0 : 1;
}
