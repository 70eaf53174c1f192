import fs from 'node:fs';
import path from 'node:path';
import { MIN_STALL_MS } from '../config/duration.js';
import { recordedSocket } from '../interactive/socket-path.js';
import { activeDir, activeRunNames, unmarkActive } from '../ledger/active.js';
import type { Ledger } from '../ledger/paths.js';
import { readState, type StatePatch } from '../ledger/state.js';
import type { RunState } from '../ledger/types.js';
import { isAlive, isRecordedProcess, killMarked } from '../process/reap.js';
import { crashedArea, ownPrivateBase, removeCrashedArea } from '../sandbox/private.js';
import { identity } from '../util/fs.js';
import { writeCrashReport } from './crash-report.js';
import { COMMAND_DIR_RE } from './probe.js';

/**
 * The watchdog, run at the start of every agentbox command: ACTIVE or STALLED runs whose supervisor
 * is gone become CRASHED (an orphaned claude is ended), ACTIVE runs whose supervisor has not reported for
 * `stallMs` become STALLED, and the slash commands of runs that are no longer ACTIVE are deleted.
 * Its cost follows the number of ACTIVE runs (`.agents/active/`), never the number of runs.
 */
export interface WatchdogFinding {
  /** A run's name, or a group's (kind 'group'). */
  readonly run: string;
  readonly kind?: 'group';
  readonly action: 'crashed' | 'stalled' | 'commands_removed' | 'marker_dropped';
  readonly detail: string;
}

export interface WatchdogOptions {
  /** How long without a heartbeat makes a live run STALLED; read lazily, only when one is that old. */
  readonly stallMs: () => number | Promise<number>;
  readonly now?: number;
  /** Waits this long for an orphaned claude to exit after SIGTERM before SIGKILL. */
  readonly orphanGraceMs?: number;
  /**
   * Test seam: awaited between a crashed run's report and its CRASHED mark, so a test can hold the
   * window open while another process (a second watchdog, a resume) acts on the same run.
   */
  readonly beforeMark?: (run: string) => Promise<void>;
}

/** A heartbeat younger than this is never stale, whatever the configuration says: no config is read. */
export { MIN_STALL_MS };

export async function runWatchdog(ledger: Ledger, options: WatchdogOptions): Promise<WatchdogFinding[]> {
  const now = options.now ?? Date.now();
  const findings: WatchdogFinding[] = [];
  // NOTE: the commands folder is listed before the markers: a run writes its marker before its
  // commands, so any commands seen here belong to a run whose marker the next read will see.
  const commandIds = listCommandIds(ledger.root);
  let stallMs: number | undefined;
  const live = new Set<string>();
  const groups = new Set<string>(); // of attempts found crashed: the process that died is theirs
  for (const name of activeRunNames(ledger)) {
    const dir = path.join(ledger.runsDir, name);
    let state: RunState | null;
    try {
      state = readState(dir);
    } catch {
      // A damaged state.json is `agentbox show`'s to report; leave the run alone.
      live.add(name.slice(-6));
      continue;
    }
    if (state?.status !== 'ACTIVE' && state?.status !== 'STALLED') {
      // NOTE: a marker is written just before its state says ACTIVE (a run being created or
      // resumed right now): only a marker that has been wrong for a while is dropped.
      if (markerAge(ledger, name, now) < MIN_STALL_MS) {
        live.add(name.slice(-6));
        continue;
      }
      unmarkActive(ledger, name);
      findings.push({ run: name, action: 'marker_dropped', detail: state ? state.status : 'no state.json' });
      continue;
    }
    const judged = await judgeLive(ledger, name, state, now, options, async () => {
      stallMs ??= await options.stallMs();
      return stallMs;
    });
    if (judged) findings.push(judged);
    else live.add(name.slice(-6));
    if (judged?.action === 'crashed' && state.summary?.group) groups.add(state.summary.group.id);
  }
  if (groups.size > 0) findings.push(...(await markGroups(ledger, groups)));
  const handled = new Set(findings.map((f) => f.run.slice(-6)));
  for (const id of commandIds) {
    if (live.has(id) || handled.has(id)) continue;
    fs.rmSync(path.join(ledger.root, '.claude', 'commands', `run_${id}`), { recursive: true, force: true });
    findings.push({ run: id, action: 'commands_removed', detail: `.claude/commands/run_${id}` });
  }
  return findings;
}

