import os from 'node:os';
import path from 'node:path';
import { runDenyRules } from '../airlock/rules.js';
import { buildInteractiveArgs } from '../claude/args.js';
import { buildAgentEnv } from '../claude/env.js';
import { type SpawnPty, spawnClaudePty } from '../claude/pty.js';
import { parseDuration } from '../config/duration.js';
import type { CommandContext, Terminal } from '../context.js';
import { runSettings, withRepoGuard } from '../endpoint/settings.js';
import type { EventLog } from '../ledger/events.js';
import type { RunMeta } from '../ledger/index.js';
import type { RunContext } from '../run/begin/context.js';
import type { RunHarness } from '../run/begin/harness.js';
import { systemPromptAddition } from '../run/begin/prompt.js';
import { allowedTools } from '../run/begin/tier.js';
import { notifySession } from '../run/end/notify-end.js';
import { askSupervisorModel } from '../supervisor/model.js';
import type { SupervisorMode } from '../supervisor/rules.js';
import { Supervisor, type SupervisorEnd } from '../supervisor/supervisor.js';
import type { CwdSource } from './cwd.js';
import { askOneKey } from './end.js';
import type { SessionLog } from './log.js';
import type { OpenedRun } from './open-run.js';
import { InteractiveSession } from './session.js';

// What `agentbox start` puts together on a run's harness: the supervisor, claude's settings and
// the pty session (src/interactive/start.ts runs them).

const ms = (text: string) => parseDuration(text) ?? 0;

/** Everything a session needs once its run is open. */
export interface SessionSetup extends OpenedRun {
  readonly ctx: CommandContext;
  readonly rc: RunContext;
  readonly terminal: Terminal;
  readonly spawn: SpawnPty;
  readonly cwd: string;
  readonly cwdSource: CwdSource;
  readonly mode: SupervisorMode;
  readonly meta: RunMeta;
  readonly runDir: string;
  readonly log: SessionLog;
  readonly task: string | undefined;
}

/** The session's supervisor: tool history from the PostToolUse hooks, a decision at every Stop. */
export function sessionSupervisor(
  s: SessionSetup,
  log: EventLog,
  onEnd: (end: SupervisorEnd) => void,
): Supervisor {
  const { ctx, rc } = s;
  return new Supervisor({
    config: { mode: s.mode, maxIterations: rc.config.supervisor.max_iterations, loopLimit: 3 },
    task: s.task ?? '(an interactive session: the person gives the tasks)',
    runType: 'interactive',
    runDir: s.runDir,
    log,
    startedAt: Date.now(),
    history: 'hooks',
    // The signal ends the call when the session stops (Supervisor.close): the call is not left to
    // run out its timeout with claude's Stop hook waiting on it.
    ask: (prompt, signal) =>
      askSupervisorModel(prompt, {
        bin: rc.claudeBin,
        model: rc.config.supervisor.model ?? s.meta.model,
        timeoutMs: ms(rc.config.supervisor.timeout),
        env: ctx.env,
        signal,
      }),
    onEnd,
  });
}

/**
 * The session's settings carry the endpoint's token: they go to a private file, never into
 * claude's environment or command line (its shell commands could print them).
 */
export function sessionSettings(harness: RunHarness, rc: RunContext): Record<string, unknown> {
  const { scope, endpoint, privacy } = harness;
  const supervisorTimeoutMs = ms(rc.config.supervisor.timeout);
  const settings = runSettings({
    endpointUrl: endpoint.url,
    token: endpoint.token,
    hookFile: privacy.secrets.hookFile,
    deny: [
      ...runDenyRules(scope, []),
      'Bash(git push:*)',
      `Read(/${privacy.secrets.root}/**)`,
      `Edit(/${privacy.secrets.root}/**)`,
    ],
    stopTimeoutSeconds: Math.ceil((supervisorTimeoutMs * 3) / 1000) + 30,
    guard: { ledgerDir: scope.ledgerDir, repoRoot: scope.repoRoot, writes: true },
    history: 'hooks',
  });
  // An untrusted repository's settings file is not loaded (src/trust/): init's guard comes along here.
  return rc.trust.trusted ? settings : withRepoGuard(settings);
}

/** When a crashed claude is started again, from `interactive.*` (src/interactive/crash-loop.ts). */
function restartPolicy(cfg: RunContext['config']['interactive']) {
  return {
    history: 10,
    windowMs: ms(cfg.flap_window),
    flapThreshold: cfg.flap_threshold,
    haltAfter: cfg.halt_after,
    transientDelayMs: ms(cfg.restart_delay),
    flappingDelayMs: ms(cfg.flapping_delay),
  };
}

/** The pty session, launching claude with the run's envelope, hooks and whitelisted environment. */
export function newSession(
  s: SessionSetup,
  harness: RunHarness,
  supervisor: { close(): Promise<void> },
): InteractiveSession {
  const { ctx, rc, meta, terminal } = s;
  const cfg = rc.config.interactive;
  const system = systemPromptAddition({
    type: 'interactive',
    runName: s.name,
    runId: meta.run_id,
    runDir: s.runDir,
    worktree: null,
    safeCommands: meta.safe_commands,
  });
  return new InteractiveSession({
    ledger: rc.ledger,
    meta,
    claudeBin: rc.claudeBin,
    claudeConfigDir: ctx.env.CLAUDE_CONFIG_DIR ?? path.join(ctx.env.HOME ?? os.homedir(), '.claude'),
    cwd: s.cwd,
    cwdSource: s.cwdSource,
    terminal,
    policy: restartPolicy(cfg),
    log: s.log,
    task: s.firstMessage,
    resumeSessionId: s.resumeSessionId,
    launch: ({ sessionId, resume, prompt }) => ({
      args: buildInteractiveArgs({
        sessionId,
        resume,
        ...(prompt ? { prompt } : {}),
        allowedTools: allowedTools(meta),
        appendSystemPrompt: system,
        settingsFile: harness.privacy.secrets.settingsFile,
        model: meta.model,
        projectSettings: rc.trust.trusted,
      }),
      env: buildAgentEnv(ctx.env, {
        cwd: s.cwd,
        pass: [...rc.config.runs.env_pass],
        extra: {
          AGENTBOX_RUN: s.name,
          AGENTBOX_RUN_DIR: s.runDir,
          ...(ctx.env.TERM ? {} : { TERM: 'xterm-256color' }),
        },
      }),
    }),
    askRestart: () => askOneKey(terminal, '\r\nclaude exited. Restart it? [r] restart / [q] quit: '),
    onWaiting: () => void notifySession(ctx, rc.config, rc.ledger.root, s.runDir, meta, 'waiting'),
    // A decision under way is abandoned: claude's Stop hook is answered at once and claude can exit.
    onStopping: () => void supervisor.close(),
    spawnPty: (bin, args, o) =>
      spawnClaudePty(s.spawn, bin, args, { term: ctx.env.TERM ?? 'xterm-256color', ...o }),
  });
}
