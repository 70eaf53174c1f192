import fs from 'node:fs';
import path from 'node:path';
import { type Ledger, readRun, resolveRun } from '../ledger/index.js';
import { REVISIONS_DIR, readRevision, revisionDir } from '../ledger/revisions.js';
import { revisionPatch } from '../review/revision-diff.js';
import { HttpError } from './http.js';

/** A feedback or interdiff larger than this is not sent (the CLI shows it: agentbox diff --revision k). */
const TEXT_MAX = 5 * 1024 * 1024;

/**
 * A revised run's revisions for its page (issue 39), oldest first: each with its record
 * (revision.json: status, cost, duration, verify; null while it runs), the person's review as the
 * agent got it (feedback.md; null for revision 1, the task) and whether its interdiff is kept.
 */
export function revisionsOf(runDir: string) {
  let names: string[];
  try {
    names = fs.readdirSync(path.join(runDir, REVISIONS_DIR));
  } catch {
    return [];
  }
  return names
    .filter((n) => /^[1-9]\d{0,3}$/.test(n))
    .map(Number)
    .sort((a, b) => a - b)
    .map((k) => {
      const dir = revisionDir(runDir, k);
      const feedback = readHead(path.join(dir, 'feedback.md'), FEEDBACK_SHOWN);
      return {
        revision: k,
        record: readRevision(runDir, k),
        feedback: feedback?.text ?? null,
        // Cut (its size in bytes): the page says so and where the whole of it is.
        ...(feedback?.cut ? { feedback_cut: feedback.size } : {}),
        interdiff: fs.existsSync(path.join(dir, 'interdiff.patch')),
      };
    });
}

/**
 * How much of a revision's feedback the run's page gets with every answer (it is sent again at each
 * redraw, once per revision): a person's review is a few KB; a fetched run's may be anything.
 */
const FEEDBACK_SHOWN = 64 * 1024;

/** The first `max` bytes of `file` as text (no character cut in two), its size, whether it was cut; null if absent. */
function readHead(file: string, max: number): { text: string; size: number; cut: boolean } | null {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const size = fs.fstatSync(fd).size;
    const buf = Buffer.alloc(Math.min(size, max));
    const got = fs.readSync(fd, buf, 0, buf.length, 0);
    const text = buf.subarray(0, got).toString('utf8');
    return size > max ? { text: text.replace(/\uFFFD+$/, ''), size, cut: true } : { text, size, cut: false };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * `GET /api/runs/<run>/revisions/<k>/interdiff`: `{ run, revision, patch, too_large, claimed? }`,
 * revision k's own change, as `agentbox diff --revision k` shows it (a fetched run's: made here
 * from its patches, `claimed: true`; src/review/revision-diff.ts).
 */
export async function interdiffOf(ledger: Ledger, root: string, ref: string, raw: string) {
  if (!/^[1-9]\d{0,3}$/.test(raw))
    throw new HttpError(400, `"${raw}" is not a revision number (from 1)`, {
      hint: 'e.g. /revisions/2/interdiff',
    });
  const run = readRun(ledger, resolveRun(ledger, ref));
  const k = Number(raw);
  const file = path.join(revisionDir(run.dir, k), 'interdiff.patch');
  if (!fs.existsSync(file)) {
    throw new HttpError(404, `${run.name} has no interdiff for revision ${k}`, {
      hint: `its revisions: agentbox show ${run.meta.run_id}`,
    });
  }
  if (run.meta.origin === undefined) {
    const patch = readSmall(file);
    return { run: run.name, revision: k, patch, too_large: patch === null };
  }
  const made = await revisionPatch(root, run, k);
  const patch = Buffer.byteLength(made) > TEXT_MAX ? null : made;
  return { run: run.name, revision: k, patch, too_large: patch === null, claimed: true };
}

function readSmall(file: string): string | null {
  try {
    return fs.statSync(file).size > TEXT_MAX ? null : fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}
