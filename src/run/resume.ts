import fs from 'node:fs';
import type { CommandContext, Env } from '../cli/context.js';
import { AgentboxError } from '../errors.js';
import {
  configHash,
  type RunMeta,
  reactivated,
  readRun,
  resolveRun,
  runIdOf,
  updateState,
} from '../ledger/index.js';
import { runTemplates } from './compose.js';
import { loadRunContext, type RunContext } from './context.js';
import { EventLog } from './events.js';
import { assertHuman, isAlive } from './gate.js';
import { runHere } from './start.js';
import { allowedTools, buildEnvelope, withTemplates } from './tier.js';

export interface ResumeOptions {
  readonly force?: boolean;
  readonly json?: boolean;
}

const RESUMABLE = new Set(['CRASHED', 'ABORTED', 'STALLED']);

/**
 * What differs between the envelope the run started with and the one today's configuration
 * would give it (model, tools, pre-approved rules, commands). Empty when config_hash matches.
 */
export function envelopeDrift(meta: RunMeta, rc: RunContext, worktree: string | null, env: Env): string[] {
  const override = meta.options?.model;
  const base = buildEnvelope({
    type: meta.type,
    runId: meta.run_id,
    model: typeof override === 'string' ? override : rc.config.claude.model,
    worktree,
    fixAllowed: rc.config.runs.fix_allowed_tools,
  });
  // A run created before templates recorded none: its templates are not compared.
  const now =
    meta.extra && 'templates' in meta.extra
      ? withTemplates(base, runTemplates(env, rc.repo.root, meta.type, rc.config))
      : base;
  if (configHash(now) === meta.config_hash) return [];
  const diffs: string[] = [];
  const show = (v: unknown) => JSON.stringify(v);
  if (now.model !== meta.model) diffs.push(`model was ${show(meta.model)}, now ${show(now.model)}`);
  if (show(now.tools_allowlist) !== show(meta.tools_allowlist)) {
    diffs.push(`tools were ${show(meta.tools_allowlist)}, now ${show(now.tools_allowlist)}`);
  }
  if (show(allowedTools(now)) !== show(allowedTools(meta))) {
    diffs.push(`pre-approved tools were ${show(allowedTools(meta))}, now ${show(allowedTools(now))}`);
  }
  if (
    show(now.safe_commands) !== show(meta.safe_commands) ||
    show(now.human_only_commands) !== show(meta.human_only_commands)
  ) {
    diffs.push('the run commands changed');
  }
  const templates = (e: { extra?: Readonly<Record<string, unknown>> }) => show(e.extra?.templates ?? null);
  if (templates(now) !== templates(meta)) diffs.push('its templates changed (see agentbox templates)');
  return diffs.length > 0 ? diffs : ['config_hash differs'];
}

/**
 * `agentbox resume <run> ["<more>"]`: continues a CRASHED, ABORTED or STALLED run in the same
 * session (`--resume <session_id>`, never `--continue`) and the same envelope, appending to the
 * same stream log. Refuses when today's configuration would give the run a different envelope,
 * unless --force.
 */
export async function resume(
  ctx: CommandContext,
  ref: string,
  more: string | undefined,
  options: ResumeOptions,
): Promise<number> {
  assertHuman(ctx.env, 'resume', ctx.cwd);
  const rc = await loadRunContext(ctx);
  const name = resolveRun(rc.ledger, ref);
  const run = readRun(rc.ledger, name);
  const state = run.state;
  if (!state) throw new AgentboxError('RUN_CORRUPT', `run ${name} has no state.json`);
  if ((state.status === 'ACTIVE' || state.status === 'STALLED') && isAlive(state.pid, state.pid_start)) {
    throw new AgentboxError('USAGE', `run ${name} is still running (pid ${state.pid})`, {
      hint:
        state.status === 'STALLED'
          ? `its supervisor is alive but has not reported for a while; end it first (kill ${state.pid})`
          : 'wait for it, or stop it first',
    });
  }
  if (state.status !== 'ACTIVE' && !RESUMABLE.has(state.status)) {
    throw new AgentboxError(
      'USAGE',
      `run ${name} is ${state.status}; only CRASHED, ABORTED or STALLED runs can be resumed`,
      {
        hint: 'start a new run for more work',
      },
    );
  }
  // A run that crashed with its session or worktree in no state to go on is rolled back and
  // replayed instead: `claude --resume` of a session without a conversation exits 1.
  const { decideRecovery } = await import('../recover/decide.js');
  const { recoveryFacts } = await import('../recover/facts.js');
  const action = decideRecovery({ ...(await recoveryFacts(run.dir, run.meta, state, ctx.env)), attempts: 0 });
  if (action.kind === 'rollback_replay') {
    const { carryOut } = await import('../recover/recover.js');
    new EventLog(run.dir).append({
      event: 'recover',
      action: action.kind,
      reason: action.reason,
      via: 'resume',
    });
    if (!options.json) ctx.io.out(`${name} cannot be resumed as it is: ${action.reason}\n`);
    return carryOut(ctx, rc, name, action, {
      json: options.json === true,
      force: options.force === true,
      ...(more === undefined ? {} : { more }),
    });
  }
  if (!state.session_id) {
    throw new AgentboxError(
      'USAGE',
      `run ${name} never started a Claude Code session, so there is nothing to resume`,
      {
        hint: 'start it again as a new run',
      },
    );
  }
  if (state.worktree_path && !fs.existsSync(state.worktree_path)) {
    throw new AgentboxError('USAGE', `the worktree of ${name} is gone: ${state.worktree_path}`, {
      hint: 'its changes up to the stop are in changes.patch (agentbox merge); start a new run to continue',
    });
  }
  return continueSession(ctx, rc, name, {
    command: `agentbox resume ${runIdOf(name)}`,
    event: 'resume',
    force: options.force === true,
    json: options.json === true,
    ...(more === undefined ? {} : { more }),
  });
}

/**
 * Takes a stopped run up in its own session, in this process: refuses when today's configuration
 * would give it another envelope (unless `force`), then runs it to its end (resume, recover).
 */
export async function continueSession(
  ctx: CommandContext,
  rc: RunContext,
  name: string,
  options: { command: string; event: string; detail?: string; force: boolean; json: boolean; more?: string },
): Promise<number> {
  const { meta, state } = readRun(rc.ledger, name);
  const drift = envelopeDrift(meta, rc, state?.worktree_path ?? null, ctx.env);
  if (drift.length > 0 && !options.force) {
    throw new AgentboxError(
      'CONFIG_CHANGED',
      `the envelope of ${name} changed since it started: ${drift.join('; ')}`,
      { hint: `go on anyway in its recorded envelope with --force: ${options.command} --force` },
    );
  }
  const detail = [options.detail, drift.length > 0 ? `forced: ${drift.join('; ')}` : undefined].filter(
    Boolean,
  );
  await updateState(rc.ledger, name, reactivated(), {
    event: options.event,
    ...(detail.length > 0 ? { detail: detail.join('; ') } : {}),
  });
  return runHere(ctx, rc, name, options.json, options.more === undefined ? {} : { more: options.more });
}
