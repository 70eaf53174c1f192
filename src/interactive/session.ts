import type { HookHandler, HookInput } from '../endpoint/server.js';
import type { SupervisorEnd } from '../supervisor/supervisor.js';
import { ClaudeSlot } from './claude-slot.js';
import { Conversation } from './conversation.js';
import { CrashLoop, type LaunchMode, type SessionOutcome } from './crash-loop.js';
import { HookReader } from './hook-reader.js';
import { InputDesk } from './input-desk.js';
import type { IpcMethod } from './ipc.js';
import { launcher } from './launcher.js';
import type { SessionDeps } from './session-deps.js';
import { type StateTarget, startHeartbeat } from './state-write.js';
import { linkTerminal } from './terminal-link.js';

export type { SessionOutcome } from './crash-loop.js';
export type { SessionDeps } from './session-deps.js';
export { socketPathFor } from './socket-path.js';

/** After an abort's /clear: how long to wait for its SessionStart before typing /exit anyway. */
const CLEAR_WAIT_MS = 3000;

/**
 * An interactive Claude Code behind a pty that agentbox owns: the person's terminal in raw mode
 * is copied to the pty and back (terminal-link.ts), messages from `agentbox inject` are typed in
 * when claude is idle (input-desk.ts, known from the hooks), a crash restarts claude by the policy
 * (crash-loop.ts, resuming the exact conversation), and the control socket can restart, stop and
 * inspect it. The hooks' side and the control requests are here; claude itself is in claude-slot.ts.
 */
export class InteractiveSession {
  private readonly slot: ClaudeSlot;
  private readonly conversation: Conversation;
  /** Whose turn it is, and the messages waiting to be typed in. */
  private readonly desk: InputDesk;
  private readonly reader: HookReader;
  private readonly crashes: CrashLoop;
  private readonly target: StateTarget;
  /** Set when the session is to end: the next exit is not a crash to recover from. */
  private ending: SessionOutcome | null = null;
  /** Set while agentbox itself restarts claude: the exit that follows is expected. */
  private restarting: LaunchMode | null = null;

  constructor(private readonly deps: SessionDeps) {
    this.target = { ledger: deps.ledger, runName: deps.meta.run_name, log: deps.log };
    this.slot = new ClaudeSlot({
      spawn: deps.spawnPty,
      bin: deps.claudeBin,
      cwd: deps.cwd,
      target: this.target,
    });
    this.conversation = new Conversation(deps.claudeConfigDir, deps.resumeSessionId);
    this.desk = new InputDesk(deps.log, () => this.slot.current);
    this.reader = new HookReader({
      desk: this.desk,
      conversation: this.conversation,
      slot: this.slot,
      target: this.target,
      task: Boolean(deps.task),
      resumed: Boolean(deps.resumeSessionId),
      ending: () => this.ending,
    });
    this.crashes = new CrashLoop(deps.policy, deps.log);
  }

  /** Passes a hook to the run's handler; the hooks also tell the session when claude is idle. */
  async onHook(inner: HookHandler, event: string, input: HookInput): Promise<Record<string, unknown>> {
    this.reader.observe(event, input);
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

  /** The supervisor ended the session: an abort first clears the conversation, then stops claude. */
  onSupervisorEnd(end: SupervisorEnd): void {
    if (end.kind !== 'abort' || this.ending) return;
    this.ending = { kind: 'aborted', reason: end.reason };
    this.deps.log.write('supervisor_abort', { reason: end.reason });
    if (!this.slot.current) return;
    this.reader.clearTyped();
    this.slot.type('/clear');
    // Normally /exit is typed once the clear has taken (its SessionStart, then a quiet screen);
    // should that never come, it is typed anyway.
    setTimeout(() => this.slot.askExit(), CLEAR_WAIT_MS).unref();
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
        this.crashes.manualRestart();
        this.slot.stop();
        return { ok: true, mode };
      }
      case 'state':
        return this.state();
      case 'pid':
        return { pid: this.slot.current?.pid ?? null };
      case 'stop': {
        this.ending ??= { kind: 'stopped', by: 'agentbox stop' };
        this.deps.onStopping?.();
        this.slot.stop(params.graceful !== false ? undefined : 0);
        return { ok: true };
      }
    }
  }

  state(): Record<string, unknown> {
    return {
      running: this.slot.current !== null,
      pid: this.slot.current?.pid ?? null,
      cwd: this.deps.cwd,
      cwd_source: this.deps.cwdSource,
      session_id: this.conversation.id,
      restart_count: this.crashes.restarts,
      last_exit: this.crashes.lastExit,
      policy_state: this.crashes.state,
      idle: this.desk.isIdle,
      queued: this.desk.queued,
    };
  }

  /** Ends the session from outside (Ctrl-C in agentbox's own terminal is passed to claude instead). */
  stop(by: string): void {
    this.ending ??= { kind: 'stopped', by };
    this.deps.onStopping?.();
    this.slot.stop();
  }

  /** Runs claude until the session ends; resolves with how it ended. */
  async run(): Promise<SessionOutcome> {
    const unlink = linkTerminal(
      this.deps.terminal,
      {
        key: (data) => {
          this.desk.key(data);
          this.slot.current?.write(typeof data === 'string' ? data : data.toString('utf8'));
        },
        resize: (cols, rows) => this.slot.current?.resize(cols, rows),
      },
      this.deps.log,
    );
    const stopBeating = startHeartbeat(this.target);
    try {
      const host = launcher({
        deps: this.deps,
        conversation: this.conversation,
        reader: this.reader,
        desk: this.desk,
        slot: this.slot,
        target: this.target,
        ending: () => this.ending,
        takeRestart: () => {
          const mode = this.restarting;
          this.restarting = null;
          return mode;
        },
      });
      return await this.crashes.run(host, this.deps.resumeSessionId ? 'resume' : 'fresh');
    } finally {
      stopBeating();
      this.desk.reset();
      unlink();
      // A claude still running goes at once, with whatever it started.
      this.slot.stop(0);
    }
  }
}
