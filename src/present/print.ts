import path from 'node:path';
import { formatDuration } from '../config/duration.js';
import type { Io } from '../context.js';
import type { ExportedPatch } from '../git/patch.js';
import { leftOutRecord } from '../git/too-large.js';
import { runIdOf } from '../ledger/names.js';
import type { Failure, RunStatus } from '../ledger/types.js';
import type { Denial } from '../supervisor/hooks.js';
import { terminalJson } from '../util/json-out.js';
import { type Styler, styler } from '../util/style.js';
import { terminalExact, terminalLine, terminalName, terminalText } from '../util/terminal-text.js';
import { outsidePatchLines } from './left-out.js';
import type { NestedShown } from './nested.js';
import { nextStep } from './next-step.js';

export { liveLine, liveReporter } from './live.js';

import { toolCalls } from './live.js';
import { type ToolErrors, toolErrorsNote } from './tool-errors.js';

/** How many lines of a read-only run's answer the terminal shows before pointing at the file. */
const ANSWER_LINES = 30;

export const succeeded = (status: RunStatus): boolean => status === 'DONE' || status === 'REVIEW';

/**
 * What the summary of an ended run shows: what src/run/end/finalize.ts returns (`Finalized`), written
 * out here so that what prints imports nothing of the run it prints (docs/internals.md, the rooms).
 */
export interface RunEnd {
  readonly name: string;
  readonly status: RunStatus;
  readonly failure: Failure | null;
  readonly files: readonly string[];
  readonly changes: Pick<ExportedPatch, 'files' | 'stat' | 'leftOut'> | null;
  readonly result: string | null;
  readonly toolCalls: number;
  readonly toolErrors?: ToolErrors;
  readonly denials: readonly Denial[];
  readonly durationMs: number;
  readonly resultCommit: string | null;
  /** Nested repositories left out of the patch: a person deciding on it must know. */
  readonly nested?: readonly NestedShown[];
  /** A revision that just ended (agentbox revise): which, and how its checks went. */
  readonly revision?: {
    readonly revision: number;
    readonly verified: boolean | null;
    readonly cost_usd: number;
    readonly duration_ms: number;
  };
}

export function printSummary(io: Io, runDir: string, root: string, done: RunEnd, json: boolean): void {
  const next = nextStep(done.status, runIdOf(done.name), done.failure, done.files.includes('changes.patch'));
  if (json) {
    io.out(summaryJson(runDir, done, next));
    return;
  }
  printSummaryText(io, runDir, root, done, next);
}

/** The summary as `--json` prints it. Pure. */
function summaryJson(runDir: string, done: RunEnd, next: string): string {
  return `${terminalJson(
    {
      run: done.name,
      status: done.status,
      failure: done.failure,
      dir: runDir,
      files: done.files,
      changes: done.changes?.files ?? [],
      commit: done.resultCommit,
      nested: done.nested ?? [],
      left_out: leftOutRecord(done.changes?.leftOut),
      tool_calls: done.toolCalls,
      failed_tool_calls: done.toolErrors?.count ?? 0,
      last_tool_error: done.toolErrors?.last ?? null,
      denials: done.denials,
      duration_ms: done.durationMs,
      answer: done.result,
      ...(done.revision
        ? {
            revision: {
              number: done.revision.revision,
              verified: done.revision.verified,
              cost_usd: done.revision.cost_usd,
              duration_ms: done.revision.duration_ms,
            },
          }
        : {}),
      next,
    },
    2,
  )}\n`;
}

/**
 * How an ended run's line begins — its mark, name, status, why it failed and its failed tool calls
 * — as the foreground's summary and `agentbox watch` print it. A failed tool call is never hidden
 * under a green tick: the mark warns and the line says it. Pure.
 */
export function endHead(s: Styler, end: Pick<RunEnd, 'name' | 'status' | 'failure' | 'toolErrors'>): string {
  const ok = succeeded(end.status);
  const why = end.failure ? ` (${end.failure.kind}): ${terminalText(end.failure.message)}` : '';
  const failed = toolErrorsNote(end.toolErrors, terminalLine);
  const mark = !ok ? s.bad('✗') : failed ? s.warn('⚠') : s.ok('✓');
  return `${mark} ${s.bold(end.name)} — ${ok ? s.ok(end.status) : s.bad(end.status)}${why}${failed ? ` · ${s.warn(failed)}` : ''}`;
}

function printSummaryText(io: Io, runDir: string, root: string, done: RunEnd, next: string): void {
  const s = styler(io);
  io.out(
    `${endHead(s, done)}\n` +
      `  ${formatDuration(done.durationMs)} · ${toolCalls(done.toolCalls)}${done.denials.length ? ` · ${done.denials.length} refused` : ''}\n`,
  );
  // A read-only run answers here: its answer (the first screen of it), then where the rest is.
  const answerFile = done.files.includes('plan.md') ? 'plan.md' : 'report.md';
  if (done.result && !done.changes) {
    const lines = terminalText(done.result).trimEnd().split('\n');
    io.out(`\n${lines.slice(0, ANSWER_LINES).join('\n')}\n`);
    if (lines.length > ANSWER_LINES)
      io.out(s.dim(`… ${lines.length - ANSWER_LINES} more line(s) in ${answerFile}\n`));
    io.out('\n');
  }
  const changed = done.changes?.files.length ?? 0;
  // git's diffstat names the agent's files as they are: shown exact, never stripped.
  if (changed > 0)
    io.out(
      `  ${changed} file(s) changed → changes.patch\n${indent(terminalExact(done.changes?.stat ?? ''))}`,
    );
  const nested = outsidePatchLines(
    { nested: done.nested ?? [], leftOut: leftOutRecord(done.changes?.leftOut) },
    s.warn,
  );
  if (nested.length > 0) io.out(`${nested.map((l) => `  ${l}\n`).join('')}`);
  const rel = path.relative(root, runDir);
  // An artifact's name is the agent's (.agentbox-run/ in its worktree): shown escaped.
  for (const file of done.files)
    io.out(`  ${s.dim(terminalName(file).padEnd(13))} ${terminalName(path.join(rel, file))}\n`);
  if (done.resultCommit)
    io.out(`  ${s.dim('commit'.padEnd(13))} ${done.resultCommit.slice(0, 12)} on agentbox/${done.name}\n`);
  io.out(`  ${s.dim('next'.padEnd(13))} ${next}\n`);
}

function indent(text: string): string {
  return text
    .trimEnd()
    .split('\n')
    .filter(Boolean)
    .map((l) => `    ${l}\n`)
    .join('');
}
