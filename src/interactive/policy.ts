/**
 * The crash-restart policy of an interactive session, as a pure state machine (seed 003):
 * a ring buffer of the last exits; a clean exit asks the person; a crash is Transient (restart soon,
 * resuming the session) unless it is the latest of several in a short window (Flapping: restart
 * later); the Nth crash in a row Halts (no restart; the person is told how to resume).
 */
export type PolicyState = 'healthy' | 'transient' | 'flapping' | 'halted';

export interface PolicyConfig {
  /** Exits kept. */
  readonly history: number;
  /** The window in which crashes count towards flapping. */
  readonly windowMs: number;
  /** Crashes in the window (this one included) from which a crash is flapping. */
  readonly flapThreshold: number;
  /** Consecutive crashes that halt. */
  readonly haltAfter: number;
  readonly transientDelayMs: number;
  readonly flappingDelayMs: number;
}

export const DEFAULT_POLICY: PolicyConfig = {
  history: 10,
  windowMs: 60_000,
  flapThreshold: 3,
  haltAfter: 5,
  transientDelayMs: 2_000,
  flappingDelayMs: 30_000,
};

export interface ExitRecord {
  readonly at: number;
  readonly code: number | null;
  readonly signal: string | null;
}

export interface PolicyMemory {
  readonly state: PolicyState;
  /** Oldest first, at most `history` entries. */
  readonly exits: readonly ExitRecord[];
  /** Crashes since the last clean exit or a run that stayed up past the window. */
  readonly consecutiveFailures: number;
  readonly restarts: number;
}

export const INITIAL_MEMORY: PolicyMemory = {
  state: 'healthy',
  exits: [],
  consecutiveFailures: 0,
  restarts: 0,
};

export type PolicyAction =
  | { readonly kind: 'ask' }
  | { readonly kind: 'restart'; readonly delayMs: number; readonly mode: 'resume' }
  | { readonly kind: 'halt'; readonly message: string };

const crashed = (e: ExitRecord) => e.code !== 0 || e.signal !== null;

/**
 * What to do after claude exited. `startedAt` is when the exited process started: a process that
 * ran longer than the window before crashing starts a fresh count. Pure.
 */
export function onExit(
  config: PolicyConfig,
  memory: PolicyMemory,
  exit: ExitRecord,
  startedAt: number,
): { memory: PolicyMemory; action: PolicyAction } {
  const exits = [...memory.exits, exit].slice(-config.history);
  if (!crashed(exit)) {
    return {
      memory: { ...memory, state: 'healthy', exits, consecutiveFailures: 0 },
      action: { kind: 'ask' },
    };
  }
  const stayedUp = exit.at - startedAt > config.windowMs;
  const consecutiveFailures = stayedUp ? 1 : memory.consecutiveFailures + 1;
  if (consecutiveFailures >= config.haltAfter) {
    return {
      memory: { ...memory, state: 'halted', exits, consecutiveFailures },
      action: { kind: 'halt', message: `claude failed ${consecutiveFailures} times in a row` },
    };
  }
  const recent = exits.filter((e) => crashed(e) && exit.at - e.at <= config.windowMs).length;
  const flapping = recent >= config.flapThreshold;
  return {
    memory: {
      ...memory,
      state: flapping ? 'flapping' : 'transient',
      exits,
      consecutiveFailures,
      restarts: memory.restarts + 1,
    },
    action: {
      kind: 'restart',
      delayMs: flapping ? config.flappingDelayMs : config.transientDelayMs,
      mode: 'resume',
    },
  };
}

/** A restart the person asked for (after a clean exit, or through the IPC socket). */
export function onManualRestart(memory: PolicyMemory): PolicyMemory {
  return { ...memory, state: 'healthy', consecutiveFailures: 0, restarts: memory.restarts + 1 };
}
