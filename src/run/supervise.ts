import path from 'node:path';
import type { AirlockScope } from '../airlock/guard.js';
import type { EventLog } from '../ledger/events.js';
import type { StepReport } from '../present/live.js';
import { fixWritable, type RunPrivacy } from '../sandbox/prepare.js';
import type { ModelReply } from '../supervisor/model.js';
import { askSupervisorModel } from '../supervisor/model.js';
import type { SupervisorMode } from '../supervisor/rules.js';
import { Supervisor, type SupervisorEnd } from '../supervisor/supervisor.js';
import type { StopChecks } from '../supervisor/violations.js';
import { checkAnswer, DEFAULT_ACTIONS, type OutputContract } from '../templates/contract.js';
import type { Env } from '../util/env.js';
import { runVerify, type VerifyResult } from '../verify/run.js';

/** The supervisor of a headless run, as the configuration and the run's options set it. */
export interface SupervisorSettings {
  readonly mode: SupervisorMode;
  readonly maxIterations: number;
  /** Per supervisor model call. */
  readonly timeoutMs: number;
  readonly bin: string;
  readonly model: string | null;
}

/** What the configuration says about checking a run's end (see src/supervisor/violations.ts). */
export interface RunChecks {
  /** runs.verify: run in a fix run's worktree, in its sandbox, when the agent wants to end. */
  readonly verify: string | null;
  readonly verifyTimeoutMs: number;
  readonly maxCorrections: number;
  readonly failOnViolation: boolean;
  readonly requireFormat: boolean;
  readonly enforce: boolean;
}

export type Verify = NonNullable<StopChecks['verify']>;

export interface HeadlessSupervisorInput {
  readonly task: string;
  readonly runType: string;
  readonly runDir: string;
  readonly log: EventLog;
  readonly startedAt: number;
  readonly settings: SupervisorSettings;
  readonly env: Env;
  readonly checks?: RunChecks | undefined;
  readonly contract: OutputContract | null;
  /** The verification, once the agent's environment and sandbox are known (before claude starts). */
  readonly verify?: () => Verify | null;
  /** Each model call's reply (its cost counts against the run's budget). */
  readonly onReply?: (reply: ModelReply) => void;
  readonly onEnd?: (end: SupervisorEnd) => void;
}

/** A headless run's supervisor: tool history from the stream, the output contract and verification at Stop. */
export function headlessSupervisor(input: HeadlessSupervisorInput): Supervisor {
  const { settings, checks, contract } = input;
  return new Supervisor({
    ...(checks ? { checks: stopChecks(checks, contract, input.verify ?? (() => null)) } : {}),
    config: { mode: settings.mode, maxIterations: settings.maxIterations, loopLimit: 3 },
    task: input.task,
    runType: input.runType,
    runDir: input.runDir,
    log: input.log,
    history: 'stream',
    startedAt: input.startedAt,
    ask: async (prompt, signal) => {
      const reply = await askSupervisorModel(prompt, {
        bin: settings.bin,
        model: settings.model,
        timeoutMs: settings.timeoutMs,
        env: input.env,
        signal,
      });
      input.onReply?.(reply);
      return reply;
    },
    ...(input.onEnd ? { onEnd: input.onEnd } : {}),
  });
}

function stopChecks(
  checks: RunChecks,
  contract: OutputContract | null,
  verify: () => Verify | null,
): StopChecks {
  return {
    answer: contract && checks.requireFormat ? (text) => checkAnswer(contract, text) : null,
    get verify() {
      return verify();
    },
    actions: contract?.actions ?? DEFAULT_ACTIONS,
    maxCorrections: checks.maxCorrections,
    failOnViolation: checks.failOnViolation,
    enforce: checks.enforce,
    requiredSections: contract?.requiredSections ?? [],
  };
}

/** `runs.verify` in a fix run's worktree, with the agent's environment, in the agent's sandbox. */
export function verifier(input: {
  readonly command: string;
  readonly timeoutMs: number;
  readonly worktree: string;
  readonly runDir: string;
  readonly scope: AirlockScope;
  readonly privacy: RunPrivacy;
  readonly env: Record<string, string>;
  /** Told when each round starts and ends (the live line, piped output); `startedAt` is the run's. */
  readonly onProgress?: (report: StepReport) => void;
  readonly startedAt?: number;
}): Verify {
  const { command, scope } = input;
  const box = input.privacy.sandbox;
  let round = 0;
  const report = (end?: VerifyResult) =>
    input.onProgress?.({
      step: 'verify',
      command,
      elapsedMs: Date.now() - (input.startedAt ?? Date.now()),
      ...(end ? { end } : {}),
    });
  return async (signal) => {
    report();
    const result = await runVerify({
      signal,
      command,
      cwd: input.worktree,
      env: input.env,
      sandbox: box
        ? {
            writable: fixWritable(scope.worktree!, box),
            denyWrite: [box.mainGitDir, ...box.runtimeWritable],
            denyRead: [scope.ledgerDir, ...box.denyRead],
            allowRead: box.allowRead,
            allowedDomains: box.allowedDomains,
            tmpDir: box.sockDir,
          }
        : null,
      // The run's own secrets folder: two runs' verifications must not share one settings file.
      privateDir: path.dirname(input.privacy.secrets.settingsFile),
      logFile: path.join(input.runDir, 'raw', `verify-${++round}.log`),
      timeoutMs: input.timeoutMs,
    });
    report(result);
    const how = result.timedOut ? 'timed out' : `exit code ${result.exitCode ?? '?'}`;
    return {
      ok: result.ok,
      duration_ms: result.durationMs,
      detail: `\`${command}\` ${result.ok ? 'passed' : `failed (${how})`}${result.excerpt ? `:\n${result.excerpt}` : ''}`,
    };
  };
}
