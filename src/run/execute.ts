import fs from 'node:fs';
import path from 'node:path';
import { spawnClaude } from '../claude/spawn.js';
import { sandboxOffBy } from '../config/sandbox-env.js';
import { AgentboxError } from '../errors.js';
import { updateState } from '../ledger/index.js';
import { NO_TOOL_ERRORS } from '../present/tool-errors.js';
import type { OwnedChild, OwnedExit } from '../process/owned.js';
import { afterReply, ownerPid } from '../process/owner.js';
import { killMarked, processStartTime } from '../process/reap.js';
import { loadLexer } from '../templates/sections.js';
import { claudeEnv } from './begin/claude-env.js';
import { type PreparedRun, prepareRun, type StartedClaude } from './begin/prepare.js';
import { runSetupStep, setupDue, setupEnv, setupSandbox } from './begin/setup-step.js';
import { claudeEnd } from './claude-end.js';
import { type Finalized, finalizeRun } from './end/finalize.js';
import { notPrepared } from './end/not-prepared.js';
import { pauseSeam } from './end/pause-seam.js';
import { RunSink } from './sink.js';
import { claimStandby, parkNextRevision, standbyWanted } from './standby/park.js';
import type { RunChecks } from './supervise.js';

export type { Progress } from '../present/live.js';

import type { ExecuteInput } from './begin/input.js';

export type { RunChecks } from './supervise.js';

/**
 * Runs claude for one run, from its ledger entry to its end: the harness (slash commands, hook
 * endpoint, private area), the envelope, the stream, heartbeats, a timeout, Ctrl-C, and then the
 * artifacts and the final status. Everything is released in `finally`, in reverse order.
 */
export async function executeRun(input: ExecuteInput): Promise<Finalized> {
  // A revision served by a resident agentbox may find its claude started already (src/run/standby/).
  const setupFirst =
    input.setup && input.state.worktree_path && setupDue(input.setup, input.state.worktree_path, input.state);
  const claimed = setupFirst ? null : await claimStandby(input);
  const run = await prepareRun(input, claimed ? { claimed } : {}).catch(async (error: unknown) => {
    await claimed?.harness.release();
    return notPrepared(input, error);
  });
  // A run without its kernel fence says so where the person looks at it (agentbox show).
  if (!run.harness.privacy.sandbox) run.log.append({ event: 'sandbox_off', by: sandboxOffBy(input.env) });
  let ended: Finalized | undefined;
  try {
    const setupEnded = await setupIfDue(input, run);
    if (setupEnded) return setupEnded;
    const { exit, sink, unwatch } = await superviseClaude(input, run);
    try {
      ended = await recordEnd(input, run, exit, sink);
      return ended;
    } finally {
      unwatch();
    }
  } finally {
    // The run's outcome is already recorded: a served run's exit code need not wait for its release,
    // nor for the standby its next revision may take (src/run/standby/), made once it is released.
    const park = ended?.status === 'REVIEW' && standbyWanted(input);
    await afterReply(async () => {
      await release(run);
      if (park) await parkNextRevision(input);
    });
  }
}

/** Everything the run held, in reverse order; what could not be released is only logged. */
async function release(run: PreparedRun): Promise<void> {
  for (const error of await run.harness.release())
    run.log.append({
      event: 'release_failed',
      error: error instanceof Error ? error.message : String(error),
    });
}

/** runs.setup, the first time claude is to start in a fix run's worktree; its end, if it did not pass. */
async function setupIfDue(input: ExecuteInput, run: PreparedRun): Promise<Finalized | null> {
  const { worktree } = run;
  if (!worktree || !input.setup || !setupDue(input.setup, worktree, input.state)) return null;
  const box = run.harness.privacy.sandbox;
  return runSetupStep({
    ledger: input.ledger,
    meta: input.meta,
    runDir: run.runDir,
    worktree,
    setup: input.setup,
    env: setupEnv(run.launch.env, input.ledger.root, box),
    sandbox: box ? setupSandbox(box, worktree, run.harness.scope.ledgerDir, input.setup.domains) : null,
    privateDir: path.dirname(run.harness.privacy.secrets.settingsFile),
    startedAt: run.startedAt,
    ...(input.onInterrupt ? { onInterrupt: input.onInterrupt } : {}),
    ...(input.onProgress ? { onProgress: input.onProgress } : {}),
  });
}

