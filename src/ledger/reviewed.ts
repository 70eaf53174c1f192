import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { errnoCode, fsError } from '../errors.js';
import { appendNoFollow } from '../util/append.js';

/*
 * `reviewed.jsonl` in a run folder: which patch (its sha256) a person was shown, by what, when —
 * appended, never rewritten. It is this machine's own record: a publication never writes it (the
 * name is reserved, src/remote/refs.ts) and `push` never sends it. `merge` refuses a patch that
 * changed since it was last shown here (src/gate/patch-seen.ts).
 */

export const REVIEWED_FILE = 'reviewed.jsonl';
export const PATCH_FILE = 'changes.patch';

/** What showed the patch: `agentbox diff`, the web page, the merge prompt's `d`. */
export type ShownBy = 'diff' | 'ui' | 'merge';

export interface Shown {
  readonly sha256: string;
  readonly at: string;
  readonly by: string;
}

const SHA256 = /^[0-9a-f]{64}$/;

export function sha256Of(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The sha256 of the run's changes.patch now; null when it has none (or an empty one). */
export function patchSha256(runDir: string): string | null {
  const file = path.join(runDir, PATCH_FILE);
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return null;
    throw fsError(error, 'read', file);
  }
  return bytes.length === 0 ? null : sha256Of(bytes);
}

/** The records, oldest first; a line that is not one is skipped. */
function records(runDir: string): Record<string, unknown>[] {
  let text: string;
  try {
    text = fs.readFileSync(path.join(runDir, REVIEWED_FILE), 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').flatMap((line) => {
    try {
      const r = JSON.parse(line) as Record<string, unknown>;
      return r && typeof r.sha256 === 'string' && SHA256.test(r.sha256) ? [r] : [];
    } catch {
      return [];
    }
  });
}

/** The patch a person was last shown here; null: never. */
export function lastShown(runDir: string): Shown | null {
  const last = records(runDir).findLast((r) => r.event === 'shown');
  if (!last) return null;
  return { sha256: last.sha256 as string, at: String(last.ts ?? ''), by: String(last.by ?? '') };
}

function append(runDir: string, entry: Record<string, unknown>, now: Date): void {
  const file = path.join(runDir, REVIEWED_FILE);
  try {
    appendNoFollow(file, `${JSON.stringify({ v: 1, ts: now.toISOString(), ...entry })}\n`);
  } catch (error) {
    throw fsError(error, 'append to', file);
  }
}

/** A person was shown the patch of this hash; nothing is appended when it was the last one shown. */
export function recordShown(runDir: string, sha256: string, by: ShownBy, now = new Date()): void {
  if (lastShown(runDir)?.sha256 === sha256) return;
  append(runDir, { event: 'shown', sha256, by }, now);
}

/** A publication replaced the patch: what was shown (if anything) is no longer what is here. */
export function recordUnreviewed(
  runDir: string,
  change: { readonly from: string | null; readonly to: string; readonly why: string },
  now = new Date(),
): void {
  append(runDir, { event: 'unreviewed', sha256: change.to, was: change.from, why: change.why }, now);
}
