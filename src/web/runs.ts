import fs from 'node:fs';
import path from 'node:path';
import { parseStreamLine } from '../claude/stream.js';
import { type GroupSummary, isGroupRow, listStatusRows } from '../group/status-rows.js';
import { type Ledger, readMeta, readState } from '../ledger/index.js';
import { runCost } from '../ledger/index-log.js';
import type { RunSummary } from '../ledger/list.js';
import { RUN_STATUSES, RUN_TYPES } from '../ledger/types.js';
import { toolTarget } from '../present/live.js';
import { withLabel } from './groups.js';
import { HttpError } from './http.js';

/** What `GET /api/runs` answers: a page of runs, newest first, and how many match. */
export interface RunsPage {
  readonly runs: readonly ((RunSummary & { readonly now?: Activity | null }) | GroupSummary)[];
  readonly total: number;
  readonly offset: number;
  readonly limit: number;
}

/** What an ACTIVE run is doing: its last tool call, its tool calls so far. */
export interface Activity {
  readonly tool: string | null;
  readonly target: string | null;
  readonly tool_calls: number;
  /** Agent and supervisor, as state.json has it now (part of it estimated while a process runs). */
  readonly cost_usd: number | null;
  readonly since: string | null;
  /** Stops so far, and the run's limit (`--max-iterations`). */
  readonly iteration: number;
  readonly max_iterations: number | null;
  /** An interactive session whose claude finished its turn: it waits for the person. */
  readonly waiting: boolean;
}

const PAGE_MAX = 500;

function intParam(params: URLSearchParams, key: string, fallback: number, max: number): number {
  const raw = params.get(key);
  if (raw === null || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new HttpError(400, `"${key}" must be a whole number, not "${raw}"`);
  return Math.min(Number(raw), max);
}

function oneOf<T extends string>(params: URLSearchParams, key: string, allowed: readonly T[]): T | null {
  const raw = params.get(key);
  if (raw === null || raw === '') return null;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new HttpError(400, `"${key}" must be one of ${allowed.join(', ')}, not "${raw}"`);
  }
  return raw as T;
}

/**
 * `GET /api/runs?offset&limit&status&type&q`: without a filter only the newest `offset + limit`
 * run folders are read (as `agentbox status` does); a filter folds INDEX.jsonl instead.
 */
export function runsPage(ledger: Ledger, params: URLSearchParams): RunsPage {
  const offset = intParam(params, 'offset', 0, Number.MAX_SAFE_INTEGER);
  const limit = intParam(params, 'limit', 50, PAGE_MAX);
  const status = oneOf(params, 'status', RUN_STATUSES);
  const type = oneOf(params, 'type', RUN_TYPES);
  const q = (params.get('q') ?? '').trim().toLowerCase();
  const filtered = status !== null || type !== null || q !== '';
  // A group is one row, its attempts are not listed (src/group/status-rows.ts, as `agentbox status`).
  const { rows, total } = listStatusRows(ledger, filtered ? {} : { limit: offset + limit });
  const runs = rows.map((row) => (isGroupRow(row) ? withLabel(row) : row));
  const matching = filtered
    ? runs.filter(
        (r) =>
          (status === null || r.status === status) &&
          (type === null || r.type === type) &&
          (q === '' || r.task.toLowerCase().includes(q) || r.name.includes(q)),
      )
    : runs;
  const page = matching
    .slice(offset, offset + limit)
    .map((run) => (run.status === 'ACTIVE' && !isGroupRow(run) ? live(ledger, run) : run));
  return { runs: page, total: filtered ? matching.length : total, offset, limit };
}

/**
 * An ACTIVE run's row with what it is doing, and its cost and tool calls as of now. NOTE: with a
 * filter the rows come from the INDEX.jsonl fold, which holds them as of the run's last status
 * change; without, from state.json: a person typing in the search box saw the cost go back.
 */
function live(ledger: Ledger, run: RunSummary): RunSummary & { readonly now: Activity | null } {
  const now = activity(ledger, run.name);
  return now ? { ...run, cost_usd: now.cost_usd, tool_calls: now.tool_calls, now } : { ...run, now };
}

/** The last tool call in the tail of a run's stream, and its tool-call count. */
export function activity(ledger: Ledger, name: string): Activity | null {
  const dir = path.join(ledger.runsDir, name);
  const state = readState(dir);
  if (!state) return null;
  let tool: string | null = null;
  let target: string | null = null;
  for (const line of tail(path.join(dir, 'raw', 'stream.jsonl'), 64 * 1024)) {
    for (const e of parseStreamLine(line)) {
      if (e.kind === 'tool_use') {
        tool = e.name;
        target = toolTarget(e.input);
      }
    }
  }
  const events = tail(path.join(dir, 'events.jsonl'), 1024 * 1024);
  const stops = events.filter((line) => line.includes('"event":"Stop"')).length;
  // The last turn event says whose turn it is: after a Stop, the person's.
  const turn = events.findLast((line) =>
    /"event":"(Stop|UserPromptSubmit|PreToolUse|PostToolUse)"/.test(line),
  );
  const meta = readMeta(dir);
  const max = meta?.options?.max_iterations;
  return {
    tool,
    target,
    tool_calls: state.tool_calls,
    cost_usd: runCost(state.usage),
    since: state.started_at,
    iteration: stops + 1,
    max_iterations: typeof max === 'number' ? max : null,
    waiting: meta?.type === 'interactive' && turn?.includes('"event":"Stop"') === true,
  };
}

/** The whole lines in the last `bytes` of a file; none when it does not exist. */
function tail(file: string, bytes: number): string[] {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return [];
  }
  try {
    const size = fs.fstatSync(fd).size;
    const start = Math.max(0, size - bytes);
    const buf = Buffer.alloc(size - start);
    fs.readSync(fd, buf, 0, buf.length, start);
    const lines = buf.toString('utf8').split('\n');
    if (start > 0) lines.shift();
    return lines;
  } finally {
    fs.closeSync(fd);
  }
}
