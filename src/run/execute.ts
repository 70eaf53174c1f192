import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { directExecution } from '../airlock/direct.js';
import type { AirlockScope } from '../airlock/guard.js';
import { canonical } from '../airlock/paths.js';
import { Tally } from '../budget/tally.js';
import { spawnClaude } from '../claude/spawn.js';
import {
  EMPTY_SUMMARY,
  LineSplitter,
  parseStreamLine,
  type StreamSummary,
  summarize,
} from '../claude/stream.js';
import type { Config } from '../config/schema.js';
import { startEndpoint } from '../endpoint/server.js';
import { hookAddressBook } from '../endpoint/settings.js';
import { AgentboxError } from '../errors.js';
import { takeCheckpoint } from '../git/checkpoint.js';
import type { Ledger, RunMeta, RunState } from '../ledger/index.js';
import { heartbeat, updateState } from '../ledger/index.js';
import { killMarked, processStartTime } from '../process/reap.js';
import { prepareRunPrivacy } from '../sandbox/prepare.js';
import { commandsRoot, removeRunCommands, writeRunCommands } from '../slash/index.js';
import { createRunHookHandler, type Denial } from '../supervisor/hooks.js';
import { askSupervisorModel } from '../supervisor/model.js';
import { toolExcerpt } from '../supervisor/prompt.js';
import type { SupervisorMode } from '../supervisor/rules.js';
import { Supervisor } from '../supervisor/supervisor.js';
import { violationMessage } from '../supervisor/violations.js';
import { checkAnswer, DEFAULT_ACTIONS } from '../templates/contract.js';
import type { Env } from '../util/env.js';
import { runVerify } from '../verify/run.js';
import { AGENT_RUN_DIR, agentRunDir } from './artifacts.js';
import { readRunContract, readRunPrompt } from './compose.js';
import { EventLog } from './events.js';
import { type Finalized, finalizeRun, pauseSeam } from './finalize.js';
import { planLaunch } from './launch.js';
import { type Progress, toolTarget } from './live.js';
import type { StopReason } from './outcome.js';
import { runSetupStep, type SetupConfig, setupDue, setupEnv, setupSandbox } from './setup-step.js';
import { NO_TOOL_ERRORS, recordToolResult, type ToolErrors } from './tool-errors.js';

export type { Progress } from './live.js';

