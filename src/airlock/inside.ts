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
  if (own) return own;
  const seen = new Set<number>();
  for (let pid = reader.ppid(selfPid); pid !== null && pid > 1 && !seen.has(pid); pid = reader.ppid(pid)) {
    seen.add(pid);
    const found = judge(reader.environ(pid) ?? []);
    if (found) return found;
  }
  return null;
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
};
