import path from 'node:path';
import type { Tally } from '../budget/tally.js';
import type { EventLog } from '../ledger/events.js';
import type { SupervisorEnd } from '../supervisor/supervisor.js';
import type { StopReason } from './end/outcome.js';

/**
 * Why a run is ending, decided once: the first reason wins (the timeout excepted: it is the last
 * word on a claude that would not end), and each one that must end claude stops it.
 */
export class Halt {
  private current: StopReason = { kind: 'finished' };
  private stopClaude: (() => unknown) | null = null;

  constructor(
    private readonly options: {
      readonly log: EventLog;
      readonly tally: Tally;
      readonly maxCostUsd: number | null;
      /** The repository root, that file names in messages are relative to. */
      readonly root: string;
      /** Told the run's cost as its budget counts it (USD, agent and supervisor) each time it grows: a group adds its attempts up. */
      readonly onSpend?: (usd: number) => void;
    },
  ) {}

  get reason(): StopReason {
    return this.current;
  }

  /** How to stop claude, once it runs. */
  attach(stop: () => unknown): void {
    this.stopClaude = stop;
  }

  /** The first reason to end the run wins; claude is stopped for it. */
  halt(reason: StopReason): void {
    if (this.current.kind !== 'finished') return;
    this.current = reason;
    void this.stopClaude?.();
  }

  /** The supervisor ended the run: claude ends by itself, on the supervisor's answer. */
  supervisorEnded(end: SupervisorEnd): void {
    if (end.kind === 'abort' && this.current.kind === 'finished')
      this.current = { kind: 'aborted', reason: end.reason, failure: end.failure };
  }

  timedOut(afterMs: number): void {
    this.current = { kind: 'timeout', afterMs };
    void this.stopClaude?.();
  }

  /** Ctrl-C or SIGTERM: claude is stopped even when the run was already ending. */
  interrupted(by: string): void {
    if (this.current.kind === 'finished') this.current = { kind: 'interrupted', by };
    void this.stopClaude?.();
  }

  /**
   * A ledger that cannot be written (disk full, read-only) stops the run: going on would lose what
   * the agent does from then on.
   */
  ioFailed(error: unknown, file: string): void {
    const code = (error as NodeJS.ErrnoException).code;
    this.halt({
      kind: 'io_error',
      message: `cannot write ${path.relative(this.options.root, file)} (${code ?? (error as Error).message}); the run was stopped`,
    });
  }

  /** The cost budget, checked as usage arrives: passing it stops claude, as the timeout does. */
  checkBudget(): void {
    this.options.onSpend?.(this.options.tally.budgetUsd());
    const reason = this.options.tally.passed();
    if (!reason || this.current.kind !== 'finished') return;
    this.options.log.append({
      event: 'budget',
      decision: 'abort',
      reason,
      max_cost_usd: this.options.maxCostUsd,
    });
    this.halt({ kind: 'aborted', reason, failure: 'budget' });
  }
}
