import fs from 'node:fs';
import path from 'node:path';
import { withoutModelCredentials } from '../../claude/model-key.js';
import { removeWorktree } from '../../git/worktree.js';
import { EventLog } from '../../ledger/events.js';
import type { Failure, Ledger, RunMeta, RunSetup, RunState, RunStatus } from '../../ledger/index.js';
import { HEARTBEAT_MS, heartbeat, readState, updateState } from '../../ledger/index.js';
import type { RunProgress } from '../../present/live.js';
import { nextStep } from '../../present/next-step.js';
import { type CommandResult, type CommandSandbox, runProjectCommand } from '../../sandbox/command.js';
import { fixWritable, type RunSandbox } from '../../sandbox/prepare.js';
import { refusedHosts } from '../../sandbox/refused-hosts.js';
import { writeAtomic } from '../../util/fs.js';
import type { Finalized } from '../end/finalize.js';
import { renderEndReport } from '../end/report.js';

/** `runs.setup` as a run uses it. */
export interface SetupConfig {
  readonly command: string;
  readonly timeoutMs: number;
  /** Hosts only the setup may reach (`runs.setup_domains`), besides the run's own. */
  readonly domains: readonly string[];
}

/** Where its output goes, relative to the run folder. */
export const SETUP_LOG = 'raw/setup.log';

/**
 * Whether the setup runs now: once per worktree, before claude first starts in it. A resumed or
 * replayed run skips it (its worktree, ignored files included, is kept), unless it never finished
 * (agentbox died during it, or runs.setup was set after the run began). Pure.
 */
export function setupDue(
  setup: SetupConfig | null | undefined,
  worktree: string | null,
  state: RunState,
): boolean {
  return Boolean(setup && worktree && state.setup?.ok !== true);
}

/**
 * The fence around the setup: the agent's (its worktree, private git and temp dir; not the run's
 * commands, settings and templates; not the ledger or secrets) plus the main tree to read, and the
 * network of the run plus `runs.setup_domains`. Pure but for which paths exist (see src/sandbox/settings.ts).
 */
export function setupSandbox(
  box: RunSandbox,
  worktree: string,
  ledgerDir: string,
  domains: readonly string[],
): CommandSandbox {
  const own = ['.claude/settings.json', '.claude/settings.local.json', '.claude/commands', '.agentbox'];
  return {
    writable: fixWritable(worktree, box),
    denyWrite: [
      box.mainGitDir,
      ...box.runtimeWritable,
      ...own.map((p) => path.join(worktree, p)).filter((p) => fs.existsSync(p)),
    ],
    // The main tree is opened to the setup (and the ledger inside it stays denied): it copies
    // what the person built there, e.g. node_modules. The agent's own fence hides it.
    denyRead: [ledgerDir, ...box.denyRead.filter((p) => p !== box.mainTree)],
    allowRead: [...box.allowRead, ...(box.mainTree ? [box.mainTree] : [])],
    allowedDomains: [...new Set([...box.allowedDomains, ...domains])],
    tmpDir: box.sockDir,
  };
}

/**
 * The setup's environment: the agent's without the model's credentials, plus where the main
 * tree is (to copy an ignored folder from, e.g.
 * `cp -a --reflink=auto "$AGENTBOX_REPO_ROOT/node_modules" .`) and, in the sandbox, where package
 * managers keep their caches: the user's home is read-only there (npm would fail with EROFS on
 * ~/.npm), so the run's own temp dir.
 */
export function setupEnv(
  agentEnv: Record<string, string>,
  repoRoot: string,
  box: RunSandbox | null,
): Record<string, string> {
  return {
    ...withoutModelCredentials(agentEnv),
    AGENTBOX_REPO_ROOT: repoRoot,
    ...(box
      ? {
          npm_config_cache: path.join(box.tmpDir, 'npm-cache'),
          XDG_CACHE_HOME: path.join(box.tmpDir, 'cache'),
        }
      : {}),
  };
}

export interface SetupStepInput {
  readonly ledger: Ledger;
  readonly meta: RunMeta;
  readonly runDir: string;
  readonly worktree: string;
  readonly setup: SetupConfig;
  readonly env: Record<string, string>;
  readonly sandbox: CommandSandbox | null;
  /** Where the srt settings file goes (agentbox's private folder). */
  readonly privateDir: string;
  readonly onInterrupt?: (stop: (by: string) => void) => () => void;
  readonly onProgress?: (progress: RunProgress) => void;
  /** When the run (this process's part of it) started, for the live line's clock. */
  readonly startedAt: number;
}

/**
 * Runs `runs.setup` in the run's new worktree before claude starts: events setup_started and
 * setup_finished, state.json `setup`, its output in raw/setup.log, heartbeats meanwhile (a long
 * `npm ci` is not a stall). Returns null when it passed; otherwise the run has ended — FAILED
 * (kind setup), or ABORTED when it was stopped — without claude, and its worktree and branch are
 * gone (nothing of the agent's was in them), as after any start that failed.
 */
