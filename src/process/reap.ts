import fs from 'node:fs';

/** The environment variable that marks every process a run starts (children inherit it). */
export const MARK_VAR = 'AGENTBOX_PROCESS_MARK';

/**
 * The environment variable every process agentbox starts carries, whatever else its environment
 * loses (the supervisor's `claude -p` gets none of agentbox's other variables): set by the caller
 * to find everything a tree of agentbox commands started, else one per command.
 */
export const LINEAGE_VAR = 'AGENTBOX_LINEAGE';

export function newLineage(): string {
  return `agentbox-${process.pid}-${Date.now().toString(36)}`;
}

/**
 * Pids of live processes whose environment carries `MARK_VAR=<mark>`. Linux only (/proc); elsewhere
 * it finds nothing and the process-group kill is all there is.
 * NOTE: Claude Code runs each Bash command in a session of its own, so `(sleep 300 &)` escapes
 * claude's process group; only this marker finds it.
 */
export function markedProcesses(mark: string): number[] {
  const needle = Buffer.from(`${MARK_VAR}=${mark}\0`);
  const found: number[] = [];
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      if (readEnviron(entry).includes(needle)) found.push(pid);
    } catch {
      // Gone, or not ours to read.
    }
  }
  return found;
}

/** One buffer for every environment read; it grows for a larger one. */
let scratch = Buffer.allocUnsafe(64 * 1024);

/**
 * /proc/<pid>/environ, in `scratch` (valid until the next call). NOTE: a sweep reads every
 * process's, several sweeps follow each owned child's exit, and fs.readFileSync gives a file that
 * says size 0 a fresh 64 KiB buffer: with 8 attempts in one process (a group) that was hundreds of
 * MB of buffers made and dropped, which showed in agentbox's peak RSS (bench/group.bench.ts).
 */
function readEnviron(pid: string): Buffer {
  const fd = fs.openSync(`/proc/${pid}/environ`, 'r');
  try {
    for (let got = 0; ; ) {
      if (got === scratch.length) {
        const bigger = Buffer.allocUnsafe(scratch.length * 2);
        scratch.copy(bigger);
        scratch = bigger;
      }
      const n = fs.readSync(fd, scratch, got, scratch.length - got, null);
      if (n === 0) return scratch.subarray(0, got);
      got += n;
    }
  } finally {
    fs.closeSync(fd);
  }
}

export function killMarked(mark: string, signal: NodeJS.Signals = 'SIGKILL'): number {
  let count = 0;
  for (const pid of markedProcesses(mark)) {
    try {
      process.kill(pid, signal);
      count++;
    } catch {
      // Already gone.
    }
  }
  return count;
}

/** Start time of a pid (clock ticks since boot, field 22 of /proc/<pid>/stat), or null. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * Whether `pid` is still the process that was recorded: alive and started at `start` (a pid alone
 * can be reused by an unrelated process). A null `start` (a platform without /proc, or a state
 * written before start times were recorded) can only be checked for being alive.
 */
export function isAlive(pid: number | null | undefined, start: string | null | undefined): boolean {
  // NOTE: -1 is every process this user may signal, 0 our own group, 1 init: never a run's pid, and
  // `kill(-1, 0)` succeeds, so a state naming it looked alive (src/ledger/check.ts takes any integer).
  if (!pid || pid <= 1) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return !start || processStartTime(pid) === start;
}

/**
 * Whether agentbox may signal `pid` as the process a state records: alive, and, where this system
 * records start times (/proc), started at the recorded `start` — a pid without one is refused.
 *
 * NOTE: state.json is a file of the ledger, which a cloned repository can carry (`.agents/` added
 * with `git add -f`). A planted ACTIVE run naming a pid of the person's and no start time passed
 * isAlive (`!start`), and the page's Stop, `agentbox stop` or recovery's orphan check signalled it.
 */
export function isRecordedProcess(pid: number | null | undefined, start: string | null | undefined): boolean {
  if (!start && processStartTime(process.pid) !== null) return false;
  return isAlive(pid, start);
}
