import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AirlockScope } from '../airlock/guard.js';
import { canonical } from '../airlock/paths.js';
import { runDenyRules } from '../airlock/rules.js';
import { buildInteractiveArgs } from '../claude/args.js';
import { buildAgentEnv } from '../claude/env.js';
import { loadPty, spawnClaudePty } from '../claude/pty.js';
import { parseDuration } from '../config/duration.js';
import type { CommandContext } from '../context.js';
import { startEndpoint } from '../endpoint/server.js';
import { hookAddressBook, runSettings } from '../endpoint/settings.js';
import { AgentboxError } from '../errors.js';
import { headSha } from '../git/worktree.js';
import { createRun, reactivated, readRun, resolveRun, updateState } from '../ledger/index.js';
import { composeRunPrompt, runTemplates, templateValues, writeRunPrompt } from '../run/compose.js';
import { loadRunContext } from '../run/context.js';
import { EventLog } from '../run/events.js';
import { notifySession } from '../run/notify-end.js';
import { systemPromptAddition } from '../run/prompt.js';
import { allowedTools, buildEnvelope, withTemplates } from '../run/tier.js';
import { prepareRunPrivacy } from '../sandbox/prepare.js';
import { assertProjectSettings } from '../settings/startup.js';
import { commandsRoot, removeRunCommands, writeRunCommands } from '../slash/index.js';
import { createRunHookHandler } from '../supervisor/hooks.js';
import { askSupervisorModel } from '../supervisor/model.js';
import { SUPERVISOR_MODES, type SupervisorMode } from '../supervisor/rules.js';
import { Supervisor } from '../supervisor/supervisor.js';
import { resolveCwd } from './cwd.js';
import { askOneKey, finish, sessionBanner, writeSessionReport } from './end.js';
import { clearStaleSocket, startIpcServer } from './ipc.js';
import { SessionLog } from './log.js';
import type { PolicyConfig } from './policy.js';
import { InteractiveSession, type SessionOutcome, socketPathFor } from './session.js';

export interface StartOptions {
  readonly workdir?: string;
  readonly resume?: string;
  readonly supervisor?: string;
}

const ms = (text: string) => parseDuration(text) ?? 0;

/**
 * `agentbox start ["<task>"]`: an interactive Claude Code behind a pty, in a run of its own (type
 * interactive), supervised like any run, with a control socket and a crash-restart policy.
 */
