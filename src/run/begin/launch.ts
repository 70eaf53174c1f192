import fs from 'node:fs';
import type { AirlockScope } from '../../airlock/guard.js';
import { isInside } from '../../airlock/paths.js';
import { readFenceRules, runDenyRules, type TopLevelEntry } from '../../airlock/rules.js';
import { buildClaudeArgs } from '../../claude/args.js';
import { buildAgentEnv } from '../../claude/env.js';
import { asText } from '../../claude/mentions.js';
import {
  keyHelperCommand,
  MODEL_KEY_VAR,
  movableModelKey,
  unusedCredentials,
} from '../../claude/model-key.js';
import { runSettings, withRepoGuard } from '../../endpoint/settings.js';
import type { RunMeta } from '../../ledger/index.js';
import { fixWritable, type RunSandbox, type RunSecrets } from '../../sandbox/prepare.js';
import { readable } from '../../sandbox/read-allowlist.js';
import { sandboxSettings } from '../../sandbox/settings.js';
import { selfGlob } from '../../sandbox/top-fence.js';
import type { Env } from '../../util/env.js';
import { agentboxStateDir } from '../../util/state-dir.js';
import { agentRunDir } from '../end/artifacts.js';
import { resumePrompt, systemPromptAddition } from './prompt.js';
import { allowedTools } from './tier.js';

