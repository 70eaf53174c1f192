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
 * At most this many lines a minute, whatever is refused. NOTE: any page the browser opens can send
 * requests to this port (an <img>, a no-cors fetch), each with a new path: each was a new refusal
 * and a new line, a disk filled at the page's pace. Past the budget refusals are counted, and the
 * count (`unlogged`) goes with the next line written.
 */
const LINES_PER_MINUTE = 100;
/**
 * Each text of a line at most this long: a path or Host header of 16 KB made 100 lines a minute
 * 1.6 MB (2.3 GB a day, from any page left open).
 */
const FIELD_MAX = 200;
/** The log stops growing here (about 50,000 lines); refusals past it are counted only. */
const FILE_MAX = 16 * 1024 * 1024;

/** `text` cut to FIELD_MAX characters, the cut said. Pure. */
const cut = (text: string): string =>
  text.length > FIELD_MAX ? `${text.slice(0, FIELD_MAX)}… (${text.length} characters)` : text;

/**
 * The UI server's refusals, in `.agents/ui/events.jsonl` (`ui_refused`): a refusal that is not
 * about one run has no run folder to go to. The same refusal again within a minute is counted,
 * and the count written with its next line, so a page left open on an old token cannot fill the disk;
 * nor can a flood of different ones (at most LINES_PER_MINUTE lines a minute).
 */
export class UiRefusalLog {
  private readonly log: EventLog;
  private readonly last = new Map<string, { at: number; repeated: number }>();
  private budget = { at: Number.NEGATIVE_INFINITY, written: 0, unlogged: 0, full: false };

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
  record(full: UiProblem): void {
    const problem = { ...full, reason: cut(full.reason), method: cut(full.method), path: cut(full.path) };
    const key = `${problem.status} ${problem.method} ${problem.path} ${problem.reason}`;
    const seen = this.last.get(key);
    const at = this.now();
    if (seen && at - seen.at < QUIET_MS) {
      seen.repeated++;
      return;
    }
    if (at - this.budget.at >= QUIET_MS)
      this.budget = { at, written: 0, unlogged: this.budget.unlogged, full: this.sizeReached() };
    if (this.budget.written >= LINES_PER_MINUTE || this.budget.full) {
      this.budget.unlogged++;
      return;
    }
    const unlogged = this.budget.unlogged;
    this.budget.written++;
    this.budget.unlogged = 0;
    this.log.append({
      event: 'ui_refused',
      ...problem,
      ...(seen?.repeated ? { repeated: seen.repeated } : {}),
      ...(unlogged ? { unlogged } : {}),
    });
    this.last.set(key, { at, repeated: 0 });
    // Bounded: a flood of distinct paths keeps only the newest keys.
    if (this.last.size > 1000) this.last.delete(this.last.keys().next().value!);
  }

  /** The log has reached FILE_MAX (asked once a minute, with the budget's reset). */
  private sizeReached(): boolean {
    try {
      return fs.statSync(this.log.file).size >= FILE_MAX;
    } catch {
      return false;
    }
  }
}