/**
 * An ACTIVE or STALLED run: CRASHED when its supervisor is gone, STALLED when it has been silent
 * past the threshold (asked for only then); null when it is left as it is (or another process
 * took it up meanwhile).
 */
async function judgeLive(
  ledger: Ledger,
  name: string,
  state: RunState,
  now: number,
  options: WatchdogOptions,
  stallMs: () => Promise<number>,
): Promise<WatchdogFinding | null> {
  // No pid recorded: liveness cannot be judged, only silence (below).
  if (state.pid !== null && !isAlive(state.pid, state.pid_start))
    return markCrashed(ledger, name, state, options);
  // STALLED already: it is watched only for its process dying (above); a heartbeat wakes it.
  if (state.status === 'STALLED') return null;
  const silentFor = now - Date.parse(state.last_heartbeat ?? state.started_at);
  if (silentFor <= MIN_STALL_MS) return null;
  const threshold = await stallMs();
  return silentFor > threshold ? markStalled(ledger, name, state, silentFor, threshold) : null;
}

async function markGroups(ledger: Ledger, ids: ReadonlySet<string>): Promise<WatchdogFinding[]> {
  const { markGroupCrashed } = await import('./group.js');
  const found: WatchdogFinding[] = [];
  for (const id of ids) {
    const name = await markGroupCrashed(ledger, id);
    if (name)
      found.push({
        run: name,
        kind: 'group',
        action: 'crashed',
        detail: `its process is gone; agentbox recover takes it up (agentbox recover ${id})`,
      });
  }
  return found;
}

