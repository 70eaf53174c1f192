import fs from 'node:fs';
import { errnoCode, fsError } from '../errors.js';
import { appendNoFollow } from '../util/append.js';
import { isObj } from './check.js';
import { claimedBy, statusClaimed } from './claim.js';
import { runIdOf } from './names.js';
import type { Ledger } from './paths.js';
import { oneLine, shorten, shortTask } from './text.js';
import {
  FAILURE_KINDS,
  type FailureKind,
  type IndexEvent,
  RUN_STATUSES,
  RUN_TYPES,
  type RunMeta,
  type RunState,
  type RunStatus,
  type RunType,
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
const CLAIM_MAX = 200;
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
    ...(state.publication ? { claimed_by: shorten(oneLine(claimedBy(state.publication)), CLAIM_MAX) } : {}),
    ...(statusClaimed(state) ? { status_claimed: true as const } : {}),
    ...(state.summary?.group
      ? {
          group: state.summary.group.id,
          attempt: state.summary.group.attempt,
          verified: state.output?.verified ?? null,
        }
      : {}),
    ...(state.revision ? { revision: state.revision.number } : {}),
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
    appendNoFollow(ledger.indexJsonl, serializeIndexEvent(event));
  } catch (error) {
    throw fsError(error, 'append to', ledger.indexJsonl);
  }
}

export const STATUSES: ReadonlySet<unknown> = new Set(RUN_STATUSES);
export const TYPES: ReadonlySet<unknown> = new Set(RUN_TYPES);
export const FAILURES: ReadonlySet<unknown> = new Set(FAILURE_KINDS);

/** One parsed line, or null for a line that is not a valid event (skipped, never fatal). */
export function parseIndexLine(line: string): IndexEvent | null {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return null;
  }
  if (!isObj(raw) || raw.v !== 1 || typeof raw.run !== 'string' || typeof raw.ts !== 'string') return null;
  if (!STATUSES.has(raw.status) || !TYPES.has(raw.type) || typeof raw.task !== 'string') return null;
  if (raw.failure_kind != null && !FAILURES.has(raw.failure_kind)) return null;
  if (raw.ran_on !== undefined && typeof raw.ran_on !== 'string') return null;
  if (raw.claimed_by !== undefined && typeof raw.claimed_by !== 'string') return null;
  if (raw.status_claimed !== undefined && raw.status_claimed !== true) return null;
  if (raw.group !== undefined && (typeof raw.group !== 'string' || typeof raw.attempt !== 'number'))
    return null;
  if (raw.verified !== undefined && raw.verified !== null && typeof raw.verified !== 'boolean') return null;
  if (raw.revision !== undefined && !Number.isInteger(raw.revision)) return null;
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
  const skipped = eachIndexLine(buf.toString('utf8'), (event) => events.push(event));
  return { events, bytes: buf.length, skipped };
}

/** Calls `take` with each valid event of `text` (INDEX.jsonl lines); returns how many lines were skipped. */
export function eachIndexLine(text: string, take: (event: IndexEvent) => void): number {
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (!line) continue;
    const event = parseIndexLine(line);
    if (event) take(event);
    else skipped++;
  }
  return skipped;
}

/**
 * What the log says of one run now: its last event's fields, typed (a hand-edited line cannot put
 * a number where the table expects text), and when it started. Shaped (and its keys ordered) as
 * a row of `agentbox status --json`, so `--all` lists these very objects.
 */
export interface FoldedRun {
  readonly name: string;
  readonly id: string;
  readonly type: RunType;
  readonly status: RunStatus;
  readonly task: string;
  /** From the newest event that says, else the first event's time. */
  readonly started_at: string;
  readonly ended_at: string | null;
  readonly failure_kind: FailureKind | null;
  readonly cost_usd: number | null;
  readonly tool_calls: number | null;
  readonly problem: null;
  readonly ran_on: string | null;
  /** A fetched run: who published the claims of this row (see RunSummary). */
  readonly claimed_by: string | null;
  readonly status_claimed?: true;
  /** An attempt of a group (`fix --attempts N`): the group's id, its number, its runs.verify outcome. */
  readonly group?: string;
  readonly attempt?: number;
  readonly verified?: boolean | null;
  /** A revised fix run (agentbox revise): the revision it is on. */
  readonly revision?: number;
}

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const finite = (value: unknown): number | null => (Number.isFinite(value) ? (value as number) : null);

/** Folds one more event (INDEX.jsonl is in append order): the last event per run wins; `deleted` (agentbox gc) removes. */
export function foldEvent(runs: Map<string, FoldedRun>, event: IndexEvent): void {
  if (event.event === 'deleted') {
    runs.delete(event.run);
    return;
  }
  runs.set(event.run, {
    name: event.run,
    id: runIdOf(event.run),
    type: event.type,
    status: event.status,
    task: event.task,
    started_at: text(event.started_at) ?? runs.get(event.run)?.started_at ?? event.ts,
    ended_at: text(event.ended_at),
    failure_kind: event.failure_kind ?? null,
    cost_usd: finite(event.cost_usd),
    tool_calls: finite(event.tool_calls),
    problem: null,
    ran_on: event.ran_on ?? null,
    claimed_by: event.claimed_by ?? null,
    ...(event.status_claimed ? { status_claimed: true as const } : {}),
    ...(event.group === undefined
      ? {}
      : { group: event.group, attempt: event.attempt!, verified: event.verified ?? null }),
    ...(event.revision === undefined ? {} : { revision: event.revision }),
  });
}

export function foldIndex(events: readonly IndexEvent[]): Map<string, FoldedRun> {
  const runs = new Map<string, FoldedRun>();
  for (const event of events) foldEvent(runs, event);
  return runs;
}
