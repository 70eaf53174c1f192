import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Tally } from '../../budget/tally.js';
import { withoutModelCredentials } from '../../claude/model-key.js';
import type { HookHandler } from '../../endpoint/server.js';
import { takeCheckpoint } from '../../git/checkpoint.js';
import { EventLog } from '../../ledger/events.js';
import { type Ledger, type RunMeta, updateState } from '../../ledger/index.js';
import type { OwnedChild } from '../../process/owned.js';
import type { Denial } from '../../supervisor/hooks.js';
import type { Supervisor } from '../../supervisor/supervisor.js';
import type { OutputContract } from '../../templates/contract.js';
import { launchTrusted } from '../../trust/index.js';
import { AGENT_RUN_DIR } from '../end/artifacts.js';
import { Halt } from '../halt.js';
import { headlessSupervisor, type Verify, verifier } from '../supervise.js';
import { readRunContract, readRunPrompt } from './compose.js';
import { type HarnessBinding, openRunHarness, type RunHarness } from './harness.js';
import type { ExecuteInput } from './input.js';
import { planLaunch } from './launch.js';

/** A headless run with everything set up that claude needs, not yet started. */
export interface PreparedRun {
  readonly runDir: string;
  readonly worktree: string | null;
  readonly launchDir: string;
  readonly sessionId: string;
  readonly startedAt: number;
  readonly log: EventLog;
  readonly tally: Tally;
  readonly halt: Halt;
  readonly supervisor: Supervisor;
  readonly harness: RunHarness;
  readonly contract: OutputContract | null;
  /** The guard's refusals so far (the report lists them). */
  readonly denials: Denial[];
  /** Where the harness asks which Bash call runs now: set by whoever reads claude's stream. */
  readonly bashCalls: { inFlight?: () => string | undefined };
  /** claude's argument list, environment and standard input. */
  readonly launch: { readonly args: string[]; readonly env: Record<string, string>; readonly stdin: string };
  /** claude, already started and waiting for its turn on standard input (a standby, src/run/standby/). */
  readonly started?: StartedClaude;
}

/** A claude started before its run (a standby): its process, and its output until the run reads it. */
export interface StartedClaude {
  readonly child: OwnedChild;
  /** Sends what claude wrote so far, then the rest as it comes. */
  attach(onStdout: (chunk: Buffer) => void, onStderr: (chunk: Buffer) => void): void;
}

/** How prepareRun goes: with a claude that waits for its turn as a JSON message, or with one started already. */
export interface PrepareHow {
  /** `--input-format=stream-json`: claude waits for its turn (a standby being made). */
  readonly streamInput?: boolean;
  /** A standby claimed: its harness (bound to this run), launch and claude are the run's. */
  readonly claimed?: ClaimedClaude;
  /** Told as each step is done (the fix-setup bench times them). */
  readonly onStep?: (step: string) => void;
}

/** A standby's parts as a run takes them over: checked against what this run would have started. */
export interface ClaimedClaude extends StartedClaude {
  readonly harness: RunHarness;
  readonly plan: LaunchPlan;
}

type RunBase = Pick<
  PreparedRun,
  'runDir' | 'worktree' | 'launchDir' | 'sessionId' | 'startedAt' | 'log' | 'tally' | 'halt' | 'contract'
>;

/**
 * Everything a headless run does before claude starts: the supervisor, the harness (slash
 * commands, endpoint, private area), claude's settings, arguments and environment, the
 * verification. Release `harness` when the run ends; a failure here has released it already.
 * With `how.claimed` (a standby, src/run/standby/) the harness, launch and claude are the
 * standby's: only what is the run's own (its log, supervisor, budget and checks) is made here.
 */
export async function prepareRun(input: ExecuteInput, how: PrepareHow = {}): Promise<PreparedRun> {
  const { ledger, meta } = input;
  const { onStep, claimed } = how;
  const run = runBase(input);
  // Set once the agent's environment and sandbox are known (below), before claude starts.
  let verify: Verify | null = null;
  const supervisor = supervisorFor(input, run, () => verify);
  const denials: Denial[] = [];
  const bashCalls: PreparedRun['bashCalls'] = {};
  const { worktree, log } = run;
  const binding = bindingOf(input, { ...run, supervisor, denials, bashCalls });
  claimed?.harness.rebind(binding);
  const harness =
    claimed?.harness ??
    (await openRunHarness({
      ledger,
      meta,
      launchDir: run.launchDir,
      worktree,
      env: input.env,
      sandbox: input.sandbox,
      ...binding,
      ...(onStep ? { onStep } : {}),
    }));
  try {
    const launch = claimed
      ? logMentions(claimed.plan, log)
      : launchFor(input, { ...run, harness }, how.streamInput === true);
    const command = input.checks?.verify;
    if (command && worktree) {
      const { scope, privacy } = harness;
      const timeoutMs = input.checks?.verifyTimeoutMs ?? 0;
      verify = verifier({
        command,
        timeoutMs,
        worktree,
        runDir: run.runDir,
        scope,
        privacy,
        env: withoutModelCredentials(launch.env),
        ...(input.onProgress ? { onProgress: input.onProgress, startedAt: run.startedAt } : {}),
      });
    }
    onStep?.('deny rules + runSettings + sandbox + buildClaudeArgs + env');
    return {
      ...run,
      supervisor,
      harness,
      denials,
      bashCalls,
      launch,
      ...(claimed ? { started: claimed } : {}),
    };
  } catch (error) {
    await harness.release();
    throw error;
  }
}

