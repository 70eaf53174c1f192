import fs from 'node:fs';
import path from 'node:path';
import type { StreamSummary } from '../../claude/stream.js';
import type { ExportedPatch } from '../../git/patch.js';
import type { Inspection } from '../../git/sensitive.js';
import { EventLog } from '../../ledger/events.js';
import type { Failure, Ledger, RunMeta, RunStatus } from '../../ledger/index.js';
import { readState, updateState } from '../../ledger/index.js';
import type { RevisionRecord } from '../../ledger/revisions.js';
import { NO_TOOL_ERRORS, type ToolErrors } from '../../present/tool-errors.js';
import type { OwnedExit } from '../../process/owned.js';
import type { Denial } from '../../supervisor/hooks.js';
import type { CheckRecord } from '../../supervisor/supervisor.js';
import { formatAnswer, type OutputContract } from '../../templates/contract.js';
import { writeAtomic } from '../../util/fs.js';
import { templateValues } from '../begin/compose.js';
import { fileArtifacts } from './artifacts.js';
import { allDenials, loggedGateRefusals } from './denials.js';
import { commitResult, exportChanges } from './finalize-changes.js';
import { type NestedRecord, nestedOfRun } from './finalize-nested.js';
import { classify, type Outcome, type StopReason } from './outcome.js';
import { renderReport } from './report.js';
import { recordRevision } from './revision.js';

export interface FinalizeInput {
  readonly ledger: Ledger;
  readonly meta: RunMeta;
  readonly runDir: string;
  readonly worktree: string | null;
  /** null: the run ended at claude's result line (classify). */
  readonly exit: OwnedExit | null;
  readonly summary: StreamSummary;
  /** claude's last line on stderr ('' for none): said by a failed exit whose result says nothing. */
  readonly stderrLine?: string;
  readonly stop: StopReason;
  readonly denials: readonly Denial[];
  readonly durationMs: number;
  /** Tool calls that failed (not refused), over every resume. */
  readonly toolErrors?: ToolErrors;
  /** What the Stop checks found (violations, corrections, the last verification). */
  readonly checks?: CheckRecord;
  /** The run's output contract: report.md is the agent's answer formatted by it. */
  readonly contract?: OutputContract | null;
  /**
   * Test seam (AGENTBOX_TEST_PAUSE): awaited after each part of finalisation, so the fault suite
   * can kill agentbox exactly between the parts.
   */
  readonly pauseAfter?: (part: FinalizePart) => Promise<void>;
}

/** The parts of finalisation, in order: each is whole on disk before the next begins. */
export const FINALIZE_PARTS = ['patch', 'result', 'report', 'state'] as const;
export type FinalizePart = (typeof FINALIZE_PARTS)[number];

export interface Finalized {
  readonly name: string;
  readonly status: RunStatus;
  readonly failure: Failure | null;
  /** Artifacts written, relative to the run folder. */
  readonly files: readonly string[];
  readonly changes: ExportedPatch | null;
  readonly result: string | null;
  readonly toolCalls: number;
  readonly denials: readonly Denial[];
  readonly durationMs: number;
  /** The result's commit on the run's branch; null: none (no changes, not a fix run, or git failed). */
  readonly resultCommit: string | null;
  readonly toolErrors?: ToolErrors;
  /** The nested repositories left out of the patch (events.jsonl `nested_git`), named in the summary. */
  readonly nested?: readonly NestedRecord[];
  /** A revised run's revision that just ended (agentbox revise): its record, revisions/<k>/revision.json. */
  readonly revision?: RevisionShown;
}

/** What the summary says of a revision. */
export type RevisionShown = Pick<
  RevisionRecord,
  'revision' | 'verified' | 'cost_usd' | 'duration_ms' | 'commit'
>;

/**
 * Ends a run: exports what a fix changed (also after a crash or Ctrl-C: nothing is lost), writes
 * report.md (and plan.md), and records the final status. Runs after claude is gone.
 * NOTE: the order is the design. Every file is replaced atomically, and the state goes last: a
 * run whose state says it ended has its patch and report; a kill between the parts leaves the run
 * ACTIVE with a dead supervisor, which the watchdog marks CRASHED and resume finishes.
 */
