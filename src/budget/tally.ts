import type { ResultEvent, StreamEvent } from '../claude/stream.js';
import type { RunUsage, Spend } from '../ledger/types.js';
import { budgetPassed } from './budget.js';
import { endMeter, type Meter, meterCeiling, meterEvent, meterSpend, startMeter } from './meter.js';
import { addSupervisorCall, NO_SPEND } from './spend.js';

/**
 * A run's spend while it runs — its agent's stream and its supervisor's calls, kept apart — and
 * the cost budget over both. Starts from what the run's state already holds (a resumed run goes
 * on counting).
 */
export class Tally {
  private meter: Meter;
  private supervisor: Spend;

  constructor(
    before: RunUsage | null | undefined,
    private readonly maxCostUsd: number | null,
    private readonly supervisorModel: string | null,
  ) {
    this.meter = startMeter(before?.agent ?? NO_SPEND);
    this.supervisor = before?.supervisor ?? NO_SPEND;
  }

  /** Folds one stream event; true when it changed the spend. */
  event(event: StreamEvent): boolean {
    const next = meterEvent(this.meter, event);
    const changed = next !== this.meter;
    this.meter = next;
    return changed;
  }

  /** One supervisor `claude -p`, with its result line when it printed one. */
  supervisorCall(call: { readonly result?: ResultEvent; readonly durationMs: number }): void {
    this.supervisor = addSupervisorCall(this.supervisor, { ...call, model: this.supervisorModel });
  }

  /** Claude has exited after `wallMs`. */
  end(wallMs: number): void {
    this.meter = endMeter(this.meter, wallMs);
  }

  /** The spend recorded and shown: while claude runs, never more than what the run will end at. */
  usage(): RunUsage {
    return { agent: meterSpend(this.meter), supervisor: this.supervisor };
  }

  /** What the budget counts (USD): the agent's output not yet stated is guessed from its text. */
  budgetUsd(): number {
    return meterCeiling(this.meter).cost_usd + this.supervisor.cost_usd;
  }

  /** Why the run must end now, when it has passed its budget. */
  passed(): string | null {
    return budgetPassed(this.maxCostUsd, meterCeiling(this.meter), this.supervisor);
  }
}
