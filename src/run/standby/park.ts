import { createHash } from 'node:crypto';
import os from 'node:os';
import { spawnClaude } from '../../claude/spawn.js';
import { claudeConfigDir } from '../../claude/transcript.js';
import { EventLog } from '../../ledger/events.js';
import { readRun } from '../../ledger/index.js';
import { servedForAnother } from '../../process/owner.js';
import { LINEAGE_VAR } from '../../process/reap.js';
import { ownPrivateBase, sweepOrphanedSecrets } from '../../sandbox/private.js';
import { claudeEnv } from '../begin/claude-env.js';
import type { ExecuteInput } from '../begin/input.js';
import {
  type ClaimedClaude,
  type LaunchPlan,
  type PreparedRun,
  planRunLaunch,
  prepareRun,
  type StartedClaude,
} from '../begin/prepare.js';
import { stamp, startupFingerprint } from './fingerprint.js';
import { type Held, keep, take } from './store.js';

/*
 * A standby: the claude of a fix run's next revision, started while the person reviews. A resident
 * agentbox (docs/resident.md) that has just brought a fix run to REVIEW prepares the run's next
 * revision as `agentbox revise` would (its harness, endpoint, private area and sandbox, its
 * arguments, with `--resume <session>`) and starts its claude, which waits for its turn on standard
 * input (`--input-format=stream-json`) having done its start (~400 ms: its sandbox, its session
 * read). A revision of that run served by the same agentbox takes it, bound to the revision's own
 * supervisor and log, and sends it the review: the revision starts at claude's first model call.
 * Taken only when it is exactly what the revision would have started (its arguments, environment
 * and settings, and what claude read at its start: the session, CLAUDE.md and settings, the git
 * status); anything else lets it go and the revision starts its own.
 */

/** The turn a standby is prepared with; never sent (the revision's own goes on its standard input). */
const NOT_SENT = 'standby: the revision’s message replaces this';
/** The most of a waiting claude's output kept for its run. */
const HELD_BYTES = 1024 * 1024;

interface Standby extends Held, StartedClaude {
  /** Its claude has not ended. */
  alive(): boolean;
  readonly key: string;
  readonly fingerprint: string;
  readonly prepared: PreparedRun;
  readonly plan: LaunchPlan;
}

/**
 * Whether a run ending in REVIEW leaves a standby: a fix run served by a resident agentbox, unless
 * `AGENTBOX_STANDBY=0`. Asked while the run's command is served (not in the work after its reply).
 */
export function standbyWanted(input: ExecuteInput): boolean {
  const off = ['0', 'off', 'false', 'no'].includes(input.env.AGENTBOX_STANDBY?.trim().toLowerCase() ?? '');
  // An attempt of a group (`fix --attempts N`) is not revised until it is chosen: not on its first run.
  const attempt = input.state.summary?.group !== undefined && input.resume?.message === undefined;
  return servedForAnother() && !off && input.meta.type === 'fix' && !attempt;
}

/**
 * What a standby's harness is made of (its environment, configuration, run and Claude Code), as
 * one digest; not the lineage each command gives its processes (src/process/reap.ts).
 */
function keyOf(input: ExecuteInput): string {
  const env = Object.entries(input.env)
    .filter(([name]) => name !== LINEAGE_VAR)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  const { ledger, meta, state, sandbox, claudeBin, envPass } = input;
  // Claude Code updated in place (npm update) is another claude at the same path.
  const bin = stamp(claudeBin);
  const of = { env, root: ledger.root, meta, worktree: state.worktree_path, sandbox, bin, envPass };
  return createHash('sha256').update(JSON.stringify(of)).digest('hex');
}

/** What claude read at its start, for the run prepared: see fingerprint.ts. */
function fingerprintOf(run: PreparedRun): Promise<string> {
  return startupFingerprint({
    launchDir: run.launchDir,
    env: run.launch.env,
    configDir: claudeConfigDir(run.launch.env, os.homedir()),
    sessionId: run.sessionId,
  });
}

/**
 * After a served fix run or revision ended in REVIEW (`finished`): its next revision's claude,
 * started and kept (src/run/standby/store.ts). What fails here is logged and costs nothing else.
 */
export async function parkNextRevision(finished: ExecuteInput): Promise<void> {
  const { meta, state } = readRun(finished.ledger, finished.meta.run_name);
  if (state?.status !== 'REVIEW' || !state.session_id || !state.worktree_path) return;
  const input: ExecuteInput = {
    ...pick(finished),
    meta,
    state,
    resume: { message: NOT_SENT },
  };
  const log = new EventLog(`${finished.ledger.runsDir}/${meta.run_name}`);
  let prepared: PreparedRun | null = null;
  try {
    // What a standby of a server killed outright left (its settings, its model key) goes first.
    sweepOrphanedSecrets(ownPrivateBase());
    prepared = await prepareRun(input, { streamInput: true });
    await keep(await startStandby(input, prepared));
  } catch (error) {
    await prepared?.harness.release();
    log.append({ event: 'standby', detail: `not kept: ${(error as Error).message}` });
  }
}

