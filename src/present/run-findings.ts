import type { Inspection } from '../git/sensitive.js';
import { sensitiveLines } from '../git/sensitive.js';
import type { Refusal } from '../review/events.js';
import type { Styler } from '../util/style.js';
import { terminalLine, terminalText } from '../util/terminal-text.js';
import { type OutsidePatch, outsidePatchLines } from './left-out.js';

/*
 * The findings `agentbox show` lists under a run's fields: what was refused, what merge would ask
 * about, and the start of its report.
 */

/** How much of report.md `show` prints; the rest is in the file. */
const REPORT_LINES = 40;

const clean = terminalLine;

/** What was refused, what merge would ask about, and the start of the report. Pure. */
export function findingLines(
  style: Styler,
  inspection: Inspection,
  refusals: readonly Refusal[],
  report: string | null,
  outside: OutsidePatch,
  now: string | null,
): string[] {
  const out: string[] = [];
  if (refusals.length > 0) {
    out.push('', style.warn(`refused actions (${refusals.length})`));
    for (const r of refusals)
      out.push(`  ${clean(r.by).padEnd(8)}  ${clean(r.tool).padEnd(6)}  ${clean(r.what).slice(0, 100)}`);
  }
  const left = outsidePatchLines(outside, style.warn);
  if (left.length > 0) out.push('', ...left);
  if (inspection.refused.length > 0) {
    out.push('', style.bad('refused changes — agentbox merge will not apply this patch'));
    out.push(...sensitiveLines(inspection.refused).map(clean));
  }
  if (inspection.sensitive.length > 0) {
    out.push('', style.warn('sensitive changes — merge lists them and asks; --yes needs --allow-sensitive'));
    out.push(...sensitiveLines(inspection.sensitive).map(clean));
  }
  if (report !== null) {
    const text = terminalText(report).trimEnd().split('\n');
    out.push(
      '',
      `report${text.length > REPORT_LINES ? ` (first ${REPORT_LINES} of ${text.length} lines)` : ''}${reportAge(report, now, style)}`,
    );
    out.push(...text.slice(0, REPORT_LINES).map((l) => `  ${l}`));
  }
  return out;
}

/**
 * A report is written when its run ends: one whose status line says another status than the
 * run's now (merged or discarded since, revised) is said to be of then, not shown as now. Pure.
 */
export function reportAge(report: string, now: string | null, style: Styler): string {
  const then = /^- status: \*\*([A-Z]+)\*\*/m.exec(report)?.[1];
  return then && now && then !== now ? style.dim(` (written when it ended ${then}; it is ${now} now)`) : '';
}
