import fs from 'node:fs';
import path from 'node:path';
import { gateOf } from '../gate/merge-gate.js';
import { inspectPatchFile } from '../git/apply.js';
import { EventLog } from '../ledger/events.js';
import { type Ledger, readRun, resolveRun } from '../ledger/index.js';
import { nestedOfEvents } from '../run/end/finalize-nested.js';
import { renderMarkdown } from './markdown.js';
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
  const events = new EventLog(run.dir).read();
  const patch = read('changes.patch');
  const inspection =
    patch !== null ? await inspectPatchFile(root, path.join(run.dir, 'changes.patch')) : null;
  return {
    name: run.name,
    id: run.meta.run_id,
    meta: run.meta,
    state: run.state,
    files: run.files,
    events,
    nested: nestedOfEvents(events),
    /** A fix run waiting for the gate that did not pass: the page says so above the patch. */
    not_passing: gateOf(run, events),
    prompt: read('prompt.md'),
    report,
    report_html: report === null ? null : renderMarkdown(report),
    plan_html: run.files.includes('plan.md') ? renderMarkdown(read('plan.md') ?? '') : null,
    patch,
    patch_too_large: run.files.includes('changes.patch') && patch === null,
    sensitive: inspection?.sensitive ?? [],
    refused: inspection?.refused ?? [],
    now: run.state?.status === 'ACTIVE' ? activity(ledger, run.name) : null,
  };
}
