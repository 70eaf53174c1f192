import { formatUsd } from '../budget/format.js';
import { runCost } from '../ledger/index-log.js';
import type { RunDetails } from '../ledger/read.js';
import { terminalText } from '../util/terminal-text.js';

/** How much of report.md a comment quotes: GitHub caps a comment at 65,536 characters. */
const EXCERPT_LINES = 60;
const EXCERPT_CHARS = 20_000;

export interface SummaryInput {
  readonly run: RunDetails;
  /** report.md (or plan.md) as the run wrote it; null: there is none. */
  readonly report: string | null;
  /** Files changes.patch touches. */
  readonly changedFiles: number;
  /** The CI job's page, to link from the comment. */
  readonly logUrl?: string | undefined;
}

/**
 * Text a model or an issue wrote, quoted so that it stays text: inside a fence longer than any
 * run of backticks in it, where a platform renders no mention, link, image or HTML; and made safe
 * for a terminal (src/util/terminal-text.ts): `agentbox ci summary` prints it, to a job log that
 * renders escape sequences or to a person's terminal. Pure.
 */
export function fenced(raw: string): string {
  const text = terminalText(raw);
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}text\n${text.trimEnd()}\n${fence}\n`;
}

function excerpt(report: string): string {
  const lines = report.trimEnd().split('\n');
  let text = lines.slice(0, EXCERPT_LINES).join('\n');
  if (text.length > EXCERPT_CHARS) text = text.slice(0, EXCERPT_CHARS);
  const cut = text.length < report.trimEnd().length;
  return `${text}${cut ? '\n… (the rest is in the run’s report.md)' : ''}`;
}

/** What to type on one's own machine next, by how the run ended. */
function next(run: RunDetails): string {
  const id = run.meta.run_id;
  if (run.state?.status === 'REVIEW') return `agentbox fetch && agentbox diff ${id} && agentbox merge ${id}`;
  return `agentbox fetch && agentbox show ${id}`;
}

/**
 * The Markdown a CI job posts on the issue (and in its job summary): the outcome, the cost, an
 * excerpt of the report, and how to merge. Pure.
 */
export function renderSummary(input: SummaryInput): string {
  const { run } = input;
  const state = run.state;
  const status = state?.status ?? 'UNKNOWN';
  const cost = runCost(state?.usage);
  const budget = run.meta.options?.max_cost_usd;
  const rows = [
    ['status', state?.failure ? `${status} (${state.failure.kind})` : status],
    [
      'cost',
      `${cost === null ? '—' : formatUsd(cost)}${typeof budget === 'number' ? ` of ${formatUsd(budget)}` : ''}`,
    ],
    ['tool calls', String(state?.tool_calls ?? 0)],
    ...(run.meta.type === 'fix' ? [['changes', `${input.changedFiles} file(s)`]] : []),
    ...(input.logUrl ? [['log', input.logUrl]] : []),
  ];
  const out = [
    `### agentbox ${run.meta.type} \`${run.name}\`: ${status}\n`,
    '| | |\n|---|---|\n',
    ...rows.map(([k, v]) => `| ${k} | ${v} |\n`),
    '\n**Task**\n\n',
    fenced(run.meta.task),
  ];
  if (state?.failure) out.push('\n**What went wrong**\n\n', fenced(state.failure.message));
  if (input.report) out.push('\n**Report**\n\n', fenced(excerpt(input.report)));
  out.push('\n**Next**, on your machine:\n\n```sh\n', `${next(run)}\n`, '```\n');
  return out.join('');
}

/** When no run was recorded (the job failed before it could start one). */
export function renderNoRun(logUrl?: string): string {
  return `### agentbox: no run was recorded\n\nThe job ended before a run started${logUrl ? `: see ${logUrl}` : '; see the job log'}.\n`;
}