function markerAge(ledger: Ledger, name: string, now: number): number {
  try {
    return now - fs.statSync(path.join(activeDir(ledger), name)).mtimeMs;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

function listCommandIds(root: string): string[] {
  try {
    return fs
      .readdirSync(path.join(root, '.claude', 'commands'))
      .map((entry) => COMMAND_DIR_RE.exec(entry)?.[1])
      .filter((id): id is string => id !== undefined);
  } catch {
    return [];
  }
}

/**
 * Applies `patch` only if the run is still exactly as the watchdog saw it: a run that another
 * process took up meanwhile (resume, recover) is not marked again. True when it was applied.
 */
async function markIfUnchanged(
  ledger: Ledger,
  name: string,
  seen: RunState,
  patch: StatePatch,
  detail: string,
): Promise<boolean> {
  const { updateState } = await import('../ledger/update.js');
  let applied = false;
  await updateState(
    ledger,
    name,
    (current) => {
      const same =
        current.status === seen.status &&
        current.pid === seen.pid &&
        current.pid_start === seen.pid_start &&
        current.last_heartbeat === seen.last_heartbeat;
      applied = same;
      return same ? patch : null;
    },
    { event: 'watchdog', detail },
  );
  return applied;
}

async function markCrashed(
  ledger: Ledger,
  name: string,
  state: RunState,
  options: WatchdogOptions,
): Promise<WatchdogFinding | null> {
  const orphan = isAlive(state.claude_pid, state.claude_pid_start);
  const detail = [
    `the supervisor (pid ${state.pid ?? '?'}) is gone`,
    ...(orphan ? [`its orphaned claude (pid ${state.claude_pid}) was ended`] : []),
  ].join('; ');
  // The report goes first: whoever sees the run CRASHED finds its report too. It is never taken
  // back: another watchdog may have marked the run CRASHED meanwhile, counting on this very report
  // (a second writer finds it there and writes none), and a run taken up by resume gets its own
  // report when it ends. What it says stays true either way: the supervisor died.
  const runDir = path.join(ledger.runsDir, name);
  // What the crashed run left, taken now: once it is marked CRASHED a resume may make its next
  // area, socket and commands, which the removals below must not take (its claude found no
  // settings file). Only what is still the same one then goes.
  const left = crashedArea(ownPrivateBase(), name);
  const socket = recordedSocket(runDir, name.slice(-6), state.socket_path);
  const leftSocket = socket && identity(socket);
  const commands = commandDirs(ledger, name, state).map((dir) => [dir, identity(dir)] as const);
  writeCrashReport(runDir, name, state, detail);
  await options.beforeMark?.(name);
  const applied = await markIfUnchanged(
    ledger,
    name,
    state,
    {
      status: 'CRASHED',
      ended_at: new Date().toISOString(),
      failure: { kind: 'crashed', message: detail },
      claude_pid: null,
      claude_pid_start: null,
      endpoint_url: null,
      socket_path: null,
    },
    detail,
  );
  if (!applied) return null;
  if (orphan) await endOrphan(state, options.orphanGraceMs ?? 1000);
  // Claude is gone now, but what it started in the background may not be.
  else if (state.process_mark) killMarked(state.process_mark);
  // Only a socket where agentbox puts one: a planted state's socket_path named any file (socket-path.ts).
  if (socket && identity(socket) === leftSocket) fs.rmSync(socket, { force: true });
  for (const [dir, was] of commands)
    if (was !== null && identity(dir) === was) fs.rmSync(dir, { recursive: true, force: true });
  // Its private copies of the model key and the endpoint's token, and its sockets, are not left on disk.
  removeCrashedArea(ownPrivateBase(), name, left);
  return { run: name, action: 'crashed', detail };
}

async function markStalled(
  ledger: Ledger,
  name: string,
  state: RunState,
  silentFor: number,
  stallMs: number,
): Promise<WatchdogFinding | null> {
  const { formatDuration } = await import('../config/duration.js');
  const detail = `no heartbeat for ${formatDuration(silentFor)} (threshold ${formatDuration(stallMs)}); its supervisor (pid ${state.pid}) is alive but silent`;
  const applied = await markIfUnchanged(
    ledger,
    name,
    state,
    { status: 'STALLED', failure: { kind: 'stalled', message: detail } },
    detail,
  );
  if (!applied) return null;
  for (const dir of commandDirs(ledger, name, state)) fs.rmSync(dir, { recursive: true, force: true });
  return { run: name, action: 'stalled', detail };
}

/** SIGTERM to claude's process group, SIGKILL after the grace period; then whatever it left behind. */
export async function endOrphan(state: RunState, graceMs: number): Promise<void> {
  const pid = state.claude_pid!;
  // Only the claude the state records, by its start time too (a planted state: reap.ts).
  if (!isRecordedProcess(pid, state.claude_pid_start)) return;
  const signal = (sig: NodeJS.Signals) => {
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, sig);
      } catch {
        // Not a group leader, or gone.
      }
    }
  };
  signal('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (isAlive(pid, state.claude_pid_start) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  if (isAlive(pid, state.claude_pid_start)) signal('SIGKILL');
  if (state.process_mark) killMarked(state.process_mark);
}

/** A run's slash commands, wherever claude was started (the repository, a worktree, a --workdir). */
/** The folders of a run's slash commands, where its agentbox put them. */
function commandDirs(ledger: Ledger, name: string, state: RunState): string[] {
  const id = name.slice(-6);
  return [...new Set([ledger.root, state.launch_dir, state.worktree_path])]
    .filter((dir): dir is string => Boolean(dir))
    .map((dir) => path.join(dir, '.claude', 'commands', `run_${id}`));
}
