import fs from 'node:fs';
import path from 'node:path';
import { errnoCode, fsError } from '../errors.js';
import { readFoldedIndex } from './fold-cache.js';
import { runCost } from './index-log.js';
import { readMeta } from './meta.js';
import { isRunName, runIdOf, STAMP_LENGTH } from './names.js';
import { cachedRunNames, type RunNames } from './names-cache.js';
import { type Ledger, notInitialized } from './paths.js';
import { readState } from './state.js';
import { shortTask } from './text.js';
import type { FailureKind, RunStatus, RunType } from './types.js';

/** One row of `agentbox status`. Field names are stable: `status --json` prints them. */
export interface RunSummary {
  readonly name: string;
  readonly id: string;
  /** null: the folder has no readable meta.yaml (being created right now, or damaged). */
  readonly type: RunType | null;
  /** null: the folder has no readable state.json (being created right now, or damaged). */
  readonly status: RunStatus | null;
  /** On one line, at most 200 characters; `agentbox show` has the full text. */
  readonly task: string;
  readonly started_at: string | null;
  readonly ended_at: string | null;
  readonly failure_kind: FailureKind | null;
  /** What the run has cost so far in USD (agent and supervisor); null: nothing recorded. */
  readonly cost_usd: number | null;
  /** Tool calls so far; null: not recorded (a run from an older agentbox, or a damaged one). */
  readonly tool_calls: number | null;
  /** Why a field above is null, or null. */
  readonly problem: string | null;
  /** A run brought in by `agentbox fetch`: the machine it ran on (untrusted text); null: here. */
  readonly ran_on: string | null;
}

/** Every run folder name, newest minute first (names sort by their `YY-MM-DD_HHmm` prefix). */
export function listRunNames(ledger: Ledger): string[] {
  return newestRunNames(ledger).names;
}

/** The newest `want` run folder names at least (all of them by default), and how many there are. */
export function newestRunNames(ledger: Ledger, want = Number.POSITIVE_INFINITY): RunNames {
  const fail = (error: unknown) =>
    errnoCode(error) === 'ENOENT' ? notInitialized(ledger.root) : fsError(error, 'list', ledger.runsDir);
  let stat: fs.BigIntStats;
  try {
    stat = fs.statSync(ledger.runsDir, { bigint: true });
  } catch (error) {
    throw fail(error);
  }
  return cachedRunNames(
    ledger,
    stat,
    () => {
      try {
        return fs.readdirSync(ledger.runsDir).filter(isRunName).sort().reverse();
      } catch (error) {
        throw fail(error);
      }
    },
    want,
  );
}

/** Newest first: by start minute (the name), then start time inside the minute, then name. */
export function compareRuns(a: RunSummary, b: RunSummary): number {
  // NOTE: no slicing (sorting 10,000 runs calls this ~140,000 times). The stamp is a fixed-length
  // prefix, so when stamps differ the whole names order the same way.
  if (!sameStamp(a.name, b.name)) return a.name < b.name ? 1 : -1;
  const ta = a.started_at ?? '';
  const tb = b.started_at ?? '';
  if (ta !== tb) return ta < tb ? 1 : -1;
  return a.name < b.name ? 1 : a.name > b.name ? -1 : 0;
}

/**
 * `runs`, in name order (newest minute first), sorted by compareRuns: only runs sharing a minute
 * can be out of order, so only those are sorted (a whole sort of 10,000 runs costs ~8 ms). A
 * minute of a few runs by insertion; a crowded one (a burst of CI runs) by the built-in sort.
 */
function sortInsideMinutes(runs: RunSummary[]): RunSummary[] {
  for (let start = 0, end = 1; start < runs.length; start = end, end = start + 1) {
    while (end < runs.length && sameStamp(runs[start]!.name, runs[end]!.name)) end++;
    if (end - start > 8) {
      runs.splice(start, end - start, ...runs.slice(start, end).sort(compareRuns));
      continue;
    }
    for (let i = start + 1; i < end; i++) {
      const run = runs[i]!;
      let j = i;
      for (; j > start && compareRuns(runs[j - 1]!, run) > 0; j--) runs[j] = runs[j - 1]!;
      runs[j] = run;
    }
  }
  return runs;
}

/** Compared from the end: neighbouring runs differ in the minute first. */
function sameStamp(a: string, b: string): boolean {
  for (let i = STAMP_LENGTH - 1; i >= 0; i--) if (a.charCodeAt(i) !== b.charCodeAt(i)) return false;
  return true;
}

/**
 * A summary from the run's own files: state.json alone when it carries `summary` (no YAML
 * parser needed), else meta.yaml too. A damaged run becomes a row with a `problem`, not a throw.
 */
export function summaryFromFiles(ledger: Ledger, name: string): RunSummary {
  const dir = path.join(ledger.runsDir, name);
  const problems: string[] = [];
  const attempt = <T>(read: () => T | undefined | null, what: string): T | null => {
    try {
      const value = read();
      if (value == null) problems.push(`no ${what}`);
      return value ?? null;
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
      return null;
    }
  };
  const state = attempt(() => readState(dir), 'state.json');
  const meta = state?.summary ? null : attempt(() => readMeta(dir), 'meta.yaml');
  return {
    name,
    id: runIdOf(name),
    type: state?.summary?.type ?? meta?.type ?? null,
    status: state?.status ?? null,
    task: state?.summary?.task ?? (meta ? shortTask(meta.task) : ''),
    started_at: state?.started_at ?? null,
    ended_at: state?.ended_at ?? null,
    failure_kind: state?.failure?.kind ?? null,
    cost_usd: runCost(state?.usage),
    tool_calls: state?.tool_calls ?? null,
    problem: problems.length > 0 ? problems.join('; ') : null,
    ran_on: state?.summary?.ran_on ?? meta?.origin?.host ?? null,
  };
}

/**
 * Runs newest first, and how many there are. NOTE: built to stay fast with 10,000 runs:
 * - with a `limit`, one readdir plus the files of the newest `limit` runs only (plus the rest of
 *   the boundary minute, because names order runs only to the minute);
 * - without one (`--all`), INDEX.jsonl is folded instead of opening 20,000 files (the fold is
 *   cached: src/ledger/fold-cache.ts); a run the log does not know yet is read from its files.
 *   The log can lag state.json by one event if a process died between the two writes.
 */
export function listRuns(
  ledger: Ledger,
  opts: { limit?: number } = {},
): { runs: RunSummary[]; total: number } {
  const { limit } = opts;
  if (limit === undefined) {
    const names = listRunNames(ledger);
    const total = names.length;
    const folded = readFoldedIndex(ledger).runs;
    const runs = names.map((name) => {
      const run = folded.get(name);
      return run ?? summaryFromFiles(ledger, name);
    });
    return { runs: sortInsideMinutes(runs), total };
  }
  const cap = Math.max(0, Math.floor(limit));
  let { names, total } = newestRunNames(ledger, cap + 1);
  let end = Math.min(cap, total);
  const boundary = end > 0 ? names[end - 1]!.slice(0, STAMP_LENGTH) : undefined;
  for (; boundary !== undefined && end < total; end++) {
    // The boundary minute goes on past the newest names the cache keeps: all of them, then.
    if (end === names.length) names = listRunNames(ledger);
    const name = names[end];
    if (name === undefined || !name.startsWith(boundary)) break;
  }
  const runs = names.slice(0, end).map((name) => summaryFromFiles(ledger, name));
  return { runs: runs.sort(compareRuns).slice(0, cap), total };
}
