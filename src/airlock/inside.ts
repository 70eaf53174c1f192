import fs from 'node:fs';

/**
 * Whether this process runs inside an agent's session, judged from what the agent cannot change:
 * the environments of this process's ancestors (a process cannot rewrite its parent's), not only
 * its own (`env -u` clears those). Claude Code sets CLAUDECODE=1 for what it starts; agentbox
 * starts claude with AGENTBOX_RUN and a process mark. Pure over a `ProcReader`.
 * NOTE: a process that detaches from its parents (setsid and a double fork) and clears its own
 * environment is reparented to init and escapes this check. In a fix run the sandbox still holds it
 * (the ledger and the main repository's git are out of its reach); in an interactive session, which
 * has no sandbox, the person approves each command it runs.
 */
export interface ProcReader {
  ppid(pid: number): number | null;
  environ(pid: number): readonly string[] | null;
  /** The process's argument vector; null when unreadable. */
  cmdline?(pid: number): readonly string[] | null;
}

export interface InsideRun {
  /** Who it is, for the refusal: "agentbox run <name>" or "a Claude Code session". */
  readonly what: string;
  /** The run whose agent tried it, when known. */
  readonly run: string | null;
  /** That run's RUN_DIR (where a refusal can be recorded from inside its sandbox), when known. */
  readonly runDir?: string;
}

function judge(vars: readonly string[]): InsideRun | null {
  const get = (name: string) => vars.find((v) => v.startsWith(`${name}=`))?.slice(name.length + 1);
  const run = get('AGENTBOX_RUN');
  const runDir = get('AGENTBOX_RUN_DIR');
  if (run) return { what: `agentbox run ${run}`, run, ...(runDir ? { runDir } : {}) };
  if (get('AGENTBOX_PROCESS_MARK')) return { what: 'a process started by an agentbox run', run: null };
  if (get('CLAUDECODE')) return { what: 'a Claude Code session', run: null };
  return null;
}

/**
 * Claude Code's sandbox: a bwrap whose command line sets SANDBOX_RUNTIME. Inside it the ancestors'
 * environments cannot be read (measured: EACCES on /proc/<pid>/environ), but bwrap's own command
 * line can, and no process inside can change it. The run is named by the private temp folder
 * agentbox gives it (`…/agentbox-<uid>/work/<run>/tmp`, src/sandbox/private.ts).
 */
function judgeSandbox(argv: readonly string[]): InsideRun | null {
  if (!/(^|\/)bwrap$/.test(argv[0] ?? '')) return null;
  const setenv = (name: string) => {
    for (let i = 0; i + 2 < argv.length; i++)
      if (argv[i] === '--setenv' && argv[i + 1] === name) return argv[i + 2];
    return undefined;
  };
  if (setenv('SANDBOX_RUNTIME') === undefined) return null;
  const run = /\/agentbox-\d+\/work\/([^/]+)\/tmp$/.exec(setenv('TMPDIR') ?? '')?.[1] ?? null;
  return run
    ? { what: `the sandbox of agentbox run ${run}`, run }
    : { what: "a command in Claude Code's sandbox", run: null };
}

export function insideRun(
  env: Readonly<Record<string, string | undefined>>,
  selfPid: number,
  reader: ProcReader,
): InsideRun | null {
  const own = judge(
    Object.entries(env)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}=${v}`),
  );
  let found = own;
  // The first mark decides; the run it belongs to may only be named further up (`env -u
  // AGENTBOX_RUN` clears it here, not in the ancestors): look on for it, so the refusal is
  // recorded in that run.
  const seen = new Set<number>();
  for (let pid = reader.ppid(selfPid); pid !== null && pid >= 1 && !seen.has(pid); pid = reader.ppid(pid)) {
    if (found?.run) break;
    seen.add(pid);
    const here = judge(reader.environ(pid) ?? []) ?? judgeSandbox(reader.cmdline?.(pid) ?? []);
    if (!here) continue;
    found = found && !here.run ? found : here;
  }
  return found;
}

/** The ProcReader of this machine (Linux /proc); elsewhere it sees no ancestors. */
export const procReader: ProcReader = {
  ppid(pid) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      return Number.isInteger(ppid) ? ppid : null;
    } catch {
      return null;
    }
  },
  environ(pid) {
    try {
      return fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    } catch {
      return null;
    }
  },
  cmdline(pid) {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      return null;
    }
  },
};
