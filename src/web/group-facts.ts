import fs from 'node:fs';
import path from 'node:path';
import { claimedRunLine, claimOf } from '../gate/claims.js';
import { gateOf, type NotPassing } from '../gate/merge-gate.js';
import type { Attempt } from '../group/attempts.js';
import { EventLog } from '../ledger/events.js';

/** What the group page shows of an attempt beyond the ranking's facts (src/group/rank-facts.ts). */
export interface AttemptExtras {
  readonly started: boolean;
  /** Part of the cost is agentbox's estimate (a process still runs). */
  readonly estimated: boolean;
  readonly started_at: string | null;
  readonly ended_at: string | null;
  readonly stat: DiffStat | null;
  /** Why it is not a passing attempt (the merge gate's words); null: it passed, or it is not waiting for the gate. */
  readonly not_passing: NotPassing | null;
  /** A fetched group's attempt: what its publication claims, in one line (src/gate/claims.ts); else null. */
  readonly claim_line: string | null;
  readonly failure: string | null;
}

export interface DiffStat {
  readonly files: number;
  readonly insertions: number;
  readonly deletions: number;
}

/** Files, added and removed lines of a unified patch. Pure. */
export function diffStat(patch: string): DiffStat {
  let files = 0;
  let insertions = 0;
  let deletions = 0;
  let inHunk = false;
  for (const line of patch.split('\n')) {
    if (line.startsWith('diff --git ')) {
      files++;
      inHunk = false;
    } else if (line.startsWith('@@')) inHunk = true;
    else if (inHunk && line.startsWith('+')) insertions++;
    else if (inHunk && line.startsWith('-')) deletions++;
  }
  return { files, insertions, deletions };
}

/** The patch is read for its stat up to this size; a larger one has no stat here. */
const STAT_MAX = 5 * 1024 * 1024;

function patchStat(dir: string): DiffStat | null {
  const file = path.join(dir, 'changes.patch');
  try {
    if (fs.statSync(file).size > STAT_MAX) return null;
    return diffStat(fs.readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

/** The gate's word on an attempt, and what a fetched one only claims. */
function verdicts(run: Attempt['run']): Pick<AttemptExtras, 'not_passing' | 'claim_line'> {
  if (!run) return { not_passing: null, claim_line: null };
  const events = new EventLog(run.dir).read();
  const claim = claimOf(run, events);
  return { not_passing: gateOf(run, events), claim_line: claim ? claimedRunLine(claim) : null };
}

/** What the page shows of one attempt beyond the ranking, from its run's files. */
export function attemptExtras(attempt: Attempt): AttemptExtras {
  const run = attempt.run;
  const state = run?.state ?? null;
  return {
    started: attempt.name !== null,
    estimated: Boolean(state?.usage?.agent?.estimated || state?.usage?.supervisor?.estimated),
    started_at: state?.started_at ?? null,
    ended_at: state?.ended_at ?? null,
    stat: run ? patchStat(run.dir) : null,
    ...verdicts(run),
    failure: state?.failure ? `${state.failure.kind}: ${state.failure.message}` : null,
  };
}