export async function startSession(
  ctx: CommandContext,
  task: string | undefined,
  options: StartOptions,
): Promise<number> {
  const terminal = ctx.terminal;
  if (!terminal?.isTTY) {
    throw new AgentboxError(
      'USAGE',
      'agentbox start needs a terminal (stdin and stdout are not both a TTY)',
      {
        hint: 'run it in a terminal; for scripted work use agentbox scout|plan|fix',
      },
    );
  }
  const rc = await loadRunContext(ctx);
  // Checked before anything is created: a settings file Claude Code would drop (the project's guard
  // with it), and node-pty, without which there is no session to run.
  assertProjectSettings(rc.repo.root);
  const spawn = await loadPty();
  const cfg = rc.config.interactive;
  const { path: cwd, source: cwdSource } = resolveCwd({
    flag: options.workdir,
    config: cfg.cwd,
    repoRoot: rc.repo.root,
    invocationCwd: ctx.cwd,
  });
  const mode = (options.supervisor ?? rc.config.supervisor.mode) as SupervisorMode;
  if (!SUPERVISOR_MODES.includes(mode)) {
    throw new AgentboxError('USAGE', `invalid --supervisor "${options.supervisor}"`, {
      hint: `use one of: ${SUPERVISOR_MODES.join(', ')}`,
    });
  }

  let name: string;
  let resumeSessionId: string | null = null;
  /** What claude gets as its first message: the task, composed with the templates. */
  let firstMessage: string | undefined = task;
  if (options.resume) {
    name = resolveRun(rc.ledger, options.resume);
    const details = readRun(rc.ledger, name);
    if (details.meta.type !== 'interactive') {
      throw new AgentboxError('USAGE', `run ${name} is a ${details.meta.type} run`, {
        hint: `continue it with agentbox resume ${details.meta.run_id}`,
      });
    }
    resumeSessionId = details.state?.session_id ?? null;
    if (!resumeSessionId) throw new AgentboxError('USAGE', `run ${name} has no session to resume`);
    // A live socket means the session is still running: refuse before touching its state.
    if (details.state?.socket_path) await clearStaleSocket(details.state.socket_path);
    await updateState(rc.ledger, name, reactivated(), { event: 'resume' });
  } else {
    // A first task is composed with the templates (interactive.input.md, else input.md), read and
    // checked before the run exists; without one there is nothing to send.
    const templates = task ? runTemplates(ctx.env, rc.repo.root, 'interactive', rc.config) : null;
    const run = await createRun(rc.ledger, {
      type: 'interactive',
      task: task ?? '(interactive session)',
      repoShaStart: await headSha(rc.repo.root),
      pid: process.pid,
      options: { supervisor: mode, max_iterations: rc.config.supervisor.max_iterations },
      envelope: (r) => {
        const envelope = buildEnvelope({
          type: 'interactive',
          runId: r.id,
          model: rc.config.claude.model,
          worktree: null,
          fixAllowed: [],
        });
        return templates ? withTemplates(envelope, templates) : envelope;
      },
    });
    name = run.name;
    if (templates && task) {
      // No output contract in a person's own session: only the input templates.
      const input = { ...templates, output: null };
      const composed = composeRunPrompt(
        input,
        templateValues({ meta: run.meta, worktree: null, branch: null }),
      );
      await writeRunPrompt(run.dir, composed, input);
      firstMessage = composed.composed;
    }
  }
  const { meta } = readRun(rc.ledger, name);
  const runDir = path.join(rc.ledger.runsDir, name);
  const log = new SessionLog(path.join(runDir, 'supervisor.log'));
  const events = new EventLog(runDir);
  log.write('session_start', { run: name, task: task ?? null });
  log.write('cwd_resolved', { path: cwd, source: cwdSource });

  const scope: AirlockScope = {
    type: 'interactive',
    repoRoot: canonical(rc.ledger.root),
    ledgerDir: canonical(rc.ledger.dir),
    runDir: canonical(runDir),
    worktree: null,
    interactive: true,
  };
  const cleanups: (() => unknown)[] = [];
  let outcome: SessionOutcome = { kind: 'quit' };
  try {
    const created = [path.join(cwd, '.claude'), commandsRoot(cwd)].filter((d) => !fs.existsSync(d));
    writeRunCommands(cwd, { runId: meta.run_id, runName: name, type: 'interactive', runDir, worktree: null });
    cleanups.push(() => {
      removeRunCommands(cwd, meta.run_id);
      for (const dir of created.reverse())
        if (fs.existsSync(dir) && fs.readdirSync(dir).length === 0) fs.rmdirSync(dir);
    });
    const policy: PolicyConfig = {
      history: 10,
      windowMs: ms(cfg.flap_window),
      flapThreshold: cfg.flap_threshold,
      haltAfter: cfg.halt_after,
      transientDelayMs: ms(cfg.restart_delay),
      flappingDelayMs: ms(cfg.flapping_delay),
    };
    let session: InteractiveSession | undefined;
    const supervisor = new Supervisor({
      config: { mode, maxIterations: rc.config.supervisor.max_iterations, loopLimit: 3 },
      task: task ?? '(an interactive session: the person gives the tasks)',
      runType: 'interactive',
      runDir,
      log: events,
      startedAt: Date.now(),
      history: 'hooks',
      ask: (prompt) =>
        askSupervisorModel(prompt, {
          bin: rc.claudeBin,
          model: rc.config.supervisor.model ?? meta.model,
          timeoutMs: ms(rc.config.supervisor.timeout),
          env: ctx.env,
        }),
      onEnd: (end) => session?.onSupervisorEnd(end),
    });
    const hooks = createRunHookHandler({ scope, log: events, launchDir: cwd, supervisor });
    // The session also learns from the hooks when claude is idle; it exists once the endpoint does.
    const endpoint = await startEndpoint({
      handler: (event, input) => (session ? session.onHook(hooks, event, input) : hooks(event, input)),
      onProblem: (p) => events.append({ event: 'endpoint_problem', ...p }),
    });
    cleanups.push(() => endpoint.close());
    // The session's settings carry the endpoint's token: they go to a private file, never into
    // claude's environment or command line (its shell commands could print them).
    const privacy = await prepareRunPrivacy({
      env: ctx.env,
      runName: name,
      repoRoot: rc.ledger.root,
      worktree: null,
      config: rc.config.sandbox,
    });
    cleanups.push(() => privacy.area.dispose());
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
      stopTimeoutSeconds: Math.ceil((ms(rc.config.supervisor.timeout) * 3) / 1000) + 30,
      guard: { ledgerDir: scope.ledgerDir, repoRoot: scope.repoRoot, writes: true },
      history: 'hooks',
    });
    privacy.area.writeSecret('settings.json', `${JSON.stringify(settings)}\n`);
    privacy.area.writeSecret('hook.json', hookAddressBook(endpoint));
    const system = systemPromptAddition({
      type: 'interactive',
      runName: name,
      runId: meta.run_id,
      runDir,
      worktree: null,
      safeCommands: meta.safe_commands,
    });
    session = new InteractiveSession({
      ledger: rc.ledger,
      meta,
      claudeBin: rc.claudeBin,
      claudeConfigDir: ctx.env.CLAUDE_CONFIG_DIR ?? path.join(ctx.env.HOME ?? os.homedir(), '.claude'),
      cwd,
      cwdSource,
      terminal,
      policy,
      log,
      task: firstMessage,
      resumeSessionId,
      launch: ({ sessionId, resume, prompt }) => ({
        args: buildInteractiveArgs({
          sessionId,
          resume,
          ...(prompt ? { prompt } : {}),
          allowedTools: allowedTools(meta),
          appendSystemPrompt: system,
          settingsFile: privacy.secrets.settingsFile,
          model: meta.model,
        }),
        env: buildAgentEnv(ctx.env, {
          cwd,
          pass: [...rc.config.runs.env_pass],
          extra: {
            AGENTBOX_RUN: name,
            AGENTBOX_RUN_DIR: runDir,
            ...(ctx.env.TERM ? {} : { TERM: 'xterm-256color' }),
          },
        }),
      }),
      askRestart: () => askOneKey(terminal, '\r\nclaude exited. Restart it? [r] restart / [q] quit: '),
      onWaiting: () => void notifySession(ctx, rc.config, rc.ledger.root, runDir, meta, 'waiting'),
      spawnPty: (bin, args, o) =>
        spawnClaudePty(spawn, bin, args, { term: ctx.env.TERM ?? 'xterm-256color', ...o }),
    });
    const live = session;
    const socketPath = socketPathFor(runDir, meta.run_id, os.tmpdir());
    const ipc = await startIpcServer(socketPath, (method, params) => live.control(method, params));
    cleanups.push(() => ipc.close());
    await updateState(
      rc.ledger,
      name,
      { endpoint_url: endpoint.url, socket_path: socketPath, pid: process.pid },
      { event: 'session' },
    );
    const unsubscribe = ctx.onInterrupt?.((by) => live.stop(by));
    if (unsubscribe) cleanups.push(unsubscribe);
    // Said before claude takes the screen: which run this is, and how to reach it from elsewhere.
    ctx.io.err(`${sessionBanner(name, meta.run_id)}\n`);
    outcome = await live.run();
  } catch (error) {
    // The session could not be set up (or broke): the run says so, rather than wait for the watchdog.
    const message = error instanceof Error ? error.message : String(error);
    log.write('session_failed', { error: message });
    await writeSessionReport(rc, name, { kind: 'halted', message: `the session failed: ${message}` }).catch(
      (e) => log.write('report_failed', { error: String(e) }),
    );
    await updateState(
      rc.ledger,
      name,
      {
        status: 'CRASHED',
        ended_at: new Date().toISOString(),
        claude_pid: null,
        claude_pid_start: null,
        socket_path: null,
        failure: { kind: 'crashed', message: `the session failed: ${message}` },
      },
      { event: 'session_failed' },
    ).catch(() => {});
    throw error;
  } finally {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch {
        // Keep releasing the rest.
      }
    }
  }
  const code = await finish(ctx, rc, name, outcome, log);
  await notifySession(ctx, rc.config, rc.ledger.root, runDir, readRun(rc.ledger, name).meta, 'ended');
  return code;
}
