import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { IPty } from 'node-pty';
import { findTranscript, transcriptHasMessages } from '../claude/transcript.js';
import type { Terminal } from '../context.js';
import type { HookHandler, HookInput } from '../endpoint/server.js';
import type { Ledger, RunMeta } from '../ledger/index.js';
import { heartbeat, updateState } from '../ledger/index.js';
import { killMarked, MARK_VAR, processStartTime } from '../process/reap.js';
import type { SupervisorEnd } from '../supervisor/supervisor.js';
import type { CwdSource } from './cwd.js';
import { InputDesk } from './input-desk.js';
import type { IpcMethod } from './ipc.js';
import type { SessionLog } from './log.js';
import {
  type ExitRecord,
  INITIAL_MEMORY,
  onExit,
  onManualRestart,
  type PolicyConfig,
  type PolicyMemory,
} from './policy.js';

/** How the pieces outside the pty are wired in; see start.ts for the real ones. */
export interface SessionDeps {
  readonly ledger: Ledger;
  readonly meta: RunMeta;
  readonly claudeBin: string;
  /** Claude Code's config folder (CLAUDE_CONFIG_DIR, else ~/.claude): where session transcripts live. */
  readonly claudeConfigDir: string;
  readonly cwd: string;
  readonly cwdSource: CwdSource;
  readonly terminal: Terminal;
  readonly policy: PolicyConfig;
  readonly log: SessionLog;
  readonly task?: string | undefined;
  /** The session to resume first (agentbox start --resume); none: a fresh one. */
  readonly resumeSessionId?: string | null;
  /** The argv and env for one claude launch (the run's envelope, hooks and whitelisted env). */
  readonly launch: (mode: { sessionId: string; resume: boolean; prompt?: string | undefined }) => {
    args: string[];
    env: Record<string, string>;
  };
  /** Asks the person after a clean exit; resolves to true for "restart". */
  readonly askRestart: () => Promise<boolean>;
  readonly spawnPty: (
    bin: string,
    args: string[],
    options: { cwd: string; env: Record<string, string>; cols: number; rows: number },
  ) => IPty;
  /** Claude finished a turn and nothing queued goes in: the session waits for the person. */
  readonly onWaiting?: () => void;
}

export type SessionOutcome =
  | { readonly kind: 'quit' }
  | { readonly kind: 'stopped'; readonly by: string }
  | { readonly kind: 'aborted'; readonly reason: string }
  | { readonly kind: 'halted'; readonly message: string };

const TYPE_PAUSE_MS = 50;
/** After an abort's /clear: how long to wait for its SessionStart before typing /exit anyway. */
const CLEAR_WAIT_MS = 3000;
/** How long a claude asked to /exit has before it gets a signal. */
const EXIT_GRACE_MS = 5000;
const HEARTBEAT_MS = 15_000;
/**
 * What a full-screen claude may leave switched on when it dies without cleaning up (kill -9):
 * the alternate screen, a hidden cursor, mouse reporting, bracketed paste, focus events, the
 * kitty keyboard protocol. Written after every session so the person's terminal is usable again.
 */
export const TERMINAL_RESET =
  '\x1b[?1049l\x1b[?25h\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?2004l\x1b[?1004l\x1b[<u\x1b[0m';

/**
 * An interactive Claude Code behind a pty that agentbox owns: the person's terminal in raw mode
 * is copied to the pty and back, window resizes are forwarded, messages from `agentbox inject`
 * are typed in when claude is idle (known from the hooks), a crash restarts claude by the policy
 * (resuming the exact session), and the control socket can restart, stop and inspect it.
 */
export class InteractiveSession {
  private pty: IPty | null = null;
  private mark = '';
  private sessionId: string;
  /** Whose turn it is, and the messages waiting to be typed in. */
  private readonly desk: InputDesk;
  /** The claude that /exit was typed into (once per claude). */
  private exitTyped: IPty | null = null;
  private memory: PolicyMemory = INITIAL_MEMORY;
  private lastExit: ExitRecord | null = null;
  private spawnedAt = 0;
  /** Set when the session is to end: the next exit is not a crash to recover from. */
  private ending: SessionOutcome | null = null;
  /** Set while agentbox itself restarts claude: the exit that follows is expected. */
  private restarting: 'fresh' | 'resume' | null = null;
  /** agentbox typed /clear (an abort): the new session id Claude Code starts is not adopted. */
  private ownClear = false;
  /** Claude was given work since it started (a first task, or a prompt): not idle at its prompt. */
  private busySinceStart = false;
  /** The session's transcript, as the hooks name it: its existence says whether --resume can work. */
  private transcriptPath: string | null = null;