export interface ExecuteInput {
  readonly ledger: Ledger;
  readonly meta: RunMeta;
  readonly state: RunState;
  /** The environment the agent's whitelist is taken from. */
  readonly env: Env;
  readonly claudeBin: string;
  readonly envPass: readonly string[];
  /** `sandbox` of the configuration: the kernel boundary of fix runs. */
  readonly sandbox: Config['sandbox'];
  readonly timeoutMs: number;
  /** USD the run may cost, agent and supervisor together; passing it ends the run (ABORTED, budget). */
  readonly maxCostUsd?: number | null;
  readonly supervisor: {
    readonly mode: SupervisorMode;
    readonly maxIterations: number;
    /** Per supervisor model call. */
    readonly timeoutMs: number;
    readonly bin: string;
    readonly model: string | null;
  };
  /** Resume the run's session instead of starting it (`more`: extra instructions). */
  readonly resume?: { readonly more?: string };
  /** Start the task again in a new session (after a crash left nothing to resume); `note` says why. */
  readonly replay?: { readonly note: string };
  /** The output contract and the verification (from supervisor.* and runs.verify). */
  readonly checks?: RunChecks;
  /** runs.setup: run in a fix run's worktree before claude first starts there (src/run/setup-step.ts). */
  readonly setup?: SetupConfig | null;
  /** Subscribes to Ctrl-C / SIGTERM; the returned function unsubscribes. */
  readonly onInterrupt?: (stop: (by: string) => void) => () => void;
  readonly onProgress?: (progress: Progress) => void;
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

const HEARTBEAT_MS = 15_000;
const HEARTBEAT_MIN_GAP_MS = 2_000;

/**
 * Runs claude for one run, from its ledger entry to its end: slash commands, hook endpoint, the
 * envelope, the stream, heartbeats, a timeout, Ctrl-C, and then the artifacts and the final
 * status. Every resource is released in `finally`, in reverse order.
 */
export async function executeRun(input: ExecuteInput): Promise<Finalized> {
  const { ledger, meta } = input;
  const runDir = path.join(ledger.runsDir, meta.run_name);
  const worktree = input.state.worktree_path;
  const launchDir = worktree ?? ledger.root;
  const scope: AirlockScope = {
    type: meta.type,
    repoRoot: canonical(ledger.root),
    ledgerDir: canonical(ledger.dir),
    runDir: canonical(runDir),
    worktree: worktree ? canonical(worktree) : null,
  };
  const log = new EventLog(runDir);
  const denials: Denial[] = [];
  const started = Date.now();
  const sessionId = input.resume ? input.state.session_id : randomUUID();
  if (!sessionId) throw new Error(`run ${meta.run_name} has no session id to resume`);

  const cleanups: (() => unknown)[] = [];
  let stop: StopReason = { kind: 'finished' };
  // A resumed run keeps counting from where it stopped.
  let summary: StreamSummary = {
    ...EMPTY_SUMMARY,
    toolCalls: input.resume || input.replay ? input.state.tool_calls : 0,
  };
  let toolErrors: ToolErrors =
    input.resume || input.replay
      ? { count: input.state.failed_tool_calls ?? 0, last: input.state.last_tool_error ?? null }
      : NO_TOOL_ERRORS;
  const tally = new Tally(input.state.usage, input.maxCostUsd ?? null, input.supervisor.model);
  try {
    // The agent's RUN_DIR: its artifact folder in a fix run (inside the worktree), else the ledger folder.
    const spec = {
      runId: meta.run_id,
      runName: meta.run_name,
      type: meta.type,
      runDir: agentRunDir(worktree, runDir),
      worktree,
    };
    if (worktree) fs.mkdirSync(spec.runDir, { recursive: true });
    // Folders the run creates only to hold its commands go again with them.
    const created = [path.join(launchDir, '.claude'), commandsRoot(launchDir)].filter(
      (d) => !fs.existsSync(d),
    );
    writeRunCommands(launchDir, spec);
    cleanups.push(() => {
      removeRunCommands(launchDir, meta.run_id);
      for (const dir of created.reverse())
        if (fs.existsSync(dir) && fs.readdirSync(dir).length === 0) fs.rmdirSync(dir);
    });

    const sup = input.supervisor;
    const contract = readRunContract(runDir);
    // Set once the agent's environment and sandbox are known (below), before claude starts.
    let verify: (() => Promise<{ ok: boolean; detail: string }>) | null = null;
    const checks = input.checks;
    const supervisor = new Supervisor({
      ...(checks
        ? {
            checks: {
              answer: contract && checks.requireFormat ? (text) => checkAnswer(contract, text) : null,
              get verify() {
                return verify;
              },
              actions: contract?.actions ?? DEFAULT_ACTIONS,
              maxCorrections: checks.maxCorrections,
              failOnViolation: checks.failOnViolation,
              enforce: checks.enforce,
              requiredSections: contract?.requiredSections ?? [],
            },
          }
        : {}),
      config: { mode: sup.mode, maxIterations: sup.maxIterations, loopLimit: 3 },
      task: meta.task,
      runType: meta.type,
      runDir,
      log,
      history: 'stream',
      startedAt: started,
      ask: async (prompt) => {
        const reply = await askSupervisorModel(prompt, {
          bin: sup.bin,
          model: sup.model,
          timeoutMs: sup.timeoutMs,
          env: input.env,
        });
        tally.supervisorCall(reply);
        overBudget();
        return reply;
      },
      onEnd: (end) => {
        if (end.kind === 'abort' && stop.kind === 'finished')
          stop = { kind: 'aborted', reason: end.reason, failure: end.failure };
      },
    });
    const hooks = createRunHookHandler({
      scope,
      log,
      launchDir,
      supervisor,
      onDenial: (d) => denials.push(d),
    });
    // A fix run's worktree is checkpointed at the end of every turn (claude waits for its Stop
    // hook, so nothing changes meanwhile): after a crash that left it half-written, recovery puts
    // it back to the last one.
    const checkpoint = async () => {
      if (!worktree) return;
      try {
        const taken = await takeCheckpoint(worktree, meta.run_name, { exclude: [AGENT_RUN_DIR] });
        await updateState(ledger, meta.run_name, {
          checkpoint: { ...taken, at: new Date().toISOString(), iteration: supervisor.iterations },
        });
      } catch (error) {
        log.append({ event: 'checkpoint_failed', error: (error as Error).message });
      }
    };
    const endpoint = await startEndpoint({
      handler: async (event, input) => {
        if (event === 'Stop') await checkpoint();
        return hooks(event, input);
      },
      onProblem: (p) => log.append({ event: 'endpoint_problem', ...p }),
    });
    cleanups.push(() => endpoint.close());

    const privacy = await prepareRunPrivacy({
      env: input.env,
      runName: meta.run_name,
      repoRoot: ledger.root,
      worktree: scope.worktree,
      config: input.sandbox,
    });
    cleanups.push(() => privacy.area.dispose());
    const { args, env, settings, stdin } = planLaunch({
      meta,
      scope,
      runDir,
      launchDir,
      sessionId,
      prompt: readRunPrompt(runDir, meta),
      ...(checks?.verify && worktree ? { verifyTimeoutMs: checks.verifyTimeoutMs } : {}),
      ...(input.resume ? { resume: input.resume } : {}),
      ...(input.replay ? { replay: input.replay } : {}),
      endpoint,
      secrets: privacy.secrets,
      sandbox: privacy.sandbox,
      supervisorTimeoutMs: sup.timeoutMs,
      parentEnv: input.env,
      envPass: input.envPass,
    });
    privacy.area.writeSecret('settings.json', `${JSON.stringify(settings)}\n`);
    if (checks?.verify && worktree) {
      const command = checks.verify;
      let round = 0;
      const box = privacy.sandbox;
      verify = async () => {
        const result = await runVerify({
          command,
          cwd: worktree,
          env,
          sandbox: box
            ? {
                writable: [scope.worktree!, box.gitDir, box.tmpDir],
                denyWrite: [box.mainGitDir],
                denyRead: [scope.ledgerDir, ...box.denyRead],
                allowedDomains: box.allowedDomains,
              }
            : null,
          // The run's own secrets folder: two runs' verifications must not share one settings file.
          privateDir: path.dirname(privacy.secrets.settingsFile),
          logFile: path.join(runDir, 'raw', `verify-${++round}.log`),
          timeoutMs: checks.verifyTimeoutMs,
        });
        const how = result.timedOut ? 'timed out' : `exit code ${result.exitCode ?? '?'}`;
        return {
          ok: result.ok,
          detail: `\`${command}\` ${result.ok ? 'passed' : `failed (${how})`}${result.excerpt ? `:\n${result.excerpt}` : ''}`,
        };
      };
    }
    privacy.area.writeSecret('hook.json', hookAddressBook(endpoint));
    if (worktree && input.setup && setupDue(input.setup, worktree, input.state)) {
      const box = privacy.sandbox;
      const ended = await runSetupStep({
        ledger,
        meta,
        runDir,
        worktree,
        setup: input.setup,
        env: setupEnv(env, ledger.root, box),
        sandbox: box ? setupSandbox(box, worktree, scope.ledgerDir, input.setup.domains) : null,
        privateDir: path.dirname(privacy.secrets.settingsFile),
        startedAt: started,
        ...(input.onInterrupt ? { onInterrupt: input.onInterrupt } : {}),
        ...(input.onProgress ? { onProgress: input.onProgress } : {}),
      });
      if (ended) return ended;
    }

    const streamFile = path.join(runDir, 'raw', 'stream.jsonl');
    const stderrFile = path.join(runDir, 'raw', 'stderr.log');
    const lines = new LineSplitter();
    let lastBeat = 0;
    const beat = (force = false) => {
      const now = Date.now();
      if (!force && now - lastBeat < HEARTBEAT_MIN_GAP_MS) return;
      lastBeat = now;
      void updateState(
        ledger,
        meta.run_name,
        heartbeat(new Date(now), {
          tool_calls: summary.toolCalls,
          failed_tool_calls: toolErrors.count,
          last_tool_error: toolErrors.last,
          usage: tally.usage(),
        }),
      ).catch((error) => ioFailed(error, path.join(runDir, 'state.json')));
    };
    // A ledger that cannot be written (disk full, read-only) stops the run: going on would lose
    // what the agent does from then on.
    let stopChild: (() => unknown) | undefined;
    const ioFailed = (error: unknown, file: string) => {
      if (stop.kind !== 'finished') return;
      const code = (error as NodeJS.ErrnoException).code;
      stop = {
        kind: 'io_error',
        message: `cannot write ${path.relative(ledger.root, file)} (${code ?? (error as Error).message}); the run was stopped`,
      };
      void stopChild?.();
    };
    // The cost budget, checked as usage arrives: passing it stops claude, as the timeout does.
    const overBudget = () => {
      const reason = tally.passed();
      if (!reason || stop.kind !== 'finished') return;
      stop = { kind: 'aborted', reason, failure: 'budget' };
      log.append({ event: 'budget', decision: 'abort', reason, max_cost_usd: input.maxCostUsd });
      void stopChild?.();
    };
    const calls = new Map<string, { name: string; input: unknown }>();
    /** The tool call the live line shows: the newest still open. */
    let current: { name: string; target: string | null; since: number } | null = null;
    let waitingSince = Date.now();
    // A direct_execution attempt is logged as a violation; configured major, it ends the run.
    const directAttempt = (tool: string, toolInput: unknown, refused: boolean) => {
      const detail = directExecution(tool, toolInput, scope.worktree, refused);
      if (!detail) return;
      const fail =
        checks?.enforce === true && (checks.failOnViolation || contract?.actions.direct_execution === 'fail');
      log.append({ event: 'violation', type: 'direct_execution', detail, action: fail ? 'fail' : 'refused' });
      if (fail && stop.kind === 'finished') {
        stop = { kind: 'aborted', reason: violationMessage('direct_execution'), failure: 'violation' };
        void stopChild?.();
      }
    };
    const onLine = (line: string) => {
      if (stop.kind === 'io_error') return;
      try {
        fs.appendFileSync(streamFile, `${line}\n`);
      } catch (error) {
        ioFailed(error, streamFile);
        return;
      }
      for (const event of parseStreamLine(line)) {
        summary = summarize(summary, event);
        if (tally.event(event)) overBudget();
        if (event.kind === 'init')
          void updateState(ledger, meta.run_name, {
            claude_version: event.version ?? null,
            model_used: event.model ?? null,
          }).catch((error) => ioFailed(error, path.join(runDir, 'state.json')));
        // The supervisor's tool history comes from the stream (cheaper than a hook per call).
        if (event.kind === 'tool_use') {
          calls.set(event.id, { name: event.name, input: event.input });
          current = { name: event.name, target: toolTarget(event.input), since: Date.now() };
        } else if (event.kind === 'tool_result') {
          const call = calls.get(event.toolUseId);
          calls.delete(event.toolUseId);
          // A failed call on agentbox's files counts: the sandbox masks a missing denied path ("Not a directory").
          if (call) directAttempt(call.name, call.input, event.isError);
          toolErrors = recordToolResult(toolErrors, call, event);
          supervisor.recordTool(call?.name ?? '', !event.isError, toolExcerpt(call?.input, event.text));
        }
      }
      // Between tool calls claude waits for the model: since the last call ended.
      if (summary.openTools.length === 0 && current) {
        current = null;
        waitingSince = Date.now();
      }
      input.onProgress?.({
        tool: current?.name ?? null,
        target: current?.target ?? null,
        toolSince: current?.since ?? waitingSince,
        toolCalls: summary.toolCalls,
        elapsedMs: Date.now() - started,
      });
      beat();
    };
    const child = spawnClaude(input.claudeBin, args, {
      cwd: launchDir,
      env,
      input: stdin,
      onStdout: (chunk) => {
        for (const line of lines.push(chunk)) onLine(line);
      },
      onStderr: (chunk) => {
        if (stop.kind === 'io_error') return;
        try {
          fs.appendFileSync(stderrFile, chunk);
        } catch (error) {
          ioFailed(error, stderrFile);
        }
      },
    });
    // Last of all (cleanups run in reverse): one more sweep for anything claude was starting as it
    // ended, which the sweeps at its exit can miss (see src/process/owned.ts).
    cleanups.push(() => killMarked(child.mark));
    cleanups.push(() => child.stop());
    stopChild = () => child.stop();
    await updateState(
      ledger,
      meta.run_name,
      {
        pid: process.pid,
        pid_start: processStartTime(process.pid),
        claude_pid: child.pid ?? null,
        claude_pid_start: child.pid ? processStartTime(child.pid) : null,
        process_mark: child.mark,
        launch_dir: launchDir,
        session_id: sessionId,
        last_heartbeat: new Date().toISOString(),
        endpoint_url: endpoint.url,
      },
      {
        event: input.resume ? 'resumed' : input.replay ? 'replayed' : 'claude_started',
        detail: `pid ${child.pid ?? '?'}`,
      },
    );

    const beating = setInterval(() => beat(true), HEARTBEAT_MS);
    cleanups.push(() => clearInterval(beating));
    const timeout = setTimeout(() => {
      stop = { kind: 'timeout', afterMs: input.timeoutMs };
      void child.stop();
    }, input.timeoutMs);
    cleanups.push(() => clearTimeout(timeout));
    const unsubscribe = input.onInterrupt?.((by) => {
      if (stop.kind === 'finished') stop = { kind: 'interrupted', by };
      void child.stop();
    });
    if (unsubscribe) cleanups.push(unsubscribe);

    const exit = await child.exited;
    for (const line of lines.flush()) onLine(line);
    try {
      tally.end(Date.now() - started);
      await updateState(ledger, meta.run_name, { usage: tally.usage() });
      return await finalizeRun({
        ledger,
        meta,
        runDir,
        worktree,
        exit,
        summary,
        stop,
        denials,
        durationMs: Date.now() - started,
        toolErrors,
        checks: supervisor.checkRecord,
        contract,
        pauseAfter: pauseSeam(input.env.AGENTBOX_TEST_PAUSE, runDir),
      });
    } catch (error) {
      // Claude has ended; what could not be recorded is said, and nothing half-written is left
      // (every ledger file is replaced atomically or appended whole).
      const message = error instanceof Error ? error.message : String(error);
      throw new AgentboxError(
        'IO_FAILED',
        `run ${meta.run_name} ended but could not be recorded: ${message}`,
        {
          hint: `free disk space or make .agents writable again; then "agentbox status" marks the run CRASHED and "agentbox resume ${meta.run_id}" continues it`,
        },
      );
    }
  } finally {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch {
        // Keep releasing the rest; the run's outcome is already recorded.
      }
    }
  }
}
