import fs from 'node:fs';
import path from 'node:path';
import { applyStat } from '../git/apply.js';
import { patchFilesOf, patchHeaders } from '../git/patch-files.js';
import { type Ledger, type RunDetails, readRun, resolveRun } from '../ledger/index.js';
import { sha256Of } from '../ledger/reviewed.js';
import { isLive, liveChanges } from '../review/live.js';
import type { Env } from '../util/env.js';

/** Larger patches are not sent: the page says so and names the command (as for a finished run). */
export const LIVE_PATCH_MAX = 5 * 1024 * 1024;
/** A live run is diffed again at most this often, however often it is asked. */
export const LIVE_MIN_INTERVAL_MS = 1000;

export interface DiffAnswer {
  readonly run: string;
  readonly id: string;
  /** true: an ACTIVE fix run's worktree now, not its final changes.patch. */
  readonly in_progress: boolean;
  readonly base: string | null;
  readonly files: readonly { path: string; status: string }[];
  readonly stat: string;
  /** null: no change yet, or too large (`too_large`). */
  readonly patch: string | null;
  readonly too_large: boolean;
  /** A finished run's patch as sent: its sha256; else null. */
  readonly patch_sha256: string | null;
}

interface Kept {
  /** What the run's stream looked like when diffed (its size): it grows with each tool result. */
  readonly key: string;
  readonly at: number;
  readonly answer: Promise<DiffAnswer>;
}

/**
 * `GET /api/runs/<run>/diff`. An ACTIVE fix run's changes so far (src/review/live.ts, the function
 * `agentbox diff` uses), `in_progress: true`; any other run's changes.patch. A live diff is made
 * again only when the run's stream has grown since (a tool call ended, the agent wrote) and at
 * most once a second: a page open on a long run costs one `git add` into a temp index per second at
 * most, and nothing while the agent waits.
 */
export class LiveDiffs {
  private readonly kept = new Map<string, Kept>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly minIntervalMs = LIVE_MIN_INTERVAL_MS,
  ) {}

  async answer(ledger: Ledger, root: string, ref: string, env?: Env): Promise<DiffAnswer> {
    const run = readRun(ledger, resolveRun(ledger, ref));
    if (!isLive(run)) {
      this.kept.delete(run.name);
      return finishedAnswer(root, run);
    }
    const key = streamSize(run.dir);
    const kept = this.kept.get(run.name);
    const fresh = kept && (kept.key === key || this.now() - kept.at < this.minIntervalMs);
    if (kept && fresh) return kept.answer;
    const answer = liveAnswer(root, run, env);
    this.kept.set(run.name, { key, at: this.now(), answer });
    // A failed diff is not kept: the next request tries again.
    answer.catch(() => this.kept.delete(run.name));
    return answer;
  }
}

async function liveAnswer(root: string, run: RunDetails, env?: Env): Promise<DiffAnswer> {
  const live = await liveChanges(root, run, env);
  if (!live) return finishedAnswer(root, run);
  live.dispose(); // the patch is all the page needs
  const large = live.patch.length > LIVE_PATCH_MAX;
  return {
    run: run.name,
    id: run.meta.run_id,
    in_progress: true,
    base: live.base,
    files: live.files.map((f) => ({ path: f.path, status: f.status })),
    stat: live.stat,
    patch: large || live.patch.length === 0 ? null : live.patch.toString('utf8'),
    too_large: large,
    patch_sha256: null,
  };
}

/**
 * A finished run's changes.patch, with its files and git's stat of it: both read from the patch
 * (its headers alone when it is too large to send), so they are what merge would apply.
 */
async function finishedAnswer(root: string, run: RunDetails): Promise<DiffAnswer> {
  const file = path.join(run.dir, 'changes.patch');
  const size = run.files.includes('changes.patch') ? fs.statSync(file).size : 0;
  const large = size > LIVE_PATCH_MAX;
  const bytes = size === 0 || large ? null : fs.readFileSync(file);
  const sha256 = bytes === null ? null : sha256Of(bytes);
  const files = size === 0 ? [] : patchFilesOf(bytes ?? patchHeaders(file));
  return {
    run: run.name,
    id: run.meta.run_id,
    in_progress: false,
    base: run.meta.repo_sha_start ?? null,
    files: files.map((f) => ({ path: f.path, status: f.status })),
    stat: size === 0 ? '' : await applyStat(root, file),
    patch: bytes === null ? null : bytes.toString('utf8'),
    too_large: large,
    patch_sha256: sha256,
  };
}

function streamSize(runDir: string): string {
  try {
    return String(fs.statSync(path.join(runDir, 'raw', 'stream.jsonl')).size);
  } catch {
    return '';
  }
}

/** The server's one: what it diffed is kept across requests. */
export const liveDiffs = new LiveDiffs();