export async function finalizeRun(input: FinalizeInput): Promise<Finalized> {
  const { meta, runDir, summary } = input;
  const exported = await exportChanges(input);
  const { changes } = exported;
  const files = [...exported.files];
  await input.pauseAfter?.('patch');
  const outcome = outcomeOf(input, (changes?.files.length ?? 0) > 0, exported.error);
  const result = summary.result && !summary.result.isError ? summary.result.result : summary.lastText;
  // No change left (the agent undid it): no result commit either; else the last one stands.
  // Made (or found on the branch) just now when there is a patch, none when it could not be made:
  // never the state's last one then (the patch is newer, and gc may have dropped it).
  const hasPatch = files.includes('changes.patch');
  const made = hasPatch ? await commitResult(input, outcome.status, result) : null;
  const resultCommit = hasPatch ? made : exported.emptied ? null : (readState(runDir)?.result_commit ?? null);
  // A revision's record (agentbox revise), once its result commit is made (not listed: it is the record).
  const revision = await revisionRecord(input, outcome.status, resultCommit, made);

  files.push(...fileArtifacts(input.worktree, runDir));
  const denials = recordDenials(input);
  const { formatted, resultFile } = await writeAnswer(input, result);
  if (resultFile) files.push(resultFile);
  await input.pauseAfter?.('result');
  const inspection = await exported.inspection;
  const report = { outcome, result, changes, inspection, denials, resultFile, formatted, resultCommit };
  await writeAtomic(path.join(runDir, 'report.md'), reportOf(input, report));
  files.push('report.md');
  await input.pauseAfter?.('report');
  await recordEnd(input, { outcome, files, resultCommit, formatted });
  await input.pauseAfter?.('state');
  const { toolCalls } = summary;
  const { durationMs, toolErrors = NO_TOOL_ERRORS } = input;
  return {
    name: meta.run_name,
    status: outcome.status,
    failure: outcome.failure,
    files,
    changes,
    result,
    toolCalls,
    denials,
    durationMs,
    resultCommit,
    toolErrors,
    nested: nestedOfRun(runDir),
    ...(revision ? { revision } : {}),
  };
}

/** revisions/<k>/ of a revised run; a record that cannot be written is logged, the run goes on. */
async function revisionRecord(
  input: FinalizeInput,
  status: RunStatus,
  commit: string | null,
  present: string | null,
) {
  const { runDir, meta } = input;
  const state = readState(runDir);
  try {
    const verified = input.checks?.verify ? input.checks.verify.ok : null;
    return await recordRevision({ repoRoot: input.ledger.root, runDir, meta }, state, {
      status,
      commit,
      verified,
      present,
    });
  } catch (error) {
    new EventLog(runDir).append({ event: 'revision_record_failed', error: (error as Error).message });
    return null;
  }
}

/** How the run ended; a fix whose changes could not be exported is CRASHED. */
function outcomeOf(input: FinalizeInput, hasChanges: boolean, exportError: string | undefined): Outcome {
  const { meta, exit, summary, stop } = input;
  const outcome = classify({
    type: meta.type,
    exit,
    summary,
    stop,
    hasChanges,
    revised: (readState(input.runDir)?.revision?.number ?? 1) > 1,
    stderrLine: input.stderrLine ?? '',
  });
  if (!exportError || outcome.failure) return outcome;
  return {
    status: 'CRASHED',
    failure: { kind: 'io_error', message: `could not export the changes: ${exportError}` },
  };
}

/**
 * Every refusal of the run; events.jsonl has the guard's decisions as they happened, and the
 * refusals only the stream saw (Claude Code's own rules, human-only commands) join them here, so
 * the file is complete.
 */
function recordDenials(input: FinalizeInput): Denial[] {
  const { runDir, summary } = input;
  const denials = allDenials(input.denials, summary, loggedGateRefusals(runDir, input.worktree));
  const log = new EventLog(runDir);
  for (const d of denials.slice(input.denials.length)) {
    if (d.rule !== 'human-gate')
      log.append({ event: 'refused', source: d.rule === 'sandbox' ? 'sandbox' : 'claude', ...d });
    // A gate refusal seen only in the stream (the gate could not log it from the sandbox).
    else if (d.toolUseId) log.append({ event: 'human_gate_refused', source: 'stream', ...d });
  }
  return denials;
}

