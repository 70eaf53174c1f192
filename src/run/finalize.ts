import fs from 'node:fs';
import path from 'node:path';
import type { StreamSummary } from '../claude/stream.js';
import { inspectPatchFile } from '../git/apply.js';
import { type ExportedPatch, exportPatch } from '../git/patch.js';
import { recordResultCommit } from '../git/result-commit.js';
import type { Inspection } from '../git/sensitive.js';
import type { Failure, Ledger, RunMeta, RunStatus } from '../ledger/index.js';
import { readState, updateState } from '../ledger/index.js';
import type { OwnedExit } from '../process/owned.js';
import { commandDirName } from '../slash/index.js';
import type { Denial } from '../supervisor/hooks.js';
import type { CheckRecord } from '../supervisor/supervisor.js';
import { formatAnswer, type OutputContract } from '../templates/contract.js';
import { writeAtomic } from '../util/fs.js';
import { AGENT_RUN_DIR, collectArtifacts } from './artifacts.js';
import { templateValues } from './compose.js';
import { EventLog } from './events.js';
import { classify, type StopReason } from './outcome.js';
import { renderReport } from './report.js';
import { resultMessage } from './result-message.js';
import { NO_TOOL_ERRORS, type ToolErrors } from './tool-errors.js';

export interface FinalizeInput {
  readonly ledger: Ledger;
  readonly meta: RunMeta;
  readonly runDir: string;
  readonly worktree: string | null;
  readonly exit: OwnedExit;
  readonly summary: StreamSummary;
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
}

/**
 * Ends a run: exports what a fix changed (also after a crash or Ctrl-C: nothing is lost), writes
 * report.md (and plan.md), and records the final status. Runs after claude is gone.
 * NOTE: the order is the design. Every file is replaced atomically, and the state goes last: a
 * run whose state says it ended has its patch and report; a kill between the parts leaves the run
 * ACTIVE with a dead supervisor, which the watchdog marks CRASHED and resume finishes.
 */
