import fs from 'node:fs';
import path from 'node:path';
import { RUN_STATUSES, type RunStatus, type RunUsage } from './types.js';

/*
 * A fix run's patch sets (agentbox revise), as the ledger keeps them: revisions/<k>/ (written by
 * src/run/revise.ts when a revision begins and src/run/end/revision.ts when it ends).
 */

export const REVISIONS_DIR = 'revisions';

/** revisions/<k>/revision.json. */
export interface RevisionRecord {
  readonly schema_version: 1;
  readonly revision: number;
  /** How the revision ended (the run's status then). */
  readonly status: RunStatus;
  readonly started_at: string;
  readonly ended_at: string;
  /** Wall-clock, from the revision's start to its end (a crash and its recovery included). */
  readonly duration_ms: number;
  /** What the revision cost, agent and supervisor (USD). */
  readonly cost_usd: number;
  /** runs.verify at the revision's end; null: not run. */
  readonly verified: boolean | null;
  /** The result it started from (the previous revision's commit, or the run's start). */
  readonly from_commit: string | null;
  /** Its result commit on the run's branch; null: none. */
  readonly commit: string | null;
  /** The person's review, relative to the revision's folder; null for revision 1 (the task). */
  readonly feedback: string | null;
}

export const revisionDir = (runDir: string, k: number) => path.join(runDir, REVISIONS_DIR, String(k));

/** The run's cost so far, agent and supervisor (USD). Pure. */
export function costOf(usage: RunUsage | null | undefined): number {
  return usage ? usage.agent.cost_usd + usage.supervisor.cost_usd : 0;
}

/**
 * revision.json of revision k, or null (not ended yet, no such revision, or not a record as
 * agentbox writes one: a fetched run's is its publication's, and the page and `revise` print
 * its numbers).
 */
export function readRevision(runDir: string, k: number): RevisionRecord | null {
  try {
    const o = JSON.parse(fs.readFileSync(path.join(revisionDir(runDir, k), 'revision.json'), 'utf8'));
    return o && typeof o === 'object' && o.revision === k && wellFormed(o) ? (o as RevisionRecord) : null;
  } catch {
    return null;
  }
}

const isText = (v: unknown) => typeof v === 'string';
const textOrNull = (v: unknown) => v === null || typeof v === 'string';
const isAmount = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0;

/** Every field of a RevisionRecord of the type agentbox writes. Pure. */
function wellFormed(o: Record<string, unknown>): boolean {
  return (
    (RUN_STATUSES as readonly unknown[]).includes(o.status) &&
    isText(o.started_at) &&
    isText(o.ended_at) &&
    isAmount(o.duration_ms) &&
    isAmount(o.cost_usd) &&
    (o.verified === null || typeof o.verified === 'boolean') &&
    textOrNull(o.from_commit) &&
    textOrNull(o.commit) &&
    textOrNull(o.feedback)
  );
}