/**
 * SUP-3: the raw answer is always kept (raw/answer.md); report.md (and a plan run's plan.md) hold
 * it formatted by the template.
 */
async function writeAnswer(
  input: FinalizeInput,
  result: string | null,
): Promise<{ formatted: string | null; resultFile: string | undefined }> {
  const { meta, runDir } = input;
  if (!result) return { formatted: null, resultFile: undefined };
  const values = templateValues({
    meta,
    worktree: input.worktree,
    branch: input.worktree ? `agentbox/${meta.run_name}` : null,
  });
  const formatted = input.contract ? await formatAnswer(input.contract, result, values) : null;
  fs.mkdirSync(path.join(runDir, 'raw'), { recursive: true });
  await writeAtomic(path.join(runDir, 'raw', 'answer.md'), `${result.trimEnd()}\n`);
  if (meta.type !== 'plan') return { formatted, resultFile: undefined };
  await writeAtomic(path.join(runDir, 'plan.md'), formatted ?? `${result.trimEnd()}\n`);
  return { formatted, resultFile: 'plan.md' };
}

function reportOf(
  input: FinalizeInput,
  r: {
    outcome: Outcome;
    result: string | null;
    changes: ExportedPatch | null;
    inspection: Inspection | undefined;
    denials: Denial[];
    resultFile: string | undefined;
    formatted: string | null;
    resultCommit: string | null;
  },
): string {
  const { meta, summary } = input;
  return renderReport({
    meta,
    outcome: r.outcome,
    result: r.result,
    toolCalls: summary.toolCalls,
    toolErrors: input.toolErrors ?? NO_TOOL_ERRORS,
    durationMs: input.durationMs,
    costUsd: summary.result?.costUsd,
    changes: r.changes?.files ?? [],
    stat: r.changes?.stat ?? '',
    denials: r.denials,
    inspection: r.inspection,
    nested: nestedOfRun(input.runDir),
    ...(r.changes?.leftOut ? { leftOut: r.changes.leftOut } : {}),
    ...(r.resultFile ? { resultFile: r.resultFile } : {}),
    ...(r.formatted ? { formatted: r.formatted } : {}),
    ...(input.checks ? { checks: input.checks } : {}),
    commit: r.resultCommit
      ? { sha: r.resultCommit, branch: readState(input.runDir)?.branch ?? `agentbox/${meta.run_name}` }
      : null,
  });
}

/** The final state, last: a run whose state says it ended has its patch and report. */
async function recordEnd(
  input: FinalizeInput,
  end: { outcome: Outcome; files: readonly string[]; resultCommit: string | null; formatted: string | null },
): Promise<void> {
  const { outcome, files } = end;
  const toolErrors = input.toolErrors ?? NO_TOOL_ERRORS;
  const failure = outcome.failure
    ? { ...outcome.failure, last_safe_artifact: files.includes('changes.patch') ? 'changes.patch' : null }
    : null;
  await updateState(
    input.ledger,
    { name: input.meta.run_name, meta: input.meta },
    {
      status: outcome.status,
      failure,
      ended_at: new Date().toISOString(),
      claude_pid: null,
      claude_pid_start: null,
      tool_calls: input.summary.toolCalls,
      result_commit: end.resultCommit,
      failed_tool_calls: toolErrors.count,
      last_tool_error: toolErrors.last,
      output: {
        template: input.contract ? 'prompt/output.md' : null,
        applied: end.formatted !== null,
        violations: input.checks?.violations ?? 0,
        corrections: input.checks?.corrections ?? 0,
        verified: input.checks?.verify ? input.checks.verify.ok : null,
      },
    },
    {
      event: 'ended',
      detail: outcome.failure ? `${outcome.status}: ${outcome.failure.kind}` : outcome.status,
    },
  );
}
