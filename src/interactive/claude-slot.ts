import { type OwnedPty, type PtyExit, type PtySpawner, spawnOwnedPty } from '../process/owned-pty.js';
import { processStartTime } from '../process/reap.js';
import type { LaunchMode } from './crash-loop.js';
import { type StateTarget, writeState } from './state-write.js';

const TYPE_PAUSE_MS = 50;
/** How long a claude asked to /exit has before it is stopped (SIGTERM, then SIGKILL). */
const EXIT_GRACE_MS = 5000;

export interface SlotDeps {
  readonly spawn: PtySpawner;
  readonly bin: string;
  readonly cwd: string;
  /** The run whose state names the claude of the moment; its log hears of every start and exit. */
  readonly target: StateTarget;
}

/** One claude to start: its argv and environment, and where its screen goes. */
export interface ClaudeLaunch {
  readonly mode: LaunchMode;
  readonly sessionId: string;
  readonly args: string[];
  readonly env: Record<string, string>;
  readonly cols: number;
  readonly rows: number;
  readonly onData: (data: string) => void;
}

/** The claude of the moment behind its pty (none between two), and how agentbox types into it and ends it. */
export class ClaudeSlot {
  private claude: OwnedPty | null = null;
  /** The claude that /exit was typed into (once per claude). */
  private exitTyped: OwnedPty | null = null;

  constructor(private readonly deps: SlotDeps) {}

  get current(): OwnedPty | null {
    return this.claude;
  }

  /** Starts a claude, names it in the run's state, and resolves once it has exited (and left the slot). */
  async run(launch: ClaudeLaunch): Promise<{ exit: PtyExit; spawnedAt: number }> {
    const { spawn, bin, cwd, target } = this.deps;
    const { args, env, cols, rows, onData } = launch;
    const claude = spawnOwnedPty(spawn, bin, args, { cwd, env, cols, rows, onData });
    this.claude = claude;
    const spawnedAt = Date.now();
    await writeState(target, 'claude_spawn', {
      claude_pid: claude.pid,
      claude_pid_start: processStartTime(claude.pid),
      process_mark: claude.mark,
      launch_dir: cwd,
      session_id: launch.sessionId,
      last_heartbeat: new Date().toISOString(),
    });
    // Logged once the state names it: whoever reads the log line finds the session id in state.json.
    target.log.write('claude_spawn', { pid: claude.pid, mode: launch.mode, session: launch.sessionId });
    const exit = await claude.exited;
    this.claude = null;
    // A clean exit of its own says enough by its code; any other end says why (stopped, killed, signal).
    const why = exit.why === 'exit' ? undefined : exit.why;
    target.log.write('claude_exit', { code: exit.code, signal: exit.signal, why });
    return { exit, spawnedAt };
  }

  /**
   * Types `text` at claude's prompt: the text, a pause, then Enter (Claude Code takes text and Enter
   * in one write as a paste and swallows the Enter). Nothing when no claude runs.
   */
  type(text: string): void {
    const claude = this.claude;
    if (!claude) return;
    claude.write(text);
    setTimeout(() => claude.write('\r'), TYPE_PAUSE_MS);
  }

  /**
   * Ends claude the way a person would: `/exit` typed at its prompt (seed 001: a clean exit, not a
   * signal). Only a claude that is still there after EXIT_GRACE_MS is stopped by its owner.
   */
  askExit(): void {
    const claude = this.claude;
    if (!claude || this.exitTyped === claude) return;
    this.exitTyped = claude;
    this.type('/exit');
    this.deps.target.log.write('claude_exit_requested', { by: '/exit' });
    setTimeout(() => {
      if (this.claude !== claude) return;
      this.deps.target.log.write('claude_exit_forced', { after_ms: EXIT_GRACE_MS });
      void claude.stop();
    }, EXIT_GRACE_MS).unref();
  }

  /** Stops the claude of the moment: SIGTERM to its group, SIGKILL after the grace (0: at once). */
  stop(graceMs?: number): void {
    void this.claude?.stop(graceMs);
  }
}
