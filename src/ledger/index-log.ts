import fs from 'node:fs';
import { errnoCode, fsError } from '../errors.js';
import { isObj } from './check.js';
import type { Ledger } from './paths.js';
import { oneLine, shorten, shortTask } from './text.js';
import {
  FAILURE_KINDS,
  type IndexEvent,
  RUN_STATUSES,
  RUN_TYPES,
  type RunMeta,
  type RunState,
  type RunUsage,
} from './types.js';

/** A run's cost in USD, agent and supervisor together; null before anything was spent or recorded. */
export function runCost(usage: RunUsage | null | undefined): number | null {
  return usage ? usage.agent.cost_usd + usage.supervisor.cost_usd : null;
}

/**
 * INDEX.jsonl: one JSON line per event, appended, never rewritten. NOTE: concurrent writers stay
 * whole only because each line goes out in ONE write(2) on an O_APPEND file and stays far below
 * 4 KB (PIPE_BUF): keep the truncation limits below when adding fields.
 */

const DETAIL_MAX = 240;
const EVENT_MAX = 40;
export const LINE_MAX_BYTES = 4000;

export function makeIndexEvent(
  meta: Pick<RunMeta, 'run_name' | 'type' | 'task' | 'origin'>,
  state: RunState,
  event: string,
  detail: string | undefined,
  now: Date,
): IndexEvent {
  const shortDetail = detail === undefined ? undefined : shorten(oneLine(detail), DETAIL_MAX);
  return {
    v: 1,
    ts: now.toISOString(),
    run: meta.run_name,
    event: shorten(oneLine(event), EVENT_MAX),
    type: meta.type,
    status: state.status,
    task: shortTask(meta.task),
    ...(shortDetail ? { detail: shortDetail } : {}),
    started_at: state.started_at,
    ended_at: state.ended_at,
    failure_kind: state.failure?.kind ?? null,
    cost_usd: runCost(state.usage),
    tool_calls: state.tool_calls,
    ...(meta.origin ? { ran_on: shorten(oneLine(meta.origin.host), EVENT_MAX) } : {}),
  };
}

export function serializeIndexEvent(event: IndexEvent): string {
  const line = `${JSON.stringify(event)}\n`;
  // Unreachable with the limits above; a guard so a future field cannot silently break atomicity.
  if (Buffer.byteLength(line) > LINE_MAX_BYTES) throw new Error(`INDEX.jsonl line too long for ${event.run}`);
  return line;
}

export function appendIndexEvent(ledger: Ledger, event: IndexEvent): void {
  try {
    fs.appendFileSync(ledger.indexJsonl, serializeIndexEvent(event));
  } catch (error) {
    throw fsError(error, 'append to', ledger.indexJsonl);
  }
}

/** One parsed line, or null for a line that is not a valid event (skipped, never fatal). */
export function parseIndexLine(line: string): IndexEvent | null {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return null;
  }
  if (!isObj(raw) || raw.v !== 1 || typeof raw.run !== 'string' || typeof raw.ts !== 'string') return null;
  if (!(RUN_STATUSES as readonly unknown[]).includes(raw.status)) return null;
  if (!(RUN_TYPES as readonly unknown[]).includes(raw.type) || typeof raw.task !== 'string') return null;
  if (raw.failure_kind != null && !(FAILURE_KINDS as readonly unknown[]).includes(raw.failure_kind))
    return null;
  if (raw.ran_on !== undefined && typeof raw.ran_on !== 'string') return null;
  return raw as unknown as IndexEvent;
}

export interface IndexLog {
  readonly events: IndexEvent[];
  /** Bytes read: the file's size at the moment it was read. */
  readonly bytes: number;
  /** Lines that did not parse (a torn write from a crash, a hand edit). */
  readonly skipped: number;
}

export function readIndexLog(ledger: Ledger): IndexLog {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(ledger.indexJsonl);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return { events: [], bytes: 0, skipped: 0 };
    throw fsError(error, 'read', ledger.indexJsonl);
  }
  const events: IndexEvent[] = [];
  let skipped = 0;
  for (const line of buf.toString('utf8').split('\n')) {
    if (!line) continue;
    const event = parseIndexLine(line);
    if (event) events.push(event);
    else skipped++;
  }
  return { events, bytes: buf.length, skipped };
}

export interface FoldedRun {
  readonly last: IndexEvent;
  /** When the run started: from the newest event that says, else the first event's time. */
  readonly started_at: string;
}

/** The last event per run wins (INDEX.jsonl is in append order); a `deleted` run (agentbox gc) is gone. */
export function foldIndex(events: readonly IndexEvent[]): Map<string, FoldedRun> {
  const runs = new Map<string, FoldedRun>();
  for (const event of events) {
    if (event.event === 'deleted') {
      runs.delete(event.run);
      continue;
    }
    const before = runs.get(event.run);
    runs.set(event.run, { last: event, started_at: event.started_at ?? before?.started_at ?? event.ts });
  }
  return runs;
}