  constructor(private readonly deps: SessionDeps) {
    this.sessionId = deps.resumeSessionId ?? randomUUID();
    this.desk = new InputDesk(deps.log, () => this.pty);
  }

  /** Passes a hook to the run's handler; the hooks also tell the session when claude is idle. */
  async onHook(inner: HookHandler, event: string, input: HookInput): Promise<Record<string, unknown>> {
    this.observe(event, input);
    const answer = (await inner(event, input)) ?? {};
    if (event === 'Stop' && answer.decision !== 'block') {
      this.desk.becomeIdle();
      // Still idle: no queued message was typed in, so it is the person's turn; said once claude
      // has redrawn its prompt (the bell goes to the terminal claude draws on).
      if (this.desk.isIdle && !this.ending) {
        this.desk.whenQuietIdle(() => {
          if (!this.ending) this.deps.onWaiting?.();
        });
      }
    }
    return answer;
  }

  private observe(event: string, input: HookInput): void {
    if (typeof input.transcript_path === 'string' && input.session_id === this.sessionId)
      this.transcriptPath = input.transcript_path;
    if (event === 'SessionStart') {
      const id = typeof input.session_id === 'string' ? input.session_id : null;
      const source = typeof input.source === 'string' ? input.source : '';
      if (source === 'compact' && !this.desk.isIdle) {
        // A compaction in the middle of a turn: the turn goes on, its Stop will come. Until then
        // (or until the screen shows the prompt again, for a /compact that ends with no Stop).
        if (id) this.adoptSession(id, source);
        this.desk.compactMidTurn();
        return;
      }
      if (id && !(source === 'clear' && this.ownClear)) this.adoptSession(id, source);
      this.desk.whenReady(() => {
        // The clear an abort typed has taken: now claude is asked to exit by itself.
        if (source === 'clear' && this.ownClear && this.ending?.kind === 'aborted') this.typeExit();
        else if (!this.busySinceStart) this.desk.becomeIdle();
      });
      this.busySinceStart = source === 'startup' && Boolean(this.deps.task) && !this.deps.resumeSessionId;
    } else if (event === 'UserPromptSubmit' || event === 'PreToolUse' || event === 'PostToolUse') {
      this.desk.working();
    }
    if (event === 'UserPromptSubmit') {
      this.desk.busy();
      this.busySinceStart = true;
    }
  }

  private adoptSession(id: string, source: string): void {
    if (id === this.sessionId) return;
    this.deps.log.write('session_id', { id, source });
    this.sessionId = id;
    this.transcriptPath = null;
    void updateState(
      this.deps.ledger,
      this.deps.meta.run_name,
      { session_id: id },
      { event: 'session', detail: source },
    ).catch(() => {});
  }

  /** The supervisor ended the session: an abort first clears the conversation, then stops claude. */
  onSupervisorEnd(end: SupervisorEnd): void {
    if (end.kind !== 'abort' || this.ending) return;
    this.ending = { kind: 'aborted', reason: end.reason };
    this.deps.log.write('supervisor_abort', { reason: end.reason });
    const pty = this.pty;
    if (!pty) return;
    this.ownClear = true;
    pty.write('/clear');
    setTimeout(() => pty.write('\r'), TYPE_PAUSE_MS);
    // Normally /exit is typed once the clear has taken (its SessionStart, then a quiet screen);
    // should that never come, it is typed anyway.
    setTimeout(() => this.typeExit(), CLEAR_WAIT_MS).unref();
  }

  /**
   * Ends claude the way a person would: `/exit` typed at its prompt (seed 001: a clean exit, not a
   * signal). Only a claude that is still there after EXIT_GRACE_MS gets SIGTERM (then SIGKILL).
   */
  private typeExit(): void {
    const pty = this.pty;
    if (!pty || this.exitTyped === pty) return;
    this.exitTyped = pty;
    pty.write('/exit');
    setTimeout(() => pty.write('\r'), TYPE_PAUSE_MS);
    this.deps.log.write('claude_exit_requested', { by: '/exit' });
    setTimeout(() => {
      if (this.pty !== pty) return;
      this.deps.log.write('claude_exit_forced', { after_ms: EXIT_GRACE_MS });
      this.killClaude('SIGTERM');
    }, EXIT_GRACE_MS).unref();
  }

