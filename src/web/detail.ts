import fs from 'node:fs';
import path from 'node:path';
import { claimedRunLine, claimOf } from '../gate/claims.js';
import { gateOf } from '../gate/merge-gate.js';
import { patchSeen } from '../gate/patch-seen.js';
import { inspectPatchFile } from '../git/apply.js';
import { type Ledger, readRun, resolveRun } from '../ledger/index.js';
import { patchSha256 } from '../ledger/reviewed.js';
import { nestedOfEvents } from '../run/end/finalize-nested.js';
import { leftOutOfEvents } from '../run/end/left-out.js';
import { renderMarkdown, renderReport } from './markdown.js';
import { eventsWithOffsets, opensAt } from './opens-at.js';
import { revisionsOf } from './revisions.js';
import { activity } from './runs.js';

const PATCH_MAX = 5 * 1024 * 1024;

/** `GET /api/runs/<run>`: everything the detail page shows; the report as sanitised HTML too. */
export async function runDetail(ledger: Ledger, root: string, ref: string) {
  const run = readRun(ledger, resolveRun(ledger, ref));
  const read = (file: string, max = PATCH_MAX): string | null => {
    if (!run.files.includes(file)) return null;
    const full = path.join(run.dir, file);
    return fs.statSync(full).size > max ? null : fs.readFileSync(full, 'utf8');
  };
  const report = read('report.md');
  // Read once with their offsets: the page opens at a failed run's entry, named by its offset.
  const lines = eventsWithOffsets(run.dir);
  const events = lines.map((line) => line.value);
  const claim = claimOf(run, events);
  // Hashed before it is read: the page merges what it drew by this hash (src/web/actions.ts).
  const sha256 = run.files.includes('changes.patch') ? patchSha256(run.dir) : null;
  // Not recorded as shown here: the page says so once a person can see it (src/web/shown.ts).
  const patch = read('changes.patch');
  const inspection =
    patch !== null ? await inspectPatchFile(root, path.join(run.dir, 'changes.patch')) : null;
  const gate = gateOf(run, events);
  return {
    name: run.name,
    id: run.meta.run_id,
    meta: run.meta,
    state: run.state,
    files: run.files,
    events,
    nested: nestedOfEvents(events),
    /** The agent's files too large for the patch, left out of it (src/git/too-large.ts). */
    left_out: leftOutOfEvents(events),
    /** A fix run waiting for the gate that did not pass: the page says so above the patch. */
    not_passing: gate,
    /** Where the page opens: at what failed (a transcript entry or a panel), else null (src/web/opens-at.ts). */
    opens_at: opensAt(run.state, lines, gate !== null),
    /** A fetched run: what its publication claims and who claims it (src/gate/claims.ts). */
    claim,
    /** The claim in one line, as `show` and `merge` say it. */
    claim_line: claim ? claimedRunLine(claim) : null,
    /** The sha256 of `patch` as sent: the merge button sends it back; null when none was sent. */
    patch_sha256: patch === null ? null : sha256,
    /** What was shown before, and whether the patch is another one now. */
    patch_seen: run.meta.type === 'fix' ? patchSeen(run.dir) : null,
    prompt: read('prompt.md'),
    report,
    report_html: report === null ? null : renderReport(report),
    plan_html: run.files.includes('plan.md') ? renderMarkdown(read('plan.md') ?? '') : null,
    patch,
    patch_too_large: run.files.includes('changes.patch') && patch === null,
    sensitive: inspection?.sensitive ?? [],
    refused: inspection?.refused ?? [],
    now: run.state?.status === 'ACTIVE' ? activity(ledger, run.name) : null,
    /** A revised fix run's revisions, oldest first (agentbox revise). */
    revisions: revisionsOf(run.dir),
  };
}
