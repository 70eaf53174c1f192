import fs from 'node:fs';
import path from 'node:path';
import { LineSplitter, parseStreamLine } from '../claude/stream.js';
import { type Failure, type RunDetails, type RunStatus, readState } from '../ledger/index.js';
import { isAlive } from '../process/reap.js';
import { toolTarget } from './live.js';
import { type ToolErrors, toolErrorsOf } from './tool-errors.js';

/** New whole lines of a growing file, from where the last read stopped. */
class Tail {
  private offset = 0;
  private readonly lines = new LineSplitter();
  constructor(private readonly file: string) {}
  read(): string[] {
    let fd: number;
    try {
      fd = fs.openSync(this.file, 'r');
    } catch {
      return [];
    }
    try {
      const out: string[] = [];
      const chunk = Buffer.alloc(64 * 1024);
      for (;;) {
        const n = fs.readSync(fd, chunk, 0, chunk.length, this.offset);
        if (n === 0) break;
        this.offset += n;
        out.push(...this.lines.push(chunk.subarray(0, n)));
      }
      return out;
    } finally {
      fs.closeSync(fd);
    }
  }
}

/** What following a run sees, in order: its tool calls, its events, then how it ended. */
export type RunSighting =
  /** `at`: when claude started the call (its stream line's own time), ms since the epoch. */
  | { readonly kind: 'tool'; readonly name: string; readonly target: string | null; readonly at: number }
  /** `at`: the event's own time (its `ts`). */
  | { readonly kind: 'event'; readonly event: Record<string, unknown>; readonly at: number }
  /** `toolErrors`: its failed tool calls, said on its end line as the foreground's summary does. */
  | {
      readonly kind: 'ended';
      readonly status: RunStatus;
      readonly failure: Failure | null;
      readonly toolErrors: ToolErrors;
    }
  /** Its agentbox process is gone without recording an end. */
  | { readonly kind: 'gone' };

export type Timed = Extract<RunSighting, { at: number }>;

/** A time written as ISO 8601 (`ts` of events.jsonl, `timestamp` of claude's stream), or null. Pure. */
export function timeOf(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const t = Date.parse(value);
  return Number.isFinite(t) ? t : null;
}

/** When one of claude's stream lines was written (Claude Code stamps each message line), or null. Pure. */
export function streamLineTime(line: string): number | null {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null
      ? timeOf((value as { timestamp?: unknown }).timestamp)
      : null;
  } catch {
    return null;
  }
}

/**
 * What one read of the two files found, oldest first: the stream and events.jsonl are read one
 * after the other, so a finished run's whole stream would come before its first event. Ties keep
 * the order read (the tool call before what its hook logged). Pure.
 */
export function inOrder(seen: readonly Timed[]): Timed[] {
  return [...seen].sort((a, b) => a.at - b.at);
}

/** What one look at a run found: its new sightings in order, and its end once it has one. */
export interface RunLook {
  readonly seen: Timed[];
  readonly end: Extract<RunSighting, { kind: 'ended' | 'gone' }> | null;
}

/**
 * Reads a run's tool calls (raw/stream.jsonl) and events.jsonl a look at a time, each look from
 * where the last stopped (followRun; a group's watch looks at each of its attempts in turn).
 */
export class RunFollower {
  private readonly stream: Tail;
  private readonly events: Tail;
  private streamAt: number | null = null;
  private eventAt: number | null = null;

  constructor(private readonly run: Pick<RunDetails, 'dir'>) {
    this.stream = new Tail(path.join(run.dir, 'raw', 'stream.jsonl'));
    this.events = new Tail(path.join(run.dir, 'events.jsonl'));
  }

  look(): RunLook {
    // Read before the files: a run that had ended by then has written all it will.
    const state = readState(this.run.dir);
    const seen = [...this.tools(), ...this.newEvents()];
    let end: RunLook['end'] = null;
    if (state && state.status !== 'ACTIVE' && state.status !== 'STALLED')
      end = { kind: 'ended', status: state.status, failure: state.failure, toolErrors: toolErrorsOf(state) };
    else if (state && !isAlive(state.pid, state.pid_start) && state.pid !== null) end = { kind: 'gone' };
    return { seen: inOrder(seen), end };
  }

  private tools(): Timed[] {
    const seen: Timed[] = [];
    for (const line of this.stream.read()) {
      this.streamAt = streamLineTime(line) ?? this.streamAt;
      for (const e of parseStreamLine(line)) {
        if (e.kind === 'tool_use')
          seen.push({
            kind: 'tool',
            name: e.name,
            target: toolTarget(e.input) || null,
            at: this.streamAt ?? Date.now(),
          });
      }
    }
    return seen;
  }

  private newEvents(): Timed[] {
    const seen: Timed[] = [];
    for (const line of this.events.read()) {
      let event: Record<string, unknown>;
      try {
        event = JSON.parse(line);
      } catch {
        continue;
      }
      this.eventAt = timeOf(event.ts) ?? this.eventAt;
      // A refusal found in the stream at the run's end is logged then, with when it happened (`at`).
      const at = (event.event === 'refused' ? timeOf(event.at) : null) ?? this.eventAt;
      seen.push({ kind: 'event', event, at: at ?? Date.now() });
    }
    return seen;
  }
}

/**
 * Follows a run live, from its start — its tool calls (from raw/stream.jsonl) and events.jsonl —
 * until it ends; a finished run yields what happened and its end. Each sighting carries its own
 * time; a line without one (an older Claude Code, a hand-written line) gets the time before it in
 * its file, else the time it was read. Reads only.
 */
export async function* followRun(run: RunDetails, pollMs = 250): AsyncGenerator<RunSighting> {
  const follower = new RunFollower(run);
  for (;;) {
    const { seen, end } = follower.look();
    yield* seen;
    if (end) {
      yield end;
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
