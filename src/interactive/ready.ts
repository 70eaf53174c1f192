/**
 * When claude's screen is ready to be typed into or written between. Claude Code draws its prompt a
 * moment after SessionStart, and input typed before it is ready can be lost; a pty read can split a
 * frame, so what agentbox writes to the person's terminal waits for a quiet screen too. On a loaded
 * machine drawing takes longer, and the quiet rule waits for it. Pure.
 */

/** How long the screen has to be still to count as drawn. */
export const QUIET_MS = 300;
/** The least time after a SessionStart before claude is typed into. */
export const READY_AFTER_START_MS = 800;

export interface ScreenWait {
  readonly now: number;
  /** When the wait began (a SessionStart, a Stop, the title saying claude is at its prompt). */
  readonly since: number;
  /** When claude last wrote to its screen. */
  readonly lastOutputAt: number;
  /** The least time after `since`, quiet or not. */
  readonly settleMs?: number;
  /** The most time after `since`: ready then, quiet or not. */
  readonly maxMs?: number;
}

/** Whether the wait is over: settled, and quiet since both the last output and the wait's start. */
export function screenReady(wait: ScreenWait): boolean {
  const waited = wait.now - wait.since;
  if (waited >= (wait.maxMs ?? Number.POSITIVE_INFINITY)) return true;
  const quietFor = wait.now - Math.max(wait.lastOutputAt, wait.since);
  return waited >= (wait.settleMs ?? 0) && quietFor >= QUIET_MS;
}
