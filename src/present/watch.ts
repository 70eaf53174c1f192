import fs from 'node:fs';
import path from 'node:path';
import { LineSplitter, parseStreamLine } from '../claude/stream.js';
import { type Failure, type RunDetails, type RunStatus, readState } from '../ledger/index.js';
import { isAlive } from '../process/reap.js';
import { toolTarget } from './live.js';

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
  | { readonly kind: 'tool'; readonly name: string; readonly target: string | null }
  | { readonly kind: 'event'; readonly event: Record<string, unknown> }
  | { readonly kind: 'ended'; readonly status: RunStatus; readonly failure: Failure | null }
  /** Its agentbox process is gone without recording an end. */
  | { readonly kind: 'gone' };

/**
 * Follows a run live, from its start — its tool calls (from raw/stream.jsonl) and events.jsonl —
 * until it ends; a finished run yields what happened and its end. Reads only.
 */
export async function* followRun(run: RunDetails, pollMs = 250): AsyncGenerator<RunSighting> {
  const stream = new Tail(path.join(run.dir, 'raw', 'stream.jsonl'));
  const events = new Tail(path.join(run.dir, 'events.jsonl'));
  for (;;) {
    for (const line of stream.read()) {
      for (const e of parseStreamLine(line)) {
        if (e.kind === 'tool_use') yield { kind: 'tool', name: e.name, target: toolTarget(e.input) || null };
      }
    }
    for (const line of events.read()) {
      let event: Record<string, unknown>;
      try {
        event = JSON.parse(line);
      } catch {
        continue;
      }
      yield { kind: 'event', event };
    }
    const state = readState(run.dir);
    if (state && state.status !== 'ACTIVE' && state.status !== 'STALLED') {
      yield { kind: 'ended', status: state.status, failure: state.failure };
      return;
    }
    if (state && !isAlive(state.pid, state.pid_start) && state.pid !== null) {
      yield { kind: 'gone' };
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