/** Who answers the run's endpoint (src/run/begin/harness.ts): its log, supervisor, checkpoints, denials. */
function bindingOf(
  input: ExecuteInput,
  run: RunBase & Pick<PreparedRun, 'supervisor' | 'denials' | 'bashCalls'>,
): HarnessBinding {
  const { ledger, meta } = input;
  const { worktree, log, supervisor } = run;
  return {
    log,
    supervisor,
    route: (hooks) => checkpointAtStop(hooks, { ledger, meta, worktree, log, supervisor }),
    onDenial: (d) => run.denials.push(d),
    bashInFlight: () => run.bashCalls.inFlight?.(),
  };
}

function runBase(input: ExecuteInput): RunBase {
  const { ledger, meta, state } = input;
  const runDir = path.join(ledger.runsDir, meta.run_name);
  const sessionId = input.resume ? state.session_id : randomUUID();
  if (!sessionId) throw new Error(`run ${meta.run_name} has no session id to resume`);
  const log = new EventLog(runDir);
  const tally = new Tally(state.usage, input.maxCostUsd ?? null, input.supervisor.model);
  return {
    runDir,
    worktree: state.worktree_path,
    launchDir: state.worktree_path ?? ledger.root,
    sessionId,
    startedAt: Date.now(),
    log,
    tally,
    halt: new Halt({
      log,
      tally,
      maxCostUsd: input.maxCostUsd ?? null,
      root: ledger.root,
      ...(input.onSpend ? { onSpend: input.onSpend } : {}),
    }),
    contract: readRunContract(runDir),
  };
}

/** The run's supervisor: its model calls count against the budget, its abort ends the run. */
function supervisorFor(input: ExecuteInput, run: RunBase, verify: () => Verify | null): Supervisor {
  return headlessSupervisor({
    task: input.meta.task,
    runType: input.meta.type,
    runDir: run.runDir,
    log: run.log,
    startedAt: run.startedAt,
    settings: input.supervisor,
    env: input.env,
    checks: input.checks,
    contract: run.contract,
    verify,
    onReply: (reply) => {
      run.tally.supervisorCall(reply);
      run.halt.checkBudget();
    },
    onEnd: (end) => run.halt.supervisorEnded(end),
  });
}

/** claude's launch as planLaunch makes it: what a standby is compared with when claimed. */
export type LaunchPlan = ReturnType<typeof planLaunch>;

/** The run's launch with a harness: its arguments, environment, settings and turn. */
export function planRunLaunch(
  input: ExecuteInput,
  run: { runDir: string; launchDir: string; sessionId: string; harness: RunHarness },
  streamInput: boolean,
): LaunchPlan {
  const { scope, endpoint, privacy } = run.harness;
  const verifies = input.checks?.verify && run.harness.scope.worktree;
  return planLaunch({
    meta: input.meta,
    scope,
    runDir: run.runDir,
    launchDir: run.launchDir,
    sessionId: run.sessionId,
    prompt: readRunPrompt(run.runDir, input.meta),
    ...(verifies ? { verifyTimeoutMs: input.checks?.verifyTimeoutMs } : {}),
    ...(input.resume ? { resume: input.resume } : {}),
    ...(input.replay ? { replay: input.replay } : {}),
    endpoint,
    secrets: privacy.secrets,
    sandbox: privacy.sandbox,
    supervisorTimeoutMs: input.supervisor.timeoutMs,
    parentEnv: input.env,
    envPass: input.envPass,
    // NOTE: judged where claude starts: a worktree's files may differ from what was trusted.
    projectSettings: input.trust ? launchTrusted(input.trust, run.launchDir) : false,
    ...(streamInput ? { streamInput } : {}),
  });
}

/** claude's launch, with its settings written to the private area. */
function launchFor(
  input: ExecuteInput,
  run: { runDir: string; launchDir: string; sessionId: string; harness: RunHarness; log: EventLog },
  streamInput: boolean,
): PreparedRun['launch'] {
  const plan = planRunLaunch(input, run, streamInput);
  run.harness.writeSecrets(plan.settings, plan.modelKey);
  return logMentions(plan, run.log);
}

/** The launch, its prompt's mentions of files the run may not read logged as refused. */
function logMentions(plan: LaunchPlan, log: EventLog): PreparedRun['launch'] {
  const { mentions, settings: _settings, modelKey: _key, ...rest } = plan;
  if (mentions.length > 0)
    log.append({
      event: 'refused',
      source: 'agentbox',
      tool: 'prompt',
      rule: 'at-mention',
      reason: `the prompt mentions files this run may not read: kept as text, no file attached (${mentions.slice(0, 5).join(' ')})`,
    });
  return rest;
}

/**
 * A fix run's worktree is checkpointed at the end of every turn (claude waits for its Stop hook,
 * so nothing changes meanwhile): after a crash that left it half-written, recovery puts it back
 * to the last one.
 */
function checkpointAtStop(
  hooks: HookHandler,
  run: { ledger: Ledger; meta: RunMeta; worktree: string | null; log: EventLog; supervisor: Supervisor },
): HookHandler {
  const { ledger, meta, worktree, log, supervisor } = run;
  if (!worktree) return hooks;
  const checkpoint = async () => {
    try {
      const taken = await takeCheckpoint(worktree, meta.run_name, { exclude: [AGENT_RUN_DIR] });
      await updateState(ledger, meta.run_name, {
        checkpoint: { ...taken, at: new Date().toISOString(), iteration: supervisor.iterations },
      });
    } catch (error) {
      log.append({ event: 'checkpoint_failed', error: (error as Error).message });
    }
  };
  return async (event, hookInput) => {
    if (event === 'Stop') await checkpoint();
    return hooks(event, hookInput);
  };
}