/**
 * Starts claude and follows it to its end (a read-only run's result line, else its exit:
 * src/run/claude-end.ts): its stream, heartbeats, the timeout, Ctrl-C.
 */
async function superviseClaude(
  input: ExecuteInput,
  run: PreparedRun,
): Promise<{ exit: OwnedExit | null; sink: RunSink; unwatch: () => void }> {
  const { harness, halt } = run;
  const continued = input.resume || input.replay;
  const sink = new RunSink({
    ledger: input.ledger,
    runName: input.meta.run_name,
    runDir: run.runDir,
    log: run.log,
    tally: run.tally,
    halt,
    worktree: harness.scope.worktree,
    failOnDirect: failsOnDirect(input.checks, run),
    // A resumed run keeps counting from where it stopped.
    toolCalls: continued ? input.state.tool_calls : 0,
    toolErrors: continued
      ? { count: input.state.failed_tool_calls ?? 0, last: input.state.last_tool_error ?? null }
      : NO_TOOL_ERRORS,
    startedAt: run.startedAt,
    launch: input.resume ? 'resume' : 'startup',
    onTool: (name, ok, excerpt) => run.supervisor.recordTool(name, ok, excerpt),
    ...(input.onProgress ? { onProgress: input.onProgress } : {}),
    ...readFence(harness.scope, run),
    onDenial: (d) => run.denials.push(d),
  });
  run.bashCalls.inFlight = () => sink.bashInFlight();
  const child = run.started
    ? takeStarted(run.started, sink, run.launch.stdin)
    : spawnClaude(input.claudeBin, run.launch.args, {
        cwd: run.launchDir,
        env: await claudeEnv(input, run),
        input: run.launch.stdin,
        onStdout: (chunk) => sink.stdout(chunk),
        onStderr: (chunk) => sink.stderr(chunk),
      });
  // Last of all (releases run in reverse): one more sweep for anything claude was starting as it
  // ended, which the sweeps at its exit can miss (see src/process/owned.ts).
  // While claude starts (it takes a few hundred ms), the lexer that checks and renders its answer
  // is loaded (src/templates/sections.ts): not before claude starts, and not while a Stop waits.
  if (run.contract) void loadLexer().catch(() => {});
  harness.defer(() => killMarked(child.mark));
  const end = claudeEnd(child, sink.result, { readOnly: run.worktree === null, halt });
  harness.defer(() => end.finish(run.log));
  // Whatever ends the run ends its supervisor's Stop under way too (its verification, its model call).
  halt.attach(() => {
    void run.supervisor.close();
    return child.stop();
  });
  await recordStart(input, run, child);
  await input.onStarted?.();
  const unwatch = watchClaude(input, run, sink);
  const exit = await end.ended;
  if (exit) sink.flush();
  return { exit, sink, unwatch };
}

/**
 * A claude started before its run (a standby): its output goes to the run's stream from now, its
 * turn is sent, and its standard input is closed after its result, which ends it.
 */
function takeStarted(started: StartedClaude, sink: RunSink, turn: string): OwnedChild {
  started.attach(
    (chunk) => sink.stdout(chunk),
    (chunk) => sink.stderr(chunk),
  );
  const { child } = started;
  child.stdin?.write(turn);
  void sink.result.then(() => child.stdin?.end());
  return child;
}

/**
 * The run's heartbeat, timeout and stop signals while claude runs; returns what stops the first two
 * once the run's end is recorded (a long export still beats: the watchdog must not find it silent),
 * not at its release, which may come later (after a served run's reply, after a group's last
 * attempt): an ended run's state is not written again. Ctrl-C and `agentbox stop` stay subscribed
 * until the release.
 */