  /** Control-socket requests. */
  async control(method: IpcMethod, params: Record<string, unknown>): Promise<unknown> {
    this.deps.log.write('ipc', { method });
    switch (method) {
      case 'inject': {
        const text = typeof params.text === 'string' ? params.text : '';
        if (text.trim() === '') throw new Error('inject needs a non-empty "text"');
        return this.desk.enqueue(text);
      }
      case 'restart': {
        const mode = params.mode === 'fresh' ? 'fresh' : 'resume';
        this.restarting = mode;
        this.memory = onManualRestart(this.memory);
        this.killClaude('SIGTERM');
        return { ok: true, mode };
      }
      case 'state':
        return this.state();
      case 'pid':
        return { pid: this.pty?.pid ?? null };
      case 'stop': {
        const graceful = params.graceful !== false;
        this.ending ??= { kind: 'stopped', by: 'agentbox stop' };
        this.killClaude(graceful ? 'SIGTERM' : 'SIGKILL');
        return { ok: true };
      }
    }
  }

  state(): Record<string, unknown> {
    return {
      running: this.pty !== null,
      pid: this.pty?.pid ?? null,
      cwd: this.deps.cwd,
      cwd_source: this.deps.cwdSource,
      session_id: this.sessionId,
      restart_count: this.memory.restarts,
      last_exit: this.lastExit,
      policy_state: this.memory.state,
      idle: this.desk.isIdle,
      queued: this.desk.queued,
    };
  }

  /** Ends the session from outside (Ctrl-C in agentbox's own terminal is passed to claude instead). */
  stop(by: string): void {
    this.ending ??= { kind: 'stopped', by };
    this.killClaude('SIGTERM');
  }

  private killClaude(signal: NodeJS.Signals): void {
    const pty = this.pty;
    if (!pty) return;
    try {
      pty.kill(signal);
    } catch {
      // Already gone.
    }
    if (signal === 'SIGTERM') {
      // A claude that ignores SIGTERM is killed after a grace period.
      const current = pty;
      setTimeout(() => {
        if (this.pty === current) {
          try {
            current.kill('SIGKILL');
          } catch {
            // Gone meanwhile.
          }
        }
      }, 3000).unref();
    }
  }

  /** Runs claude until the session ends; resolves with how it ended. */
  async run(): Promise<SessionOutcome> {
    const { terminal, log } = this.deps;
    const toPty = (data: Buffer | string) => {
      this.desk.key(data);
      this.pty?.write(typeof data === 'string' ? data : data.toString('utf8'));
    };
    terminal.input.on('data', toPty);
    const unsubscribe = terminal.onResize(() => {
      const { cols, rows } = terminal.size();
      this.pty?.resize(cols, rows);
      log.write('resize', { cols, rows });
    });
    terminal.setRawMode(true);
    // The watchdog reads a silent supervisor as stalled: beat while the session lives, idle or not.
    const beating = setInterval(() => {
      void updateState(this.deps.ledger, this.deps.meta.run_name, heartbeat(new Date())).catch(() => {});
    }, HEARTBEAT_MS);
    try {
      let mode: 'fresh' | 'resume' = this.deps.resumeSessionId ? 'resume' : 'fresh';
      let first = true;
      for (;;) {
        const exit = await this.spawnAndWait(mode, first);
        first = false;
        if (this.ending) return this.ending;
        if (this.restarting) {
          mode = this.restarting;
          this.restarting = null;
          log.write('user_action', { action: 'restart', mode });
          continue;
        }
        const decided = onExit(this.deps.policy, this.memory, exit, this.spawnedAt);
        this.memory = decided.memory;
        log.write('policy', {
          state: decided.memory.state,
          action: decided.action.kind,
          failures: decided.memory.consecutiveFailures,
          delay_ms: decided.action.kind === 'restart' ? decided.action.delayMs : undefined,
        });
        await this.recordPolicy();
        if (decided.action.kind === 'halt') return { kind: 'halted', message: decided.action.message };
        if (decided.action.kind === 'ask') {
          terminal.setRawMode(false);
          const again = await this.deps.askRestart();
          terminal.setRawMode(true);
          log.write('user_action', { action: again ? 'restart' : 'quit' });
          if (!again) return { kind: 'quit' };
          this.memory = onManualRestart(this.memory);
          mode = 'resume';
          continue;
        }
        await new Promise((resolve) =>
          setTimeout(resolve, decided.action.kind === 'restart' ? decided.action.delayMs : 0),
        );
        if (this.ending) return this.ending;
        mode = 'resume';
      }
    } finally {
      clearInterval(beating);
      this.desk.reset();
      unsubscribe();
      terminal.input.off('data', toPty);
      terminal.setRawMode(false);
      terminal.output.write(TERMINAL_RESET);
      // A flowing stdin keeps Node alive after the session.
      terminal.input.pause();
      if (this.pty) this.killClaude('SIGKILL');
      killMarked(this.mark);
    }
  }

