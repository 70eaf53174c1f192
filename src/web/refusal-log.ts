import fs from 'node:fs';
import path from 'node:path';
import { EventLog } from '../ledger/events.js';
import type { Ledger } from '../ledger/index.js';

/** What the UI server refused: a bad token, a foreign Host or Origin, a bad request, a gate. */
export interface UiProblem {
  readonly status: number;
  readonly reason: string;
  readonly method: string;
  readonly path: string;
}

/** How long the same refusal is counted instead of written again (a stale tab retries each second). */
const QUIET_MS = 60_000;

/**
 * The UI server's refusals, in `.agents/ui/events.jsonl` (`ui_refused`): a refusal that is not
 * about one run has no run folder to go to. The same refusal again within a minute is counted,
 * and the count written with its next line, so a page left open on an old token cannot fill the disk.
 */
export class UiRefusalLog {
  private readonly log: EventLog;
  private readonly last = new Map<string, { at: number; repeated: number }>();

  constructor(
    ledger: Ledger,
    private readonly now: () => number = Date.now,
  ) {
    const dir = path.join(ledger.dir, 'ui');
    fs.mkdirSync(dir, { recursive: true });
    this.log = new EventLog(dir);
  }

  get file(): string {
    return this.log.file;
  }

  /** Writes the refusal, or counts it when the same one was written less than a minute ago. */
  record(problem: UiProblem): void {
    const key = `${problem.status} ${problem.method} ${problem.path} ${problem.reason}`;
    const seen = this.last.get(key);
    const at = this.now();
    if (seen && at - seen.at < QUIET_MS) {
      seen.repeated++;
      return;
    }
    this.log.append({
      event: 'ui_refused',
      ...problem,
      ...(seen?.repeated ? { repeated: seen.repeated } : {}),
    });
    this.last.set(key, { at, repeated: 0 });
    // Bounded: a flood of distinct paths keeps only the newest keys.
    if (this.last.size > 1000) this.last.delete(this.last.keys().next().value!);
  }
}
