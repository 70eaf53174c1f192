import os from 'node:os';
import path from 'node:path';
import { loadPty } from '../claude/pty.js';
import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { EventLog } from '../ledger/events.js';
import { readRun, updateState } from '../ledger/index.js';
import { loadRunContext, type RunContext } from '../run/begin/context.js';
import { openRunHarness, type RunHarness } from '../run/begin/harness.js';
import { notifySession } from '../run/end/notify-end.js';
import { assertProjectSettings } from '../settings/startup.js';
import { SUPERVISOR_MODES, type SupervisorMode } from '../supervisor/rules.js';
import { launchTrusted, trustEvent, untrustedNotice } from '../trust/index.js';
import { newSession, type SessionSetup, sessionSettings, sessionSupervisor } from './assemble.js';
import { resolveCwd } from './cwd.js';
import { finish, sessionBanner, writeSessionReport } from './end.js';
import { startIpcServer } from './ipc.js';
import { SessionLog } from './log.js';
import { createSessionRun, reopenRun } from './open-run.js';
import { type InteractiveSession, type SessionOutcome, socketPathFor } from './session.js';

export interface StartOptions {
  readonly workdir?: string;
  readonly resume?: string;
  readonly supervisor?: string;
}

/**
 * claude loads the Claude Code files of where it starts (interactive.cwd may be a subfolder with
 * its own): they count only when they are what the person trusted.
 */
function trustedAt(rc: RunContext, cwd: string): RunContext {
  return { ...rc, trust: { ...rc.trust, trusted: launchTrusted(rc.trust, cwd) } };
}

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
  ctx.io.err(untrustedNotice(rc.trust));
  // Checked before anything is created: a settings file Claude Code would drop (the project's guard
  // with it), and node-pty, without which there is no session to run.
  assertProjectSettings(rc.repo.root);
  const spawn = await loadPty();
  const { path: cwd, source: cwdSource } = resolveCwd({
    flag: options.workdir,
    config: rc.config.interactive.cwd,
    repoRoot: rc.repo.root,
    invocationCwd: ctx.cwd,
  });
  const mode = (options.supervisor ?? rc.config.supervisor.mode) as SupervisorMode;
  if (!SUPERVISOR_MODES.includes(mode)) {
    throw new AgentboxError('USAGE', `invalid --supervisor "${options.supervisor}"`, {
      hint: `use one of: ${SUPERVISOR_MODES.join(', ')}`,
    });
  }
  const opened = options.resume
    ? await reopenRun(rc, options.resume)
    : await createSessionRun(ctx, rc, task, mode);
  const { meta } = readRun(rc.ledger, opened.name);
  const runDir = path.join(rc.ledger.runsDir, opened.name);
  const log = new SessionLog(path.join(runDir, 'supervisor.log'));
  log.write('session_start', { run: opened.name, task: task ?? null });
  log.write('cwd_resolved', { path: cwd, source: cwdSource });
  const setup = {
    ...opened,
    ctx,
    rc: trustedAt(rc, cwd),
    terminal,
    spawn,
    cwd,
    cwdSource,
    mode,
    meta,
    runDir,
    log,
    task,
  };
  const outcome = await runSupervised(setup);
  const code = await finish(ctx, rc, opened.name, outcome, log);
  await notifySession(ctx, rc.config, rc.ledger.root, runDir, readRun(rc.ledger, opened.name).meta, 'ended');
  return code;
}

/**
 * The session under the run's harness (slash commands, hook endpoint, private area) and its
 * control socket, all released when it ends. A session that cannot be set up (or breaks) says so
 * in its run, rather than wait for the watchdog.
 */
async function runSupervised(s: SessionSetup): Promise<SessionOutcome> {
  const { ctx, rc, meta, log } = s;
  let harness: RunHarness | undefined;
  try {
    let session: InteractiveSession | undefined;
    const events = new EventLog(s.runDir);
    // The session goes without the repository's entries: said on stderr at start, logged here.
    if (rc.trust.state === 'untrusted' || rc.trust.state === 'changed') events.append(trustEvent(rc.trust));
    const supervisor = sessionSupervisor(s, events, (end) => session?.onSupervisorEnd(end));
    harness = await openRunHarness({
      ledger: rc.ledger,
      meta,
      launchDir: s.cwd,
      worktree: null,
      interactive: true,
      env: ctx.env,
      sandbox: rc.config.sandbox,
      log: events,
      supervisor,
      // The session also learns from the hooks when claude is idle; it exists once the endpoint does.
      route: (hooks) => (event, input) =>
        session ? session.onHook(hooks, event, input) : hooks(event, input),
    });
    // Released before the endpoint: a decision under way (its model call, its verification) is
    // ended with the session, not waited for until its timeout.
    harness.defer(() => supervisor.close());
    harness.writeSecrets(sessionSettings(harness, rc));
    const live = newSession(s, harness, supervisor);
    session = live;
    const socketPath = socketPathFor(s.runDir, meta.run_id, os.tmpdir());
    const ipc = await startIpcServer(socketPath, (method, params) => live.control(method, params));
    harness.defer(() => ipc.close());
    await updateState(
      rc.ledger,
      s.name,
      { endpoint_url: harness.endpoint.url, socket_path: socketPath, pid: process.pid },
      { event: 'session' },
    );
    const unsubscribe = ctx.onInterrupt?.((by) => live.stop(by));
    if (unsubscribe) harness.defer(unsubscribe);
    // Said before claude takes the screen: which run this is, and how to reach it from elsewhere.
    ctx.io.err(`${sessionBanner(s.name, meta.run_id)}\n`);
    return await live.run();
  } catch (error) {
    await sessionFailed(s, error);
    throw error;
  } finally {
    for (const error of (await harness?.release()) ?? [])
      log.write('release_failed', { error: String(error) });
  }
}

/** The session could not be set up, or broke: its run is CRASHED, with a report saying why. */
async function sessionFailed(s: SessionSetup, error: unknown): Promise<void> {
  const message = error instanceof Error ? error.message : String(error);
  s.log.write('session_failed', { error: message });
  await writeSessionReport(s.rc, s.name, { kind: 'halted', message: `the session failed: ${message}` }).catch(
    (e) => s.log.write('report_failed', { error: String(e) }),
  );
  await updateState(
    s.rc.ledger,
    s.name,
    {
      status: 'CRASHED',
      ended_at: new Date().toISOString(),
      claude_pid: null,
      claude_pid_start: null,
      socket_path: null,
      failure: { kind: 'crashed', message: `the session failed: ${message}` },
    },
    { event: 'session_failed' },
  ).catch((e) => s.log.write('state_failed', { error: String(e) }));
}