export async function finalizeRun(input: FinalizeInput): Promise<Finalized> {
  const { meta, runDir, summary } = input;
  const files: string[] = [];
  let changes: ExportedPatch | null = null;
  let exportError: string | null = null;
  let inspection: Inspection | undefined;
  if (meta.type === 'fix' && input.worktree && meta.repo_sha_start) {
    try {
      changes = await exportPatch(input.worktree, {
        base: meta.repo_sha_start,
        exclude: [path.join('.claude', 'commands', commandDirName(meta.run_id)), AGENT_RUN_DIR],
      });
      if (changes.patch.length > 0) {
        await writeAtomic(path.join(runDir, 'changes.patch'), changes.patch);
        files.push('changes.patch');
        // Against the main tree (its hooksPath and symlinks), where merge will apply it. Not
        // knowing leaves the report silent; merge inspects again and is what refuses.
        inspection = await inspectPatchFile(input.ledger.root, path.join(runDir, 'changes.patch')).catch(
          () => undefined,
        );
      }
    } catch (error) {
      exportError = (error as Error).message;
    }
  }
  await input.pauseAfter?.('patch');
  let outcome = classify({
    type: meta.type,
    exit: input.exit,
    summary,
    stop: input.stop,
    hasChanges: (changes?.files.length ?? 0) > 0,
  });
  if (exportError && !outcome.failure) {
    outcome = {
      status: 'CRASHED',
      failure: { kind: 'io_error', message: `could not export the changes: ${exportError}` },
    };
  }
  const result = summary.result && !summary.result.isError ? summary.result.result : summary.lastText;
  const resultCommit = files.includes('changes.patch')
    ? await commitResult(input, outcome.status, result)
    : (readState(runDir)?.result_commit ?? null);
  files.push(...collectArtifacts(input.worktree, runDir));
  const denials = allDenials(input.denials, summary, loggedGateRefusals(runDir, input.worktree));
  // events.jsonl has the guard's decisions as they happened; the refusals only the stream saw
  // (Claude Code's own rules, human-only commands) join them here, so the file is complete.
  const log = new EventLog(runDir);
  for (const d of denials.slice(input.denials.length)) {
    if (d.rule !== 'human-gate')
      log.append({ event: 'refused', source: d.rule === 'sandbox' ? 'sandbox' : 'claude', ...d });
    // A gate refusal seen only in the stream (the gate could not log it from the sandbox).
    else if (d.toolUseId) log.append({ event: 'human_gate_refused', source: 'stream', ...d });
  }
  // SUP-3: the raw answer is always kept; report.md (and plan.md) hold it formatted by the template.
  const formatted =
    result && input.contract
      ? formatAnswer(
          input.contract,
          result,
          templateValues({
            meta,
            worktree: input.worktree,
            branch: input.worktree ? `agentbox/${meta.run_name}` : null,
          }),
        )
      : null;
  if (result) {
    fs.mkdirSync(path.join(runDir, 'raw'), { recursive: true });
    await writeAtomic(path.join(runDir, 'raw', 'answer.md'), `${result.trimEnd()}\n`);
  }
  const resultFile = meta.type === 'plan' && result ? 'plan.md' : undefined;
  if (resultFile && result) {
    await writeAtomic(path.join(runDir, resultFile), formatted ?? `${result.trimEnd()}\n`);
    files.push(resultFile);
  }
  await input.pauseAfter?.('result');
  await writeAtomic(
    path.join(runDir, 'report.md'),
    renderReport({
      meta,
      outcome,
      result,
      toolCalls: summary.toolCalls,
      toolErrors: input.toolErrors ?? NO_TOOL_ERRORS,
      durationMs: input.durationMs,
      costUsd: summary.result?.costUsd,
      changes: changes?.files ?? [],
      stat: changes?.stat ?? '',
      denials,
      inspection,
      ...(resultFile ? { resultFile } : {}),
      ...(formatted ? { formatted } : {}),
      ...(input.checks ? { checks: input.checks } : {}),
      commit: resultCommit
        ? { sha: resultCommit, branch: readState(runDir)?.branch ?? `agentbox/${meta.run_name}` }
        : null,
    }),
  );
  files.push('report.md');
  await input.pauseAfter?.('report');
  await updateState(
    input.ledger,
    meta.run_name,
    {
      status: outcome.status,
      failure: outcome.failure
        ? { ...outcome.failure, last_safe_artifact: files.includes('changes.patch') ? 'changes.patch' : null }
        : null,
      ended_at: new Date().toISOString(),
      claude_pid: null,
      claude_pid_start: null,
      tool_calls: summary.toolCalls,
      result_commit: resultCommit,
      failed_tool_calls: (input.toolErrors ?? NO_TOOL_ERRORS).count,
      last_tool_error: (input.toolErrors ?? NO_TOOL_ERRORS).last,
      output: {
        template: input.contract ? 'prompt/output.md' : null,
        applied: formatted !== null,
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
  await input.pauseAfter?.('state');
  return {
    name: meta.run_name,
    status: outcome.status,
    failure: outcome.failure,
    files,
    changes,
    result,
    toolCalls: summary.toolCalls,
    denials,
    durationMs: input.durationMs,
    resultCommit,
    toolErrors: input.toolErrors ?? NO_TOOL_ERRORS,
  };
}

/**
 * The result as a commit on the run's branch (src/git/result-commit.ts), so `git log/diff/push`
 * and a pull request work. The patch stays the artifact: a commit that cannot be made is logged
 * and the run goes on without it.
 */
async function commitResult(
  input: FinalizeInput,
  status: RunStatus,
  answer: string | null,
): Promise<string | null> {
  const { meta, runDir } = input;
  const state = readState(runDir);
  const branch = state?.branch ?? `agentbox/${meta.run_name}`;
  if (!meta.repo_sha_start) return null;
  const log = new EventLog(runDir);
  try {
    const done = await recordResultCommit({
      repoRoot: input.ledger.root,
      branch,
      base: meta.repo_sha_start,
      previous: state?.result_commit ?? null,
      patchFile: path.join(runDir, 'changes.patch'),
      message: resultMessage({ name: meta.run_name, task: meta.task, status, answer }),
    });
    if (done.created)
      log.append({
        event: 'result_committed',
        commit: done.commit,
        branch,
        parent: done.parent,
        ...(done.replaced ? { replaced: done.replaced } : {}),
      });
    return done.commit;
  } catch (error) {
    log.append({ event: 'result_commit_failed', branch, message: (error as Error).message });
    return state?.result_commit ?? null;
  }
}

/**
 * Refusals the human gate logged when the agent ran it anyway: into this run's events.jsonl, or —
 * from inside a fix run's sandbox, where the ledger is out of reach — into the agent's RUN_DIR in
 * its worktree, from where they are copied into events.jsonl here.
 * NOTE: the agent can write its RUN_DIR, so it could add refusals that never happened: noise in
 * the log, never a permission.
 */
function loggedGateRefusals(runDir: string, worktree: string | null): Denial[] {
  const log = new EventLog(runDir);
  if (worktree) {
    const agentLog = new EventLog(path.join(worktree, AGENT_RUN_DIR));
    for (const e of agentLog.read())
      if (e.event === 'human_gate_refused') log.append({ ...e, via: AGENT_RUN_DIR });
    // Taken once: a resumed run does not copy them again.
    fs.rmSync(agentLog.file, { force: true });
  }
  return log
    .read()
    .filter((e) => e.event === 'human_gate_refused')
    .map((e) => ({ tool: 'Bash', rule: 'human-gate', reason: String(e.reason ?? '') }));
}

/**
 * Every refused action of the run, once: agentbox's guard (from the hooks, with the rule), Claude
 * Code's own refusals (from the stream: its deny rules, the project guard hook, human-only
 * commands), and the human gate refusing to run inside the run (logged by `agentbox merge`).
 */
export function allDenials(
  hooks: readonly Denial[],
  summary: StreamSummary,
  logged: readonly Denial[] = [],
): Denial[] {
  const out = [...hooks];
  const seen = new Set(hooks.map((d) => d.toolUseId).filter(Boolean));
  const RULE = {
    config: 'permission-rule',
    hook: 'guard-hook',
    skill: 'human-only-command',
    sandbox: 'sandbox',
    gate: 'human-gate',
    other: 'refused',
  } as const;
  // The gate logs its refusals itself where it can (`logged`, no tool call id); the stream also
  // shows them: only those beyond the logged count are new (from a sandbox, which logs none).
  let gateSeen = logged.length;
  for (const r of summary.refusals) {
    if (seen.has(r.toolUseId)) continue;
    if (r.by === 'gate' && gateSeen-- > 0) continue;
    out.push({
      toolUseId: r.toolUseId,
      tool: r.tool,
      rule: RULE[r.by],
      reason: r.message.replace(/<\/?tool_use_error>/g, ''),
      ...(r.input ? { input: r.input } : {}),
    });
  }
  return [...out, ...logged];
}

/**
 * The test seam behind `AGENTBOX_TEST_PAUSE=finalize:<part>`: after that part, a marker file
 * `paused-<part>` appears in the run folder and this process waits until it is killed. Unset (as
 * for every user), finalisation never waits.
 */
export function pauseSeam(
  value: string | undefined,
  runDir: string,
): ((part: FinalizePart) => Promise<void>) | undefined {
  const part = value?.startsWith('finalize:') ? value.slice('finalize:'.length) : undefined;
  if (!part) return undefined;
  return async (done) => {
    if (done !== part) return;
    await writeAtomic(path.join(runDir, `paused-${done}`), `${process.pid}\n`);
    await new Promise(() => setInterval(() => {}, 1 << 30));
  };
}
