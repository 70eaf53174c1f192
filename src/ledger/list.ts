import fs from 'node:fs';
import path from 'node:path';
import { errnoCode, fsError } from '../errors.js';
import { claimedBy, statusClaimed } from './claim.js';
import { readFold, saveFold } from './fold-cache.js';
import { runCost } from './index-log.js';
import { readMeta } from './meta.js';
import { isRunName, runIdOf, STAMP_LENGTH } from './names.js';
import { cachedRunNames, clockNs, type RunNames, runsStamp, settled } from './names-cache.js';
import { compareRuns, sortInsideMinutes } from './order.js';
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
  /**
   * A fetched run: who published it (its publication commit's identity, src/ledger/claim.ts).
   * Then `status` (but MERGED or DISCARDED decided here: see `status_claimed`), `failure_kind`,
   * `cost_usd`, `tool_calls` and `verified` are what that publication claims, none checked here.
   * null: a run of this machine, every field its own ledger's.
   */
  readonly claimed_by?: string | null;
  /** A fetched run whose status is the one its publication claimed (a MERGED said there included). */
  readonly status_claimed?: true;
  /** An attempt of a group (`fix --attempts N`): `status` shows it in its group's row. */
  readonly group?: string;
  readonly attempt?: number;
  /** An attempt's runs.verify outcome; null: not run. */
  readonly verified?: boolean | null;
  /** A revised fix run (agentbox revise): the revision it is on, 2 or more; absent: never revised. */
  readonly revision?: number;
}

/** Every run folder name, newest minute first (names sort by their `YY-MM-DD_HHmm` prefix). */
export function listRunNames(ledger: Ledger): string[] {
  return newestRunNames(ledger).names;
}

/** The newest `want` run folder names at least (all of them by default), and how many there are. */
export function newestRunNames(ledger: Ledger, want = Number.POSITIVE_INFINITY): RunNames {
  return cachedRunNames(
    ledger,
    statRuns(ledger),
    () => {
      try {
        return fs.readdirSync(ledger.runsDir).filter(isRunName).sort().reverse();
      } catch (error) {
        throw runsFailure(ledger, error);
      }
    },
    want,
  );
}

function statRuns(ledger: Ledger): fs.BigIntStats {
  try {
    return fs.statSync(ledger.runsDir, { bigint: true });
  } catch (error) {
    throw runsFailure(ledger, error);
  }
}

function runsFailure(ledger: Ledger, error: unknown): Error {
  return errnoCode(error) === 'ENOENT' ? notInitialized(ledger.root) : fsError(error, 'list', ledger.runsDir);
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
  const group = state?.summary?.group;
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
    claimed_by: state?.publication ? claimedBy(state.publication) : null,
    ...(statusClaimed(state) ? { status_claimed: true } : {}),
    ...(group ? { group: group.id, attempt: group.attempt, verified: state?.output?.verified ?? null } : {}),
    ...(state?.revision ? { revision: state.revision.number } : {}),
  };
}

/**
 * Runs newest first, and how many there are. NOTE: built to stay fast with 10,000 runs:
 * - with a `limit`, one readdir plus the files of the newest `limit` runs only (plus the rest of
 *   the boundary minute, because names order runs only to the minute);
 * - without one (`--all`), INDEX.jsonl is folded instead of opening 20,000 files (listAll).
 */
export function listRuns(
  ledger: Ledger,
  opts: { limit?: number } = {},
): { runs: RunSummary[]; total: number } {
  const { limit } = opts;
  if (limit === undefined) return listAll(ledger);
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

/**
 * Every run, from the folded INDEX.jsonl (cached: src/ledger/fold-cache.ts); a run the log does not
 * know yet is read from its files. The log can lag state.json by one event if a process died
 * between the two writes. When the cache's runs are exactly runs/'s folders at runs/'s stamp, the
 * cache alone answers; a listing that finds them so records it.
 */
function listAll(ledger: Ledger): { runs: RunSummary[]; total: number } {
  const stat = statRuns(ledger);
  const stamp = runsStamp(stat);
  const read = readFold(ledger, stamp);
  if (read.kind === 'listed') return { runs: read.runs, total: read.runs.length };
  const { fold } = read;
  const listedAt = clockNs();
  const names = listRunNames(ledger);
  let exact = names.length === fold.runs.size && fold.runs === fold.whole.runs;
  const runs = names.map((name): RunSummary => {
    const run = fold.runs.get(name);
    if (run) return run;
    exact = false;
    return summaryFromFiles(ledger, name);
  });
  const listed = exact && settled(stat, listedAt) ? stamp : null;
  if (fold.changed || listed !== fold.listed) saveFold(ledger, fold, listed);
  return { runs: sortInsideMinutes(runs), total: names.length };
}
