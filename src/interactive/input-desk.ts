import type { SessionLog } from './log.js';
import { READY_AFTER_START_MS, screenReady } from './ready.js';
import { isEscKey, titleState } from './screen.js';

const TYPE_PAUSE_MS = 50;

/**
 * Whose turn it is in an interactive session, and the messages waiting to be typed: claude is
 * idle when a Stop hook says so, when it is ready after a SessionStart, or — where no hook fires
 * (Esc, a compaction) — when its screen says it is back at its prompt (src/interactive/screen.ts).
 * A queued message is typed in as soon as claude is idle. One per session; the session tells it
 * what the hooks, the pty and the person's keys say.
 */
export class InputDesk {
  private idle = false;
  private readonly queue: string[] = [];
  private readyTimer: NodeJS.Timeout | undefined;
  /** When claude last wrote to its screen. */
  private lastOutputAt = 0;
  /**
   * A turn ended without a Stop hook (the person pressed Esc, or a compaction): from then on the
   * screen may say claude is back at its prompt. null: trust the hooks.
   */
  private unhooked: { readonly why: string } | null = null;
  private screenTimer: NodeJS.Timeout | undefined;
  /** Claude's input box holds the prompt an Esc cancelled. */
  private inputRestored = false;

  constructor(
    private readonly log: SessionLog,
    /** The claude to type into; null while none runs. */
    private readonly pty: () => { write(data: string): void } | null,
  ) {}

  get isIdle(): boolean {
    return this.idle;
  }

  get queued(): number {
    return this.queue.length;
  }

  /** What claude wrote to its screen. */
  output(data: string): void {
    this.lastOutputAt = Date.now();
    if (this.unhooked && titleState(data) === 'idle') this.idleFromScreen();
  }

  /** What the person typed (passed on to claude by the session). */
  key(data: Buffer | string): void {
    if (isEscKey(data) && !this.idle && this.pty()) {
      this.unhooked = { why: 'esc' };
      this.log.write('interrupt_key', {});
    }
  }

  /** Work under way (a prompt, a tool call): whatever the screen said before is past. */
  working(): void {
    this.unhooked = null;
  }

  /** A prompt went in: claude is busy. */
  busy(): void {
    this.idle = false;
  }

  /** A compaction in the middle of a turn: it stays busy until the Stop, or until the screen says. */
  compactMidTurn(): void {
    this.unhooked = { why: 'compact' };
    this.log.write('compact_mid_turn', {});
  }

  /** Calls `then` once claude is ready after a SessionStart (replacing an earlier wait). */
  whenReady(then: () => void): void {
    clearInterval(this.readyTimer);
    const since = Date.now();
    this.readyTimer = setInterval(() => {
      const wait = {
        now: Date.now(),
        since,
        lastOutputAt: this.lastOutputAt,
        settleMs: READY_AFTER_START_MS,
      };
      if (!screenReady(wait)) return;
      clearInterval(this.readyTimer);
      then();
    }, 100);
  }

  /** Claude is at its prompt: the oldest queued message goes in. */
  becomeIdle(): void {
    this.idle = true;
    this.flush();
  }

  /** Queues a message; it goes in at once when claude is idle. */
  enqueue(text: string): { queued: number; delivered: boolean } {
    this.queue.push(text);
    this.log.write('inject_queued', { chars: text.length, idle: this.idle });
    const waiting = this.queue.length;
    this.flush();
    return { queued: this.queue.length, delivered: this.queue.length < waiting };
  }

  /**
   * Calls `then` once claude's screen has been quiet for QUIET_MS (at most `maxMs` later), if it is
   * still idle: what is written to the person's terminal then lands between claude's frames, not
   * inside one (a pty read can split a frame, and a BEL would cut one of its escape sequences).
   * A person who typed a prompt meanwhile is there: nothing is called.
   */
  whenQuietIdle(then: () => void, maxMs = 3000): void {
    const since = Date.now();
    const check = () => {
      if (!this.idle) return;
      // Quiet since the call too: claude's redraw after a Stop may not have begun yet.
      if (screenReady({ now: Date.now(), since, lastOutputAt: this.lastOutputAt, maxMs })) then();
      else setTimeout(check, 50);
    };
    check();
  }

  /** Claude exited (or is about to be started again): nothing is idle, no wait goes on. */
  reset(): void {
    clearInterval(this.readyTimer);
    clearInterval(this.screenTimer);
    this.idle = false;
  }

  /**
   * After an Esc or a compaction the title says claude is at its prompt: once its screen has been
   * quiet for QUIET_MS (and no hook said otherwise meanwhile) it is idle, and a queued message goes in.
   */
  private idleFromScreen(): void {
    clearInterval(this.screenTimer);
    const since = this.unhooked;
    const from = Date.now();
    this.screenTimer = setInterval(() => {
      if (this.unhooked !== since || this.idle || !this.pty()) return clearInterval(this.screenTimer);
      if (!screenReady({ now: Date.now(), since: from, lastOutputAt: this.lastOutputAt })) return;
      clearInterval(this.screenTimer);
      this.unhooked = null;
      this.log.write('idle_from_screen', { after: since?.why ?? '?' });
      this.inputRestored = since?.why === 'esc';
      this.becomeIdle();
    }, 100);
  }

  /** Types the oldest queued message into the pty if claude is idle: the text, a pause, then Enter. */
  private flush(): void {
    const pty = this.pty();
    if (!this.idle || !pty || this.queue.length === 0) return;
    const text = this.queue.shift()!;
    this.idle = false;
    // After Esc, claude puts the cancelled prompt back in its input box: typed after it, the
    // message would be glued to it. Ctrl+E then Ctrl+U empty the box first (measured).
    const clear = this.inputRestored ? '\u0005\u0015' : '';
    this.inputRestored = false;
    // NOTE: text and Enter written together submit only short text; longer text is taken as a
    // paste and its Enter swallowed (facts file). So: the text, a pause, then a separate Enter.
    pty.write(clear + text);
    setTimeout(() => pty.write('\r'), TYPE_PAUSE_MS);
    this.log.write('inject_delivered', { chars: text.length });
  }
}