  private async recordPolicy(): Promise<void> {
    await updateState(
      this.deps.ledger,
      this.deps.meta.run_name,
      { claude_pid: null, claude_pid_start: null },
      {
        event: 'claude_exit',
        detail: `${this.lastExit?.code ?? this.lastExit?.signal} → ${this.memory.state}`,
      },
    ).catch(() => {});
  }

  private hasConversation(): boolean {
    const file =
      this.transcriptPath && fs.existsSync(this.transcriptPath)
        ? this.transcriptPath
        : findTranscript(this.deps.claudeConfigDir, this.sessionId);
    return file !== null && transcriptHasMessages(file);
  }

  private async spawnAndWait(mode: 'fresh' | 'resume', first: boolean): Promise<ExitRecord> {
    const { terminal, log } = this.deps;
    if (mode === 'fresh' && !first) {
      this.sessionId = randomUUID();
      this.transcriptPath = null;
    }
    // NOTE: --resume of an id whose transcript holds no message exits 1 ("No conversation
    // found"), and so does --session-id of an id already in use: a claude killed before its first
    // message reached the transcript has nothing to resume, and starts afresh under a new id.
    if (mode === 'resume' && !this.hasConversation()) {
      log.write('resume_unavailable', { session: this.sessionId });
      mode = 'fresh';
      this.sessionId = randomUUID();
      this.transcriptPath = null;
    }
    this.ownClear = false;
    this.desk.reset();
    this.busySinceStart = false;
    const { args, env } = this.deps.launch({
      sessionId: this.sessionId,
      resume: mode === 'resume',
      prompt: first && mode === 'fresh' ? this.deps.task : undefined,
    });
    this.mark = randomBytes(8).toString('hex');
    const { cols, rows } = terminal.size();
    const pty = this.deps.spawnPty(this.deps.claudeBin, args, {
      cwd: this.deps.cwd,
      env: { ...env, [MARK_VAR]: this.mark },
      cols,
      rows,
    });
    this.pty = pty;
    this.spawnedAt = Date.now();
    // NOTE: listeners first, before any await: a claude that dies at once (a bad binary, a
    // flapping crash) would otherwise exit unheard, and the session would wait for it forever.
    pty.onData((data) => {
      terminal.output.write(data);
      this.desk.output(data);
    });
    const exited = new Promise<ExitRecord>((resolve) => {
      pty.onExit(({ exitCode, signal }) =>
        resolve({ at: Date.now(), code: signal ? null : exitCode, signal: signal ? String(signal) : null }),
      );
    });
    log.write('claude_spawn', { pid: pty.pid, mode, session: this.sessionId });
    await updateState(this.deps.ledger, this.deps.meta.run_name, {
      claude_pid: pty.pid,
      claude_pid_start: processStartTime(pty.pid),
      process_mark: this.mark,
      launch_dir: this.deps.cwd,
      session_id: this.sessionId,
      last_heartbeat: new Date().toISOString(),
    }).catch(() => {});
    const exit = await exited;
    this.pty = null;
    this.desk.reset();
    // Whatever claude left running (a Bash background job in its own session) goes with it.
    killMarked(this.mark);
    this.lastExit = exit;
    log.write('claude_exit', { code: exit.code, signal: exit.signal });
    return exit;
  }
}

/** Where a run's control socket goes: in its folder, or a short path when that one is too long for a Unix socket. */
export function socketPathFor(runDir: string, runId: string, tmpdir: string): string {
  const inRun = path.join(runDir, 'supervisor.sock');
  // NOTE: sun_path holds 108 bytes on Linux (104 on macOS), terminating NUL included.
  return Buffer.byteLength(inRun) < 100 ? inRun : path.join(tmpdir, `agentbox-${runId}.sock`);
}
