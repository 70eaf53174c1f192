import fs from 'node:fs';
import path from 'node:path';
import { interdiff } from '../../git/interdiff.js';
import { hasCommit, resultTree } from '../../git/result-commit.js';
import type { RunMeta, RunState, RunStatus } from '../../ledger/index.js';
import {
  costOf,
  REVISIONS_DIR,
  type RevisionRecord,
  readRevision,
  revisionDir,
} from '../../ledger/revisions.js';
import { writeAtomic } from '../../util/fs.js';

/*
 * A fix run's patch sets (agentbox revise): `revisions/<k>/` keeps each revision — the person's
 * review (feedback.md) and the message the agent got (prompt.md), written when it starts; the whole
 * change so far (changes.patch), the revision's own change (interdiff.patch) and revision.json,
 * written when it ends. Revision 1 is the run as it first ran. The run folder's changes.patch stays
 * the whole change against the run's start.
 */

/**
 * Writes revision k's record: the whole change (a copy of the run's changes.patch), its interdiff
 * against `from` (the previous result), revision.json. Every file is replaced whole: a second
 * finalisation (after a crash) writes the same record again.
 */
export async function writeRevision(
  input: { readonly repoRoot: string; readonly runDir: string; readonly meta: RunMeta },
  record: Omit<RevisionRecord, 'schema_version'>,
  /** A commit the caller has just made or found (the result commit): it is not looked up again. */
  present: string | null = null,
): Promise<string[]> {
  const dir = revisionDir(input.runDir, record.revision);
  fs.mkdirSync(dir, { recursive: true });
  const whole = path.join(input.runDir, 'changes.patch');
  const patch = fs.existsSync(whole) ? fs.readFileSync(whole) : Buffer.alloc(0);
  await writeAtomic(path.join(dir, 'changes.patch'), patch);
  const base = input.meta.repo_sha_start;
  if (base) {
    const previous = path.join(revisionDir(input.runDir, record.revision - 1), 'changes.patch');
    const from = await resultOrTree(input.repoRoot, base, record.from_commit, nonEmpty(previous), present);
    // A revision that changed nothing ends on the result it started from, found just above.
    const same = record.commit !== null && record.commit === record.from_commit && from === record.commit;
    const to = same
      ? from
      : await resultOrTree(input.repoRoot, base, record.commit, patch.length > 0 ? whole : null, present);
    await writeAtomic(path.join(dir, 'interdiff.patch'), await interdiff(input.repoRoot, from, to));
  }
  await writeAtomic(
    path.join(dir, 'revision.json'),
    `${JSON.stringify({ schema_version: 1, ...record }, null, 2)}\n`,
  );
  const rel = (f: string) => `${REVISIONS_DIR}/${record.revision}/${f}`;
  return [rel('changes.patch'), rel('interdiff.patch'), rel('revision.json')];
}

const nonEmpty = (file: string) => (fs.existsSync(file) && fs.statSync(file).size > 0 ? file : null);

/** A result in git: its commit when the repository still has it, else the tree of its patch. */
async function resultOrTree(
  repoRoot: string,
  base: string,
  commit: string | null,
  patchFile: string | null,
  present: string | null,
): Promise<string> {
  if (commit && (commit === present || (await hasCommit(repoRoot, commit)))) return commit;
  return patchFile ? resultTree(repoRoot, base, patchFile) : base;
}

/**
 * At a revised run's end: revision k's record (src/run/end/finalize.ts calls it after the result
 * commit). A run that was never revised has none: its revision 1 is written when it first is.
 */
export async function recordRevision(
  input: { readonly repoRoot: string; readonly runDir: string; readonly meta: RunMeta },
  state: RunState | null,
  end: {
    readonly status: RunStatus;
    readonly commit: string | null;
    readonly verified: boolean | null;
    /** end.commit when it was made or found just now (not read back from the state). */
    readonly present?: string | null;
  },
): Promise<Omit<RevisionRecord, 'schema_version'> | null> {
  const revision = state?.revision;
  if (!revision) return null;
  const now = new Date();
  const record = {
    revision: revision.number,
    status: end.status,
    started_at: revision.started_at,
    ended_at: now.toISOString(),
    duration_ms: Math.max(0, now.getTime() - Date.parse(revision.started_at)),
    cost_usd: Math.max(0, costOf(state.usage) - revision.cost_before_usd),
    verified: end.verified,
    from_commit: revision.from_commit,
    commit: end.commit,
    feedback: 'feedback.md',
  };
  await writeRevision(input, record, end.present ?? null);
  return record;
}

/** Revision 1, the run as it first ran, recorded from its state when it is first revised. */
export async function recordFirstRevision(repoRoot: string, runDir: string, meta: RunMeta, state: RunState) {
  if (readRevision(runDir, 1)) return;
  const ended = state.ended_at ?? new Date().toISOString();
  await writeRevision(
    { repoRoot, runDir, meta },
    {
      revision: 1,
      status: state.status,
      started_at: state.started_at,
      ended_at: ended,
      duration_ms: Math.max(0, Date.parse(ended) - Date.parse(state.started_at)),
      cost_usd: costOf(state.usage),
      verified: state.output?.verified ?? null,
      from_commit: meta.repo_sha_start,
      commit: state.result_commit ?? null,
      feedback: null,
    },
  );
}