export async function runSetupStep(input: SetupStepInput): Promise<Finalized | null> {
  const { ledger, meta, setup } = input;
  const log = new EventLog(input.runDir);
  log.append({ event: 'setup_started', command: setup.command });
  const report = (end?: CommandResult) =>
    input.onProgress?.({
      step: 'setup',
      command: setup.command,
      elapsedMs: Date.now() - input.startedAt,
      ...(end ? { end } : {}),
    });
  report();
  const beat = () => void updateState(ledger, meta.run_name, heartbeat(new Date())).catch(() => {});
  beat();
  const beating = setInterval(beat, HEARTBEAT_MS);
  const abort = new AbortController();
  let stoppedBy: string | null = null;
  const unsubscribe = input.onInterrupt?.((by) => {
    stoppedBy ??= by;
    abort.abort();
  });
  let result: CommandResult;
  try {
    result = await runProjectCommand({
      command: setup.command,
      cwd: input.worktree,
      env: input.env,
      sandbox: input.sandbox,
      settingsFile: path.join(input.privateDir, 'setup-sandbox.json'),
      logFile: path.join(input.runDir, SETUP_LOG),
      timeoutMs: setup.timeoutMs,
      signal: abort.signal,
    });
  } finally {
    clearInterval(beating);
    unsubscribe?.();
  }
  const record: RunSetup = {
    command: setup.command,
    ok: result.ok,
    exit_code: result.exitCode,
    timed_out: result.timedOut,
    duration_ms: result.durationMs,
    log: SETUP_LOG,
  };
  log.append({ event: 'setup_finished', ...record });
  report(result);
  await updateState(ledger, meta.run_name, { setup: record });
  if (result.ok) return null;
  return endBeforeClaude(input, result, stoppedBy);
}

/**
 * How a setup that did not pass is told: the command, how it ended, where its output is; when the
 * sandbox's proxy refused a host, that, and the line of agentbox.yaml that lets the setup reach it
 * (issue 38: "try the command in your own tree" was the hint, where it worked). Pure.
 */
export function setupFailure(
  result: CommandResult,
  logPath: string,
  stoppedBy: string | null,
  setupDomains: readonly string[] = [],
): Failure {
  const how = stoppedBy
    ? `was stopped by ${stoppedBy}`
    : result.timedOut
      ? `timed out after ${Math.round(result.durationMs / 1000)}s (runs.setup_timeout)`
      : result.exitCode === null
        ? `could not start (${result.excerpt.split('\n')[0]})`
        : `failed with exit code ${result.exitCode}`;
  const refused = stoppedBy || result.ok ? null : refusedHosts(result.excerpt);
  const hosts = refused?.hosts.filter((h) => !setupDomains.includes(h)) ?? [];
  const named = hosts.length > 0 ? hosts.join(', ') : 'a host (its name is in the log)';
  const network = refused ? `: the sandbox's network allowlist refused ${named}` : '';
  const line = `setup_domains: [${[...new Set([...setupDomains, ...(hosts.length > 0 ? hosts : ['<host>'])])].join(', ')}]`;
  return {
    kind: 'setup',
    message: `runs.setup "${result.command}" ${how}${network}; its output is in ${logPath}; claude was not started`,
    ...(refused
      ? {
          next: `let the setup reach ${hosts.length > 0 ? hosts.join(', ') : 'it'}: in agentbox.yaml, under runs:, write  ${line}  (runs.setup_domains: only the setup reaches them, not the agent), then agentbox trust and start the run again`,
        }
      : {}),
  };
}

async function endBeforeClaude(
  input: SetupStepInput,
  result: CommandResult,
  stoppedBy: string | null,
): Promise<Finalized> {
  const { ledger, meta } = input;
  const status: RunStatus = stoppedBy ? 'ABORTED' : 'FAILED';
  const failure = setupFailure(
    result,
    path.relative(ledger.root, result.logFile),
    stoppedBy,
    input.setup.domains,
  );
  const state = readState(input.runDir);
  let removed = true;
  let left = 'Its worktree and branch were removed: the agent never worked in them.';
  try {
    await removeWorktree(ledger.root, {
      path: input.worktree,
      branch: state?.branch ?? null,
      deleteBranch: true,
    });
  } catch (error) {
    removed = false;
    left = `Its worktree is kept at ${input.worktree} (it could not be removed: ${(error as Error).message}).`;
  }
  const tail = result.excerpt.split('\n').slice(-20).join('\n').replace(/```/g, "'''");
  const next = `Next: ${nextStep(status, meta.run_id, failure)}. ${left}\n\nThe end of the setup's output:\n\n\`\`\`text\n${tail}\n\`\`\``;
  await writeAtomic(
    path.join(input.runDir, 'report.md'),
    renderEndReport({ meta, status, detail: `${failure.kind}: ${failure.message}`, next }),
  );
  await updateState(
    ledger,
    meta.run_name,
    {
      status,
      failure,
      ended_at: new Date().toISOString(),
      ...(removed ? { worktree_path: null, branch: null } : {}),
    },
    { event: 'ended', detail: `${status}: ${failure.kind}` },
  );
  return {
    name: meta.run_name,
    status,
    failure,
    files: [SETUP_LOG, 'report.md'],
    changes: null,
    result: null,
    toolCalls: 0,
    denials: [],
    durationMs: Date.now() - input.startedAt,
    resultCommit: null,
  };
}