/** The parts of a finished run's input that its next revision is started with (no callbacks). */
function pick(i: ExecuteInput): ExecuteInput {
  const { ledger, meta, state, env, claudeBin, envPass, sandbox, timeoutMs, supervisor } = i;
  return {
    ledger,
    meta,
    state,
    env,
    claudeBin,
    envPass,
    sandbox,
    timeoutMs,
    supervisor,
    ...(i.trust ? { trust: i.trust } : {}),
    ...(i.maxCostUsd !== undefined ? { maxCostUsd: i.maxCostUsd } : {}),
    ...(i.checks ? { checks: i.checks } : {}),
  };
}

/** Starts the prepared run's claude, waiting for its turn; its output is held until a run reads it. */
async function startStandby(input: ExecuteInput, prepared: PreparedRun): Promise<Standby> {
  const fingerprint = await fingerprintOf(prepared);
  const plan = planRunLaunch(input, prepared, true);
  // What claude writes while it waits (nothing, measured), held for the run; at most HELD_BYTES.
  const held: { out: Buffer[]; err: Buffer[]; bytes: number } = { out: [], err: [], bytes: 0 };
  const hold = (into: Buffer[]) => (chunk: Buffer) => {
    held.bytes += chunk.length;
    if (held.bytes <= HELD_BYTES) into.push(chunk);
  };
  let onOut: (chunk: Buffer) => void = hold(held.out);
  let onErr: (chunk: Buffer) => void = hold(held.err);
  const child = spawnClaude(input.claudeBin, prepared.launch.args, {
    cwd: prepared.launchDir,
    env: await claudeEnv(input, prepared),
    stdin: 'pipe',
    onStdout: (chunk) => onOut(chunk),
    onStderr: (chunk) => onErr(chunk),
  });
  let alive = true;
  void child.exited.then(() => {
    alive = false;
  });
  const { ledger, meta } = input;
  const log = prepared.log;
  log.append({ event: 'standby', detail: `claude ${child.pid ?? '?'} kept ready for the next revision` });
  return {
    root: ledger.root,
    run: meta.run_name,
    key: keyOf(input),
    fingerprint,
    prepared,
    plan,
    child,
    attach(out, err) {
      for (const chunk of held.out.splice(0)) out(chunk);
      for (const chunk of held.err.splice(0)) err(chunk);
      onOut = out;
      onErr = err;
    },
    alive: () => alive,
    unwanted: () => {
      if (!alive) return 'its claude ended';
      try {
        return readRun(ledger, meta.run_name).state?.status === 'REVIEW'
          ? null
          : 'its run is no longer waiting for review';
      } catch {
        return 'its run is gone (its folder or repository removed)';
      }
    },
    async letGo(why) {
      await child.stop();
      await prepared.harness.release();
      log.append({ event: 'standby', detail: `let go: ${why}` });
    },
  };
}

/**
 * The standby kept for this revision, when it is exactly what the revision would start: its
 * harness then serves the revision (bound to its own supervisor and log by prepareRun). Anything
 * else lets it go (logged) and returns null: the revision starts its own claude.
 */
export async function claimStandby(input: ExecuteInput): Promise<ClaimedClaude | null> {
  if (input.resume?.message === undefined || !servedForAnother()) return null;
  const standby = take(input.ledger.root, input.meta.run_name) as Standby | null;
  if (!standby) return null;
  const why = await unfit(standby, input);
  if (why) {
    await standby.letGo(`not used: ${why}`);
    return null;
  }
  const { prepared } = standby;
  const plan = planRunLaunch(input, prepared, true);
  prepared.harness.defer(() => standby.child.stop());
  prepared.log.append({ event: 'standby', detail: `claude ${standby.child.pid ?? '?'} takes the revision` });
  return { harness: prepared.harness, plan, child: standby.child, attach: standby.attach };
}

/** Why `standby` cannot serve this revision; null when it can. */
async function unfit(standby: Standby, input: ExecuteInput): Promise<string | null> {
  if (!standby.alive()) return 'its claude has ended';
  if (standby.key !== keyOf(input)) return 'the environment, configuration or run changed';
  const plan = planRunLaunch(input, standby.prepared, true);
  const same = (a: LaunchPlan) =>
    JSON.stringify([a.args, { ...a.env, [LINEAGE_VAR]: null }, a.settings, a.modelKey]);
  if (same(plan) !== same(standby.plan)) return 'its launch would differ';
  if ((await fingerprintOf(standby.prepared)) !== standby.fingerprint)
    return 'the session, CLAUDE.md, settings or git status changed since it started';
  return null;
}