function watchClaude(input: ExecuteInput, run: PreparedRun, sink: RunSink): () => void {
  const { harness, halt } = run;
  const beating = sink.beating();
  const timeout = setTimeout(() => halt.timedOut(input.timeoutMs), input.timeoutMs);
  const unwatch = () => {
    beating();
    clearTimeout(timeout);
  };
  harness.defer(unwatch);
  const unsubscribe = input.onInterrupt?.((by) => halt.interrupted(by));
  if (unsubscribe) harness.defer(unsubscribe);
  const offHalt = input.onHalt?.((reason) => halt.halt(reason));
  if (offHalt) harness.defer(offHalt);
  return unwatch;
}

/** What the sink checks a Bash call's paths against, to log reads the sandbox refused (a fenced run only). */
function readFence(scope: PreparedRun['harness']['scope'], run: PreparedRun) {
  if (!scope.reads) return {};
  const home = run.launch.env.HOME;
  return { reads: { fence: scope.reads, cwd: run.launchDir, ...(home ? { home } : {}) } };
}

/** A direct_execution attempt ends the run when the checks are enforced and it is configured major. */
function failsOnDirect(checks: RunChecks | undefined, run: PreparedRun): boolean {
  return (
    checks?.enforce === true && (checks.failOnViolation || run.contract?.actions.direct_execution === 'fail')
  );
}

async function recordStart(
  input: ExecuteInput,
  run: PreparedRun,
  child: ReturnType<typeof spawnClaude>,
): Promise<void> {
  await updateState(
    input.ledger,
    { name: input.meta.run_name, meta: input.meta },
    {
      pid: ownerPid(),
      pid_start: processStartTime(ownerPid()),
      claude_pid: child.pid ?? null,
      claude_pid_start: child.pid ? processStartTime(child.pid) : null,
      process_mark: child.mark,
      launch_dir: run.launchDir,
      session_id: run.sessionId,
      last_heartbeat: new Date().toISOString(),
      endpoint_url: run.harness.endpoint.url,
    },
    {
      event: input.resume ? 'resumed' : input.replay ? 'replayed' : 'claude_started',
      detail: `pid ${child.pid ?? '?'}`,
    },
  );
}

/** Claude has ended: the spend, the artifacts and the final status. */
async function recordEnd(
  input: ExecuteInput,
  run: PreparedRun,
  exit: OwnedExit | null,
  sink: RunSink,
): Promise<Finalized> {
  const { ledger, meta } = input;
  try {
    // NOTE: before the end is recorded: a Stop still being decided (claude was stopped while it
    // waited) is abandoned now, so nothing of it is logged after the run has ended.
    await run.supervisor.close();
    run.tally.end(Date.now() - run.startedAt);
    await updateState(ledger, meta.run_name, { usage: run.tally.usage() });
    return await finalizeRun({
      ledger,
      meta,
      runDir: run.runDir,
      worktree: run.worktree,
      exit,
      summary: sink.summary,
      stderrLine: sink.lastStderrLine,
      stop: run.halt.reason,
      denials: run.denials,
      durationMs: Date.now() - run.startedAt,
      toolErrors: sink.toolErrors,
      checks: run.supervisor.checkRecord,
      contract: run.contract,
      pauseAfter: pauseSeam(input.env.AGENTBOX_TEST_PAUSE, run.runDir),
    });
  } catch (error) {
    // Claude has ended; what could not be recorded is said, and nothing half-written is left
    // (every ledger file is replaced atomically or appended whole).
    const message = error instanceof Error ? error.message : String(error);
    // The repository itself was removed (or moved) while the run went on: its ledger went with it.
    if (!fs.existsSync(ledger.root)) {
      throw new AgentboxError(
        'IO_FAILED',
        `run ${meta.run_name} ended, but its repository ${ledger.root} is gone (removed or moved while the run went on): its record went with it`,
        {
          hint: run.worktree
            ? `its worktree is left at ${run.worktree}: take what you want from it, then remove it (rm -rf it)`
            : 'nothing of the run is left to recover',
        },
      );
    }
    throw new AgentboxError('IO_FAILED', `run ${meta.run_name} ended but could not be recorded: ${message}`, {
      hint: `free disk space or make .agents writable again; then "agentbox status" marks the run CRASHED and "agentbox resume ${meta.run_id}" continues it`,
    });
  }
}