export interface LaunchInput {
  readonly meta: RunMeta;
  readonly scope: AirlockScope;
  readonly runDir: string;
  readonly launchDir: string;
  readonly sessionId: string;
  /** The run's first message, composed from its templates and task when it was created (prompt.md). */
  readonly prompt: string;
  /** `message`: the whole next user turn (a revision's, agentbox revise); else `more` after a fixed line. */
  readonly resume?: { readonly more?: string; readonly message?: string };
  /** Start the task again in a new session, with `note` saying why (recovery after a crash). */
  readonly replay?: { readonly note: string };
  readonly endpoint: {
    readonly url: string;
    readonly token: string;
    /**
     * agentbox's refusing proxy (src/endpoint/refuse-network.ts): given when the run reaches no other
     * host (the harness decides, src/run/begin/harness.ts), it replaces Claude Code's proxies.
     */
    readonly proxy?: { readonly httpPort: number; readonly socksPort: number };
  };
  /** Where the run's settings (they carry the token) and the hook script's address book go. */
  readonly secrets: RunSecrets;
  /** The kernel boundary around the run's Bash (fix runs): null when the run has none. */
  readonly sandbox: RunSandbox | null;
  /** Per supervisor call; the Stop hook may wait for up to three of them. */
  readonly supervisorTimeoutMs: number;
  /** The verification a Stop may run (runs.verify): the Stop hook waits for it too. */
  readonly verifyTimeoutMs?: number;
  readonly parentEnv: Env;
  readonly envPass: readonly string[];
  /** The repository is trusted: claude may load its own settings and MCP servers (src/trust/). Absent: no. */
  readonly projectSettings?: boolean;
  /** claude waits for its turn as a JSON message on standard input (a standby, src/run/standby/). */
  readonly streamInput?: boolean;
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
export function planLaunch(input: LaunchInput): {
  args: string[];
  env: Record<string, string>;
  settings: Record<string, unknown>;
  /**
   * The prompt, for claude's standard input (never argv: no size limit, never read as a flag); with
   * streamInput, as the one JSON line of a user message.
   */
  stdin: string;
  /** The model key for `secrets.keyFile`, out of claude's environment (a fenced run); else null. */
  modelKey: string | null;
  /** The prompt's mentions of files the run may not read, kept as text (src/claude/mentions.ts). */
  mentions: string[];
} {
  const written = input.resume
    ? (input.resume.message ?? resumePrompt(input.resume.more))
    : `${input.prompt}${input.replay ? `\n\n${input.replay.note}` : ''}`;
  const modelKey = input.sandbox ? movableModelKey(input.parentEnv) : null;
  const env = launchEnv(input);
  // The credentials claude would not use never reach it, nor so the agent (src/claude/model-key.ts).
  for (const name of unusedCredentials(env)) delete env[name];
  // A mention of a file the run may not read attaches nothing (src/claude/mentions.ts).
  const fence = input.scope.reads;
  const { text: prompt, kept: mentions } = fence
    ? asText(written, { cwd: input.launchDir, home: env.HOME, mayRead: (real) => readable(fence, real) })
    : { text: written, kept: [] };
  const settings = launchSettings(input);
  if (modelKey) {
    delete env[MODEL_KEY_VAR];
    settings.apiKeyHelper = keyHelperCommand(input.secrets.keyFile);
  }
  return {
    args: launchArgs(input, prompt),
    env,
    settings,
    stdin: input.streamInput ? userMessageLine(prompt) : prompt,
    modelKey,
    mentions,
  };
}

/** A user turn as claude's `--input-format=stream-json` reads it: one JSON line. Pure. */
export function userMessageLine(text: string): string {
  return `${JSON.stringify({ type: 'user', message: { role: 'user', content: text } })}\n`;
}

/** The permission rules of the run's --settings. */
function denyRules(input: LaunchInput): string[] {
  const { scope } = input;
  return [
    ...runDenyRules(scope, topLevel(scope.repoRoot)),
    'Bash(git push:*)',
    // The run's own commands live in its worktree's .claude/: the agent may not rewrite them.
    // Nor its hooks, settings or templates (a direct_execution attempt).
    ...(scope.worktree
      ? [`Edit(/${scope.worktree}/.claude/**)`, `Edit(/${scope.worktree}/.agentbox/**)`]
      : []),
    // Every run's secrets (its settings carry the endpoint's token): not for the Read tool either.
    `Read(/${input.secrets.root}/**)`,
    `Edit(/${input.secrets.root}/**)`,
    // agentbox's state in the person's home: the web UI's token and session, the trusted repositories.
    `Read(/${agentboxStateDir(input.parentEnv)}/**)`,
    `Edit(/${agentboxStateDir(input.parentEnv)}/**)`,
    ...readFenceRules(scope),
  ];
}

function launchArgs(input: LaunchInput, prompt: string): string[] {
  const { meta, scope } = input;
  return buildClaudeArgs({
    prompt,
    promptOnStdin: true,
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
    settingsFile: input.secrets.settingsFile,
    model: meta.model,
    projectSettings: input.projectSettings === true,
    ...(input.streamInput ? { streamInput: true } : {}),
  });
}

/** The run's --settings: its hooks, deny rules and (fix runs) Claude Code's sandbox. */
function launchSettings(input: LaunchInput): Record<string, unknown> {
  const { scope } = input;
  const box = input.sandbox;
  const settings = runSettings({
    endpointUrl: input.endpoint.url,
    token: input.endpoint.token,
    hookFile: input.secrets.hookFile,
    ...(box ? { sandbox: launchSandbox(scope.worktree, scope.ledgerDir, box, input.endpoint) } : {}),
    deny: denyRules(input),
    stopTimeoutSeconds: Math.ceil((input.supervisorTimeoutMs * 3 + (input.verifyTimeoutMs ?? 0)) / 1000) + 30,
    guard: {
      ledgerDir: scope.ledgerDir,
      repoRoot: scope.repoRoot,
      writes: scope.worktree !== null,
      // Every write tool goes through the guard: sandboxed, Claude Code's permission rules refuse
      // one outside the worktree (test/e2e/seal.test.ts), but a write inside it loads the CLAUDE.md
      // around it in claude's own process, which the guard checks (src/airlock/memory-links.ts).
      writeTools: true,
      // A worktree inside the repository cannot be fenced by one deny rule on the repository:
      // then every shell command of the run goes through the guard.
      everyBashCall: scope.worktree !== null && isInside(scope.worktree, scope.repoRoot),
      // The Read, Grep and Glob tools ignore the sandbox's read fence: the guard applies it.
      everyRead: scope.reads !== undefined,
    },
    // A headless run reads its stream anyway: the tool history comes from there, not from hooks.
    history: 'stream',
  });
  // Without the project's settings, the guard init put there comes with the run's own.
  return input.projectSettings ? settings : withRepoGuard(settings);
}

/** Claude Code's sandbox around a run's commands: a fix run's, or a read-only run's (worktree null). */
function launchSandbox(
  worktree: string | null,
  ledgerDir: string,
  box: RunSandbox,
  { url: endpointUrl, proxy }: LaunchInput['endpoint'],
) {
  // NOTE: with the sandbox on, Claude Code sends its own http hooks through the sandbox's proxy,
  // which refuses (403) every host:port not listed, loopback included (NO_PROXY is not honoured
  // there). So the endpoint's host:port is listed: a sandboxed command can then reach it too, but
  // never has its token (401, logged). With agentbox's own proxy the list is not consulted: that proxy
  // serves the endpoint and refuses everything else.
  const endpoint = new URL(endpointUrl).host;
  const proxyPorts = proxy ? { proxyPorts: proxy } : {};
  if (!worktree) {
    const listed = new Set(box.listed);
    return sandboxSettings({
      writable: [box.tmpDir, box.sockDir],
      denyWrite: [box.mainGitDir, ...box.runtimeWritable],
      denyRead: [ledgerDir, ...box.denyRead.map((p) => (listed.has(p) ? selfGlob(p) : p))],
      allowRead: box.allowRead,
      // Claude Code's own read-only classifier still decides which commands run without asking.
      autoAllowBash: false,
      // A read-only run reaches nothing but its own endpoint: sandbox.allowed_domains is for fix runs.
      allowedDomains: [endpoint],
      ...proxyPorts,
    });
  }
  return sandboxSettings({
    writable: fixWritable(worktree, box),
    // The run's commands, settings and templates in its worktree are agentbox's.
    denyWrite: [
      box.mainGitDir,
      ...box.runtimeWritable,
      `${worktree}/.claude/settings.json`,
      `${worktree}/.claude/settings.local.json`,
      `${worktree}/.claude/commands`,
      `${worktree}/.agentbox`,
    ],
    denyRead: [ledgerDir, ...box.denyRead],
    allowRead: box.allowRead,
    autoAllowBash: true,
    allowedDomains: [endpoint, ...box.allowedDomains],
    ...proxyPorts,
  });
}

/** claude's whitelisted environment for the run. */
function launchEnv(input: LaunchInput): Record<string, string> {
  const { meta, scope } = input;
  const box = input.sandbox;
  const env = buildAgentEnv(input.parentEnv, {
    cwd: input.launchDir,
    pass: [...input.envPass],
    extra: {
      AGENTBOX_RUN: meta.run_name,
      // The agent's RUN_DIR, as its prompt names it: in a fix run its artifact folder in the worktree
      // (the ledger is out of its reach), else the run's ledger folder.
      AGENTBOX_RUN_DIR: agentRunDir(scope.worktree, input.runDir),
      // The agent's git works on its own repository (src/git/private.ts); the main one is read-only
      // and its config unreadable. A read-only run's is on the repository's tree.
      ...(box ? { GIT_DIR: box.gitDir, GIT_WORK_TREE: scope.worktree ?? scope.repoRoot } : {}),
      // Claude Code's own temp folder (TMPDIR inside the sandbox), one per run, not shared; and
      // claude's own TMPDIR, where its sandbox proxy's sockets go: in /tmp, which the fence hides,
      // they would be hidden from the run's commands too.
      ...(box ? { CLAUDE_CODE_TMPDIR: box.tmpDir, TMPDIR: box.sockDir } : {}),
      // The person's ~/.gitconfig may hold a token: the run's git reads its own (run-gitconfig.ts).
      ...(box ? { GIT_CONFIG_GLOBAL: box.gitConfig } : {}),
    },
  });
  // Nothing of the endpoint reaches the agent's environment, whatever the parent had.
  delete env.AGENTBOX_TOKEN;
  delete env.AGENTBOX_URL;
  return env;
}
