import { formatDuration } from '../../config/duration.js';
import type { PatchFile } from '../../git/patch.js';
import type { Inspection, SensitiveChange } from '../../git/sensitive.js';
import { type LeftOut, type LeftOutRecord, leftOutRecord } from '../../git/too-large.js';
import type { RunMeta } from '../../ledger/index.js';
import { leftOutWhy } from '../../present/left-out.js';
import type { ToolErrors } from '../../present/tool-errors.js';
import type { Denial } from '../../supervisor/hooks.js';
import type { CheckRecord } from '../../supervisor/supervisor.js';
import type { NestedRecord } from './finalize-nested.js';
import type { Outcome } from './outcome.js';

export interface ReportInput {
  readonly meta: RunMeta;
  readonly outcome: Outcome;
  readonly result: string | null;
  readonly toolCalls: number;
  /** Tool calls that failed (not refused): their count and the last one. */
  readonly toolErrors?: ToolErrors;
  readonly durationMs: number;
  readonly costUsd?: number | undefined;
  readonly changes: readonly PatchFile[];
  readonly stat: string;
  readonly denials: readonly Denial[];
  /** The `.git`s found below the worktree's root, set aside and left out of the patch. */
  readonly nested?: readonly NestedRecord[];
  /** The agent's files too large for the patch, left out of it (src/git/too-large.ts). */
  readonly leftOut?: readonly LeftOut[];
  /** What is sensitive in the patch (fix runs); absent when it could not be inspected. */
  readonly inspection?: Inspection | undefined;
  /** For plan runs: the result went to plan.md; the report only points at it. */
  readonly resultFile?: string;
  /** The agent's answer formatted by the run's output template: it heads the report. */
  readonly formatted?: string;
  /** What the Stop checks found (output contract, verification). */
  readonly checks?: CheckRecord;
  /** A fix run's result commit on its branch. */
  readonly commit?: { readonly sha: string; readonly branch: string } | null;
}

/** report.md: what the run was, how it ended, what it produced. Pure. */
export function renderReport(input: ReportInput): string {
  const parts = [
    ...headSection(input),
    ...checksSection(input.checks),
    ...(input.meta.type === 'fix'
      ? [
          ...changesSection(input),
          ...nestedSection(input.nested ?? []),
          ...leftOutSection(leftOutRecord(input.leftOut)),
          ...sensitiveSection(input.inspection),
        ]
      : []),
    ...refusedSection(input.denials),
  ];
  return `${parts.join('\n').trimEnd()}\n`;
}

/** The title (or the formatted answer), the run's facts, and its result or where it is. */
function headSection(input: ReportInput): string[] {
  const { meta, outcome } = input;
  const facts = [
    `- run: \`${meta.run_name}\` (${meta.type})`,
    `- status: **${outcome.status}**${outcome.failure ? ` — ${outcome.failure.kind}: ${outcome.failure.message}` : ''}`,
    `- duration: ${formatDuration(input.durationMs)} · tool calls: ${input.toolCalls}${input.costUsd !== undefined ? ` · cost: $${input.costUsd.toFixed(4)}` : ''}`,
  ];
  // NOTE: the tool's error text comes from the agent's commands: one line, no backtick to end the span.
  const failed = input.toolErrors;
  if (failed && failed.count > 0)
    facts.push(
      `- **failed tool calls: ${failed.count}**${failed.last ? ` — last: \`${failed.last.replace(/`/g, "'")}\`` : ''}`,
    );
  const parts =
    input.formatted && !input.resultFile
      ? [input.formatted.trim(), '', '## Run', '', ...facts, '']
      : [`# ${meta.type}: ${oneLine(meta.task)}`, '', ...facts, ''];
  if (input.resultFile) parts.push(`The ${meta.type} is in [${input.resultFile}](${input.resultFile}).`, '');
  else if (input.result && !input.formatted) parts.push('## Result', '', input.result.trim(), '');
  return parts;
}

function checksSection(checks: CheckRecord | undefined): string[] {
  if (!checks || (checks.violations === 0 && !checks.verify)) return [];
  const parts = [
    '## Supervisor checks',
    '',
    `- output contract: ${checks.violations} violation(s), ${checks.corrections} correction(s) asked (see events.jsonl)`,
  ];
  if (checks.verify) {
    const [first, ...rest] = checks.verify.detail.split('\n');
    parts.push(`- verification: ${checks.verify.ok ? 'passed' : 'FAILED'} — ${first}`);
    if (rest.length > 0) parts.push('', '```text', rest.join('\n').trimEnd(), '```');
  }
  parts.push('');
  return parts;
}

