import path from 'node:path';
import type { CommandContext, Env } from '../context.js';
import { AgentboxError } from '../errors.js';
import { assertOwnWorktree } from '../git/own-traces.js';
import { configHash, type RunMeta, reactivated, readRun, updateState } from '../ledger/index.js';
import { runTemplates } from './begin/compose.js';
import type { RunContext } from './begin/context.js';
import { resumePrompt } from './begin/prompt.js';
import { allowedTools, buildEnvelope, withTemplates } from './begin/tier.js';
import { pendingRevisionTurn } from './revise.js';
import { runHere } from './start.js';

/*
 * Going on with a stopped run in its own session: what `agentbox resume` and `agentbox recover`
 * both do once they have decided to (its own module, so neither imports the other).
 */

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
 * Whether a stopped run may go on in its own session here: refuses a run that ran elsewhere, and
 * one whose envelope today's configuration would change (unless `force`). Returns the detail to
 * record: the differences forced past, if any.
 */
export function checkContinue(
  ctx: CommandContext,
  rc: RunContext,
  name: string,
  options: { command: string; detail?: string; force: boolean },
): string[] {
  const { meta, state } = readRun(rc.ledger, name);
  if (meta.origin) {
    throw new AgentboxError('USAGE', `run ${name} ran on ${meta.origin.host}: it cannot go on here`, {
      hint: `its session and worktree are there; see how it ended with: agentbox fetch ${meta.origin.remote}`,
    });
  }
  const drift = envelopeDrift(meta, rc, state?.worktree_path ?? null, ctx.env);
  if (drift.length > 0 && !options.force) {
    throw new AgentboxError(
      'CONFIG_CHANGED',
      `the envelope of ${name} changed since it started: ${drift.join('; ')}`,
      { hint: `go on anyway in its recorded envelope with --force: ${options.command} --force` },
    );
  }
  return [options.detail, drift.length > 0 ? `forced: ${drift.join('; ')}` : undefined].filter(
    (d): d is string => Boolean(d),
  );
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
  await assertOwnWorktree(rc.repo.root, name, readRun(rc.ledger, name).state?.worktree_path ?? null);
  const detail = checkContinue(ctx, rc, name, options);
  const updated = await updateState(rc.ledger, name, reactivated(), {
    event: options.event,
    ...(detail.length > 0 ? { detail: detail.join('; ') } : {}),
  });
  // In the middle of a revision (agentbox revise) whose message never reached the session: it goes now.
  const pending = pendingRevisionTurn(path.join(rc.ledger.runsDir, name), updated, ctx.env);
  const message = pending && options.more ? `${pending}\n${resumePrompt(options.more)}` : pending;
  return runHere(
    ctx,
    rc,
    name,
    options.json,
    message ? { message } : options.more === undefined ? {} : { more: options.more },
  );
}
