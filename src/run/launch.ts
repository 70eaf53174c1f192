import fs from 'node:fs';
import type { AirlockScope } from '../airlock/guard.js';
import { isInside } from '../airlock/paths.js';
import { runDenyRules, type TopLevelEntry } from '../airlock/rules.js';
import { buildClaudeArgs } from '../claude/args.js';
import { buildAgentEnv } from '../claude/env.js';
import type { Env } from '../cli/context.js';
import { runSettings, TOKEN_VAR, URL_VAR } from '../endpoint/settings.js';
import type { RunMeta } from '../ledger/index.js';
import { agentRunDir } from './artifacts.js';
import { resumePrompt, systemPromptAddition, taskPrompt } from './prompt.js';
import { allowedTools } from './tier.js';

export interface LaunchInput {
  readonly meta: RunMeta;
  readonly scope: AirlockScope;
  readonly runDir: string;
  readonly launchDir: string;
  readonly sessionId: string;
  readonly resume?: { readonly more?: string };
  /** Start the task again in a new session, with `note` saying why (recovery after a crash). */
  readonly replay?: { readonly note: string };
  readonly endpoint: { readonly url: string; readonly token: string };
  /** Per supervisor call; the Stop hook may wait for up to three of them. */
  readonly supervisorTimeoutMs: number;
  readonly parentEnv: Env;
  readonly envPass: readonly string[];
}

/** The repository's top-level entries, for the deny rules around a worktree that lives inside it. */
function topLevel(root: string): TopLevelEntry[] {
  return fs
    .readdirSync(root, { withFileTypes: true })
    .filter((e) => e.name !== '.git')
    .map((e) => ({ name: e.name, dir: e.isDirectory() }));
}

/**
 * How claude is started for a run: its argument list (envelope, prompt, system-prompt addition,
 * the run's hooks and deny rules in --settings) and its whitelisted environment. Everything the
 * run needs before the spawn, and nothing else, so the fix-setup benchmark measures this exact code.
 */
export function planLaunch(input: LaunchInput): { args: string[]; env: Record<string, string> } {
  const { meta, scope } = input;
  const deny = [
    ...runDenyRules(scope, topLevel(scope.repoRoot)),
    'Bash(git push:*)',
    // The run's own commands live in its worktree's .claude/: the agent may not rewrite them.
    ...(scope.worktree ? [`Edit(/${scope.worktree}/.claude/**)`] : []),
  ];
  const args = buildClaudeArgs({
    prompt: input.resume
      ? resumePrompt(input.resume.more)
      : `${taskPrompt(meta.type, meta.task)}${input.replay ? `\n\n${input.replay.note}` : ''}`,
    sessionId: input.sessionId,
    resume: Boolean(input.resume),
    tools: [...meta.tools_allowlist],
    allowedTools: allowedTools(meta),
    appendSystemPrompt: systemPromptAddition({
      type: meta.type,
      runName: meta.run_name,
      runId: meta.run_id,
      runDir: agentRunDir(scope.worktree, input.runDir),
      worktree: scope.worktree,
      safeCommands: meta.safe_commands,
    }),
    settings: runSettings({
      endpointUrl: input.endpoint.url,
      deny,
      stopTimeoutSeconds: Math.ceil((input.supervisorTimeoutMs * 3) / 1000) + 30,
      guard: {
        ledgerDir: scope.ledgerDir,
        repoRoot: scope.repoRoot,
        writes: scope.worktree !== null,
        // A worktree inside the repository cannot be fenced by one deny rule on the repository:
        // then every shell command of the run goes through the guard.
        everyBashCall: scope.worktree !== null && isInside(scope.worktree, scope.repoRoot),
      },
      // A headless run reads its stream anyway: the tool history comes from there, not from hooks.
      history: 'stream',
    }),
    model: meta.model,
  });
  const env = buildAgentEnv(input.parentEnv, {
    cwd: input.launchDir,
    pass: [...input.envPass],
    extra: {
      AGENTBOX_RUN: meta.run_name,
      AGENTBOX_RUN_DIR: input.runDir,
      [TOKEN_VAR]: input.endpoint.token,
      [URL_VAR]: input.endpoint.url,
    },
  });
  return { args, env };
}