function changesSection(input: ReportInput): string[] {
  const { meta } = input;
  if (input.changes.length === 0) return ['## Changes', '', 'No files changed.', ''];
  return [
    '## Changes',
    '',
    `${input.changes.length} file(s) changed; the patch is \`changes.patch\`. Review it with \`agentbox diff ${meta.run_id}\`, apply it with \`agentbox merge ${meta.run_id}\`.`,
    '',
    ...(input.commit
      ? [
          `The same change is commit \`${input.commit.sha.slice(0, 12)}\` on branch \`${input.commit.branch}\` (\`git log ${input.commit.branch}\`, \`git diff ${meta.repo_sha_start?.slice(0, 12) ?? 'HEAD'} ${input.commit.branch}\`).`,
          '',
        ]
      : []),
    '```text',
    input.stat.trimEnd(),
    '```',
    '',
  ];
}

function sensitiveSection(inspection: Inspection | undefined): string[] {
  const { sensitive = [], refused = [] } = inspection ?? {};
  if (sensitive.length + refused.length === 0) return [];
  const parts = ['## Sensitive changes', ''];
  if (refused.length > 0) {
    parts.push(`\`agentbox merge\` refuses this patch: ${refused.length} change(s) it never applies.`, '');
    for (const c of refused) parts.push(sensitiveItem(c, '**refused** '));
    parts.push('');
  }
  if (sensitive.length > 0) {
    parts.push(
      `${sensitive.length} change(s) to review before merging: \`agentbox merge\` lists them and asks; with \`--yes\` it needs \`--allow-sensitive\`.`,
      '',
    );
    for (const c of sensitive) parts.push(sensitiveItem(c));
    parts.push('');
  }
  return parts;
}

function nestedSection(nested: readonly NestedRecord[]): string[] {
  if (nested.length === 0) return [];
  return [
    '## Nested repositories',
    '',
    `${nested.length} \`.git\` below the worktree's root, never followed by agentbox: left out of the patch, and set aside into the run folder so no git runs what its config says (docs/security.md#agent-written-git-is-inert).`,
    '',
    ...nested.map(
      (n) => `- \`${n.path}/\` (a .git ${n.kind}) → ${n.moved_to ?? `not moved: ${n.error ?? 'unknown'}`}`,
    ),
    '',
  ];
}

function leftOutSection(record: LeftOutRecord | null): string[] {
  if (!record) return [];
  return [
    '## Files left out of the patch',
    '',
    `${record.files.length + record.more} file(s) too large for the patch: they were not staged and are not in changes.patch; they stay in the worktree (docs/runs.md#what-a-patch-holds).`,
    '',
    ...record.files.map(
      (f) => `- ${codeSpan(f.path)} — ${(f.bytes / 1024 / 1024).toFixed(1)} MiB: ${leftOutWhy(f.why)}`,
    ),
    ...(record.more > 0 ? [`- … and ${record.more} more (events.jsonl: \`files_left_out\`)`] : []),
    '',
  ];
}

function refusedSection(denials: readonly Denial[]): string[] {
  if (denials.length === 0) return [];
  // One line each: a shell's error can span lines ("Exit code 1\n…: Read-only file system").
  return [
    '## Refused actions',
    '',
    ...denials.map((d) => `- ${d.tool} (${d.rule}): ${oneLine(d.reason, 300)}`),
    '',
  ];
}

function sensitiveItem(change: SensitiveChange, prefix = ''): string {
  return `- ${prefix}${codeSpan(change.path)} — ${change.kind}: ${oneLineText(change.detail)}`;
}

const oneLineText = (text: string) => text.replace(/[\r\n]+/g, ' ');

/** A file name as a code span, on one line. NOTE: names come from the agent: a backtick in one must not end the span early. */
function codeSpan(name: string): string {
  const line = oneLineText(name);
  return line.includes('`') ? `\`\` ${line} \`\`` : `\`${line}\``;
}

function oneLine(text: string, max = 100): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

/**
 * report.md for a run that ended without a result of its own (an interactive session, a run that
 * could not be set up): how it ended and what to do next. Pure.
 */
export function renderEndReport(input: {
  readonly meta: RunMeta;
  readonly status: string;
  readonly detail: string | null;
  readonly next: string | null;
}): string {
  const { meta } = input;
  return `${[
    `# ${meta.type}: ${oneLine(meta.task)}`,
    '',
    `- run: \`${meta.run_name}\` (${meta.type})`,
    `- status: **${input.status}**${input.detail ? ` — ${input.detail}` : ''}`,
    ...(input.next ? ['', input.next] : []),
  ].join('\n')}\n`;
}
