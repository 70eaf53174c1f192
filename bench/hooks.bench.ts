/**
 * What agentbox's hooks cost per tool call: a scripted session of N tool calls (default 200)
 * through the real Claude Code CLI, with and without agentbox hooks. Target: at most 1.5 ms per tool
 * call for what a real `agentbox fix` run has (the project guard that `agentbox init` writes + the
 * run's --settings exactly as planLaunch builds them), against the same session without any
 * agentbox hook.
 *
 * Variants (each a whole `claude -p … --output-format stream-json --verbose` process, timed from
 * spawn to exit, all in the same fix worktree outside the repository):
 *   none                    no project settings, no --settings
 *   project guard           .claude/settings.json with GUARD_GROUP (three command hooks on Bash,
 *                           each under an `if`), what `agentbox init` installs
 *   agentbox fix run        the project guard + planLaunch's --settings for a sandboxed fix run (hooks:
 *                           guard.writes, history 'stream', everyBashCall false; deny rules left
 *                           out: they are not hooks) + a live endpoint with the real handler and
 *                           Supervisor (mode rules, history fed from the stream as executeRun does)
 *   fix run, sandbox off    the same with the sandbox off: a guard hook on every Write/Edit
 *   agentbox scout run      the same for a scout run (writes: false)
 *   reference: every hook   the project guard + runSettings with everyBashCall and history
 *                           'hooks': a hook on every Bash call and a PostToolUse on every call (the
 *                           earlier design), for comparison only
 * Three tool mixes: N × `Bash true`, N × `Read <worktree>/a.txt`, N × `Write <worktree>/w-<n>.txt`
 * (a new file each). Variants take turns (round-robin, start rotated every round) so load drifts hit
 * all alike; figures are medians of `--runs` rounds; overhead per call = (median variant − median
 * none) / N, and the paired estimate is the median of same-round differences / N.
 *
 * Every timed run is checked: exit 0, N tool results none of them an error, the endpoint saw exactly
 * the hook calls the settings call for, and the supervisor's history got every tool call. First a
 * preflight (also the warm-up) runs every variant × mix once with --include-hook-events, a few mix
 * calls and probes that each `if` condition is meant to catch, and compares the hook_response lines
 * per event and the endpoint's refusals with what the settings say: hooks fire where intended, and
 * only there.
 *
 * Run: `npx tsx bench/hooks.bench.ts [--calls 200] [--runs 5]`. Exits 1 when "agentbox fix run" is
 * over 1.5 ms per call for any mix, 2 when the setup is broken.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { type AirlockScope, judgeToolUse } from '../src/airlock/guard.js';
import { canonical, isInside } from '../src/airlock/paths.js';
import { LineSplitter, parseStreamLine } from '../src/claude/stream.js';
import { type Endpoint, startEndpoint } from '../src/endpoint/server.js';
import { hookAddressBook, runSettings } from '../src/endpoint/settings.js';
import type { RunMeta } from '../src/ledger/types.js';
import { EventLog } from '../src/run/events.js';
import { planLaunch } from '../src/run/launch.js';
import { buildEnvelope } from '../src/run/tier.js';
import { probeSandbox } from '../src/sandbox/available.js';
import type { RunSandbox } from '../src/sandbox/prepare.js';
import { sandboxSettings } from '../src/sandbox/settings.js';
import { GUARD_GROUP } from '../src/settings/managed.js';
import { createRunHookHandler } from '../src/supervisor/hooks.js';
import { toolExcerpt } from '../src/supervisor/prompt.js';
import { Supervisor } from '../src/supervisor/supervisor.js';
import { CLAUDE_BIN, claudeEnv, claudeHome } from '../test/helpers/claude.js';
import { gitRepo, tempDir } from '../test/helpers/git-repo.js';
import { killWithEnv, processesWithEnv } from '../test/helpers/processes.js';
import {
  bump,
  type Call,
  claudeVersion,
  type Expected,
  expectHooks,
  type HookTable,
  loadAverage,
  median,
  renderTable,
} from './hooks-lib.js';

const { values: args } = parseArgs({
  options: {
    calls: { type: 'string', default: '200' },
    runs: { type: 'string', default: '5' },
    'sandbox-calls': { type: 'string', default: '20' },
  },
});
/** Bash calls per session for the sandbox's own figure (each sandboxed command costs far more). */
const SANDBOX_CALLS = Number(args['sandbox-calls']);
const CALLS = Number(args.calls);
const RUNS = Number(args.runs);
if (
  !Number.isInteger(CALLS) ||
  CALLS < 1 ||
  !Number.isInteger(RUNS) ||
  RUNS < 1 ||
  !Number.isInteger(SANDBOX_CALLS) ||
  SANDBOX_CALLS < 0
) {
  console.error(
    'usage: npx tsx bench/hooks.bench.ts [--calls <n ≥ 1>] [--runs <n ≥ 1>] [--sandbox-calls <n ≥ 0, 0: skip>]',
  );
  process.exit(2);
}
const TARGET_MS_PER_CALL = 1.5;
const PREFLIGHT_CALLS = 3;
const RUN_TIMEOUT_MS = 180_000;
const SUPERVISOR_TIMEOUT_MS = 30_000;
const HISTORY_KEPT = 50; // the supervisor keeps the last 50 tool calls
const PROMPT = 'Benchmark session: make the scripted tool calls, then answer.';
/** Every process of this bench carries BENCH_VAR=<tag>; every process of one session RUN_VAR=<mark>. */
const BENCH_VAR = 'AGENTBOX_HOOKS_BENCH';
const RUN_VAR = 'AGENTBOX_HOOKS_BENCH_RUN';
const BENCH_TAG = randomBytes(8).toString('hex');
const TIMES_MARK = '@@hooks-bench-times';
/**
 * claude runs under `sh -c` only for the shell's `times` (POSIX): the CPU of claude and of every
 * process it waited for (its command hooks, the Bash tool's shells). It costs one small shell per
 * run, alike for every variant.
 */
const SH_SCRIPT = `"$0" "$@"; s=$?; printf '\\n${TIMES_MARK}\\n' >&2; times >&2; exit $s`;

interface Variant {
  readonly name: string;
  /** The project guard (`.claude/settings.json` with GUARD_GROUP), as `agentbox init` installs it. */
  readonly guard: boolean;
  /** The run's hooks (--settings) and a live endpoint; null: none. */
  readonly run: null | {
    readonly type: 'fix' | 'scout';
    /** planLaunch: exactly what executeRun passes; every: the reference (everyBashCall, history 'hooks'). */
    readonly settings: 'planLaunch' | 'every';
    /**
     * The run's hooks as planLaunch builds them for a run with Claude Code's sandbox on (the
     * default for a fix run) or off (`sandbox.mode: off`). The sandbox block itself is left out:
     * its cost is measured on its own (see SANDBOX_CALLS).
     */
    readonly sandboxed?: boolean;
  };
}
const VARIANTS: readonly Variant[] = [
  { name: 'none', guard: false, run: null },
  { name: 'project guard', guard: true, run: null },
  { name: 'agentbox fix run', guard: true, run: { type: 'fix', settings: 'planLaunch', sandboxed: true } },
  {
    name: 'fix run, sandbox off',
    guard: true,
    run: { type: 'fix', settings: 'planLaunch', sandboxed: false },
  },
  { name: 'agentbox scout run', guard: true, run: { type: 'scout', settings: 'planLaunch' } },
  { name: 'reference: every hook', guard: true, run: { type: 'fix', settings: 'every' } },
];
const GATED = VARIANTS[2]!;

interface Mix {
  readonly name: 'Bash' | 'Read' | 'Write';
  /** The n-th scripted call (0-based). */
  readonly call: (n: number) => Call;
  readonly allowedTools: string;
}

interface RunResult {
  /** Wall time of the whole process, spawn to exit. */
  readonly ms: number;
  /** CPU (user + system) of claude and everything it waited for. */
  readonly claudeCpuMs: number;
  /** CPU of this process meanwhile: endpoint + stream reader + supervisor (the model server has its own). */
  readonly benchCpuMs: number;
  /** Time spent in the endpoint's handler, summed over the session. */
  readonly handlerMs: number;
  /** Per tool result, in order: was it an error. */
  readonly toolErrors: boolean[];
  /** hook_response lines per event (only with --include-hook-events). */
  readonly hookResponses: Map<string, number>;
  /** Calls the endpoint's handler saw, per event. */
  readonly handled: Map<string, number>;
  /** Refusals by the endpoint, one per refused call. */
  readonly denials: string[];
}

let current: { child: ChildProcess; mark: string } | undefined;
/** Ends the model server's process (see startModelChild), once it runs. */
let closeModel: (() => Promise<void>) | undefined;
/** What to undo at the end, in reverse order: each piece of the fixture registers itself when made. */
const undo: (() => unknown)[] = [];

/** Kills claude's process group and anything still carrying this run's mark (Bash tool children). */
function reap(run: { child: ChildProcess; mark: string }): void {
  if (run.child.pid !== undefined) {
    try {
      process.kill(-run.child.pid, 'SIGKILL');
    } catch {
      // ESRCH: the group is gone.
    }
  }
  killWithEnv(RUN_VAR, run.mark);
}

let cleaned = false;
/** Reaps every process of the bench (returning those still alive) and removes the fixture. */
async function cleanup(): Promise<string[]> {
  if (cleaned) return [];
  cleaned = true;
  if (current) reap(current);
  // The model server (and its esbuild) go first, asked to: they are not left behind.
  await closeModel?.();
  const left = processesWithEnv(BENCH_VAR, BENCH_TAG).map((p) => `${p.pid} ${p.cmdline}`);
  killWithEnv(BENCH_VAR, BENCH_TAG);
  for (const step of undo.reverse()) {
    try {
      await step();
    } catch (error) {
      console.error(`cleanup: ${(error as Error).message}`);
    }
  }
  return left;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}
// A fixture that cannot be built is a broken setup too. NOTE: cleaning up comes first: with the
// output gone (`| head`), printing throws again.
let crashed = false;
process.on('uncaughtException', (error) => {
  if (crashed) return;
  crashed = true;
  void cleanup().finally(() => {
    console.error(`\nbench setup broken: ${error.message}`);
    process.exit(2);
  });
});

/**
 * The scripted model server in a child process (bench/model-child.ts), so that the endpoint and the
 * stream reader here never hold up the model's answers. It carries the bench's tag, to be reaped.
 */
async function startModelChild(): Promise<{
  url: string;
  script: (calls: readonly Call[]) => Promise<void>;
  close: () => Promise<void>;
}> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(import.meta.dirname, 'model-child.ts')],
    {
      env: { ...process.env, [BENCH_VAR]: BENCH_TAG },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  const next = () =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`model server exited with ${code}`));
      child.once('exit', onExit);
      child.once('message', (m) => {
        child.off('exit', onExit);
        resolve(m as Record<string, unknown>);
      });
    });
  const { url } = await next();
  return {
    url: String(url),
    script: async (calls) => {
      const answer = next();
      child.send({ calls });
      await answer;
    },
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.disconnect();
      await exited;
      // Its esbuild service ends when it notices its parent gone; give it the moment.
      for (let i = 0; i < 20 && processesWithEnv(BENCH_VAR, BENCH_TAG).length > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}

// ---- fixture ----------------------------------------------------------------------------------
// The main repository with its ledger, and a fix run's worktree outside it (the default layout).
const repo = gitRepo({ files: { 'a.txt': 'hello from a.txt\n' } });
undo.push(() => repo.cleanup());
const worktreeParent = tempDir('agentbox-worktree-');
undo.push(() => fs.rmSync(worktreeParent, { recursive: true, force: true }));
const worktree = canonical(path.join(worktreeParent, 'bench-run'));
repo.git('worktree', 'add', '--quiet', '-b', 'agentbox/bench-hooks', worktree);
const home = claudeHome();
undo.push(() => home.cleanup());
const server = await startModelChild();
closeModel = server.close;
const guardFile = path.join(worktree, '.claude', 'settings.json');
const projectHooks = { PreToolUse: [GUARD_GROUP] } as unknown as HookTable;
const guardJson = `${JSON.stringify({ hooks: projectHooks }, null, 2)}\n`;
const ledgerDir = path.join(repo.dir, '.agents');
const RUN_ID = 'abc123';
const runName = `2025-01-01-0000-bench-hooks-${RUN_ID}`;
const runDir = path.join(ledgerDir, 'runs', runName);
fs.mkdirSync(path.join(runDir, 'raw'), { recursive: true });
const log = new EventLog(runDir);
const scopes: Record<'fix' | 'scout', AirlockScope> = {
  fix: {
    type: 'fix',
    repoRoot: canonical(repo.dir),
    ledgerDir: canonical(ledgerDir),
    runDir: canonical(runDir),
    worktree,
  },
  scout: {
    type: 'scout',
    repoRoot: canonical(repo.dir),
    ledgerDir: canonical(ledgerDir),
    runDir: canonical(runDir),
    worktree: null,
  },
};
if (isInside(worktree, repo.dir)) throw new Error('the worktree must lie outside the repository');

/** What a fix run's sandbox fences (src/sandbox/prepare.ts), for planLaunch and the sandbox figure. */
const BOX: RunSandbox = {
  gitDir: path.join(runDir, 'git'),
  tmpDir: path.join(runDir, 'tmp'),
  mainGitDir: path.join(repo.dir, '.git'),
  denyRead: [],
  allowedDomains: [],
};

/** Claude Code's sandbox as a fix run gets it (src/sandbox/settings.ts), for its own figure. */
const SANDBOX_BLOCK = sandboxSettings({
  writable: [worktree, BOX.gitDir, BOX.tmpDir],
  denyWrite: [BOX.mainGitDir],
  denyRead: [canonical(ledgerDir)],
  autoAllowBash: true,
  allowedDomains: [],
});
fs.mkdirSync(BOX.tmpDir, { recursive: true });

const MIXES: readonly Mix[] = [
  {
    name: 'Bash',
    call: () => ({ tool: 'Bash', input: { command: 'true', description: 'scripted' } }),
    allowedTools: 'Bash,Read',
  },
  {
    name: 'Read',
    call: () => ({ tool: 'Read', input: { file_path: path.join(worktree, 'a.txt') } }),
    allowedTools: 'Bash,Read',
  },
  {
    name: 'Write',
    call: (n) => ({
      tool: 'Write',
      input: { file_path: path.join(worktree, `w-${n}.txt`), content: `w ${n}\n` },
    }),
    allowedTools: 'Bash,Read,Write,Edit',
  },
];
/**
 * Calls the hooks' `if` conditions are meant to catch (the mixes catch none), for the preflight:
 * Bash naming agentbox (run); naming .agents (project guard and run: the guard lets it through, the
 * fix run's airlock too as it resolves into the worktree, the scout's refuses it); naming the main
 * tree (a fix run's hook, which refuses it; the temp path also names agentbox, so a fix run's Bash
 * hooks fire twice there and a scout's once); a Read inside the ledger (the run's own folder: allowed).
 */
const probeFile = path.join(runDir, 'probe.txt');
fs.writeFileSync(probeFile, 'probe\n');
const PROBES: readonly Call[] = [
  { tool: 'Bash', input: { command: 'echo agentbox-probe', description: 'probe' } },
  { tool: 'Bash', input: { command: 'echo .agents-probe', description: 'probe' } },
  { tool: 'Bash', input: { command: `echo ${path.join(repo.dir, 'README.md')}`, description: 'probe' } },
  { tool: 'Read', input: { file_path: probeFile } },
];

/** A run's meta as createRun writes it, enough for planLaunch. */
function runMeta(type: 'fix' | 'scout'): RunMeta {
  return {
    schema_version: 1,
    run_name: runName,
    run_id: RUN_ID,
    type,
    task: PROMPT,
    slug: 'bench-hooks',
    repo_root: repo.dir,
    repo_sha_start: null,
    created_at: new Date(0).toISOString(),
    agentbox_version: '0.0.0-bench',
    config_hash: 'bench',
    ...buildEnvelope({
      type,
      runId: RUN_ID,
      model: null,
      worktree: scopes[type].worktree,
      fixAllowed: [],
    }),
  };
}

/** The run's --settings for a variant, aimed at `endpoint`; deny rules left out (they are not hooks). */
function runHooks(run: NonNullable<Variant['run']>, endpoint: Endpoint): HookTable {
  const scope = scopes[run.type];
  const guard = {
    ledgerDir: scope.ledgerDir,
    repoRoot: scope.repoRoot,
    writes: run.type === 'fix',
    writeTools: !run.sandboxed,
  };
  const hookFile = path.join(runDir, 'hook.json');
  fs.writeFileSync(hookFile, hookAddressBook(endpoint));
  const input = {
    endpointUrl: endpoint.url,
    token: endpoint.token,
    hookFile,
    deny: [],
    stopTimeoutSeconds: Math.ceil((SUPERVISOR_TIMEOUT_MS * 3) / 1000) + 30,
  };
  if (run.settings === 'every') {
    return runSettings({ ...input, guard: { ...guard, everyBashCall: true }, history: 'hooks' })
      .hooks as HookTable;
  }
  const { settings } = planLaunch({
    meta: runMeta(run.type),
    scope,
    runDir,
    launchDir: scope.worktree ?? scope.repoRoot,
    sessionId: '00000000-0000-4000-8000-000000000000',
    prompt: PROMPT,
    endpoint,
    secrets: {
      root: path.join(runDir, 'secrets'),
      settingsFile: path.join(runDir, 'settings.json'),
      hookFile,
    },
    // The hooks of a run with or without the sandbox; the sandbox block itself is measured on its own.
    sandbox: run.sandboxed ? BOX : null,
    supervisorTimeoutMs: SUPERVISOR_TIMEOUT_MS,
    parentEnv: {},
    envPass: [],
  });
  const hooks = (settings as { hooks: HookTable }).hooks;
  // What the issue describes for this run, to be sure the bench measures that.
  const described = runSettings({ ...input, guard: { ...guard, everyBashCall: false }, history: 'stream' });
  if (!isDeepStrictEqual(hooks, described.hooks))
    throw new Error(
      `planLaunch's ${run.type} hooks are not runSettings(writes: ${guard.writes}, writeTools: ${guard.writeTools}, history: stream)`,
    );
  return hooks;
}

/** One whole claude session making `calls` in the worktree, timed from spawn to exit. */
async function runOnce(
  variant: Variant,
  mix: Mix,
  calls: readonly Call[],
  opts: { hookEvents?: boolean; sandbox?: boolean } = {},
): Promise<{ result: RunResult; expected: Expected; supervisor: Supervisor | undefined }> {
  const what = `${variant.name} / ${mix.name} × ${calls.length}${opts.hookEvents ? ' (preflight)' : ''}`;
  if (variant.guard) {
    fs.mkdirSync(path.dirname(guardFile), { recursive: true });
    fs.writeFileSync(guardFile, guardJson);
  } else {
    fs.rmSync(path.dirname(guardFile), { recursive: true, force: true });
  }
  for (const f of fs.readdirSync(worktree)) if (/^w-\d+\.txt$/.test(f)) fs.rmSync(path.join(worktree, f));
  await server.script(calls);

  const handled = new Map<string, number>();
  let handlerMs = 0;
  const denials: string[] = [];
  const problems: string[] = [];
  let endpoint: Endpoint | undefined;
  let supervisor: Supervisor | undefined;
  let hooks: HookTable | undefined;
  const run = variant.run;
  const history = run?.settings === 'every' ? 'hooks' : 'stream';
  try {
    if (run) {
      // What executeRun sets up: a supervisor (here in mode rules), the airlock, the endpoint.
      supervisor = new Supervisor({
        config: { mode: 'rules', maxIterations: 50, loopLimit: 3 },
        task: PROMPT,
        runType: run.type,
        runDir,
        log,
        history,
        startedAt: Date.now(),
      });
      const handler = createRunHookHandler({
        scope: scopes[run.type],
        log,
        launchDir: worktree,
        supervisor,
        onDenial: (d) => denials.push(`${d.tool}: ${d.reason}`),
      });
      endpoint = await startEndpoint({
        handler: async (event, input) => {
          bump(handled, event);
          const start = performance.now();
          try {
            return await handler(event, input);
          } finally {
            handlerMs += performance.now() - start;
          }
        },
        onProblem: (p) => problems.push(`endpoint ${p.status} ${p.reason}`),
      });
      hooks = runHooks(run, endpoint);
    }
    const scope = run ? scopes[run.type] : undefined;
    const expected = expectHooks(variant.guard ? projectHooks : undefined, hooks, calls, (call) =>
      scope ? !judgeToolUse(scope, call.tool, call.input, worktree).allow : false,
    );
    const argv = [
      '-p',
      PROMPT,
      '--output-format',
      'stream-json',
      '--verbose',
      ...(hooks || opts.sandbox
        ? [
            `--settings=${JSON.stringify({ permissions: { deny: [] }, ...(hooks ? { hooks } : {}), ...(opts.sandbox ? SANDBOX_BLOCK : {}) })}`,
          ]
        : []),
      ...(opts.hookEvents ? ['--include-hook-events'] : []),
      '--allowedTools',
      mix.allowedTools,
    ];
    const mark = randomBytes(8).toString('hex');
    const env = claudeEnv({
      home,
      modelUrl: server.url,
      extra: {
        [BENCH_VAR]: BENCH_TAG,
        [RUN_VAR]: mark,
      },
    });

    // The stream, read as executeRun reads it: a headless run's tool history comes from here.
    const toolErrors: boolean[] = [];
    const hookResponses = new Map<string, number>();
    const failedHooks: string[] = [];
    let result: ReturnType<typeof parseStreamLine>[number] | undefined;
    const pending = new Map<string, { name: string; input: unknown }>();
    const onLine = (line: string) => {
      for (const event of parseStreamLine(line)) {
        if (event.kind === 'result') result = event;
        else if (event.kind === 'hook' && event.phase === 'response') {
          bump(hookResponses, event.event);
          if (event.outcome !== 'success') failedHooks.push(line.slice(0, 400));
        } else if (event.kind === 'tool_use') pending.set(event.id, { name: event.name, input: event.input });
        else if (event.kind === 'tool_result') {
          toolErrors.push(event.isError);
          const call = pending.get(event.toolUseId);
          pending.delete(event.toolUseId);
          if (supervisor && history === 'stream')
            supervisor.recordTool(call?.name ?? '', !event.isError, toolExcerpt(call?.input, event.text));
        }
      }
    };
    const lines = new LineSplitter();

    const cpuStart = process.cpuUsage();
    const started = performance.now();
    const child = spawn('/bin/sh', ['-c', SH_SCRIPT, CLAUDE_BIN, ...argv], {
      cwd: worktree,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    current = { child, mark };
    let stdoutTail = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      stdoutTail = (stdoutTail + chunk.toString('utf8')).slice(-1500);
      for (const line of lines.push(chunk)) onLine(line);
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      reap({ child, mark });
    }, RUN_TIMEOUT_MS);
    let ms = 0;
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', () => {
        ms = performance.now() - started;
      });
      child.once('close', (c) => resolve(c));
    });
    for (const line of lines.flush()) onLine(line);
    const cpu = process.cpuUsage(cpuStart);
    clearTimeout(timer);
    reap({ child, mark });
    current = undefined;
    const benchCpuMs = (cpu.user + cpu.system) / 1000;
    // `times` prints the shell's own user/system times, then its children's.
    const at = stderr.lastIndexOf(`\n${TIMES_MARK}\n`);
    const childTimes = at < 0 ? undefined : stderr.slice(at).trim().split('\n')[2];
    const seconds = [...(childTimes ?? '').matchAll(/(\d+)m([\d.]+)s/g)].map(
      (m) => Number(m[1]) * 60 + Number(m[2]),
    );
    if (at >= 0) stderr = stderr.slice(0, at);

    const tail = () => `${stderr}\n${stdoutTail}`.trim().slice(-1500);
    if (timedOut) throw new Error(`${what}: timed out after ${RUN_TIMEOUT_MS} ms\n${tail()}`);
    if (code !== 0) throw new Error(`${what}: claude exited with ${code}\n${tail()}`);
    if (seconds.length !== 2) throw new Error(`${what}: no CPU times from sh: ${childTimes}\n${tail()}`);
    const claudeCpuMs = (seconds[0]! + seconds[1]!) * 1000;
    if (result?.kind !== 'result' || result.subtype !== 'success' || result.isError) {
      throw new Error(`${what}: no successful result line: ${JSON.stringify(result)?.slice(0, 400)}`);
    }
    if (failedHooks.length > 0) throw new Error(`${what}: a hook failed: ${failedHooks[0]}`);
    if (problems.length > 0) throw new Error(`${what}: ${problems.slice(0, 3).join('; ')}`);
    // Ask the supervisor's view after claude ended: its Stop answer came before the last lines.
    return {
      result: {
        ms,
        claudeCpuMs,
        benchCpuMs,
        handlerMs,
        toolErrors,
        hookResponses,
        handled,
        denials,
      },
      expected,
      supervisor,
    };
  } finally {
    await endpoint?.close();
    // Every session starts alike: no transcripts piling up in the Claude home, no recorded
    // requests, no growing event log.
    fs.rmSync(path.join(home.configDir, 'projects'), { recursive: true, force: true });
    fs.rmSync(log.file, { force: true });
  }
}

const fmtCounts = (m: Map<string, number>) =>
  [...m]
    .filter(([, n]) => n > 0)
    .map(([e, n]) => `${e} ${n}`)
    .join(', ') || 'none';

/** The endpoint saw exactly the hook calls the settings call for (SessionEnd: 0 or 1). */
function checkHandled(what: string, r: RunResult, expected: Expected): void {
  const seen = new Map([...r.handled].filter(([e]) => e !== 'SessionEnd'));
  const want = new Map([...expected.handled].filter(([, n]) => n > 0));
  const same = seen.size === want.size && [...want].every(([e, n]) => seen.get(e) === n);
  if (!same || (r.handled.get('SessionEnd') ?? 0) > 1) {
    throw new Error(`${what}: the endpoint saw ${fmtCounts(r.handled)}; expected ${fmtCounts(want)}`);
  }
}

/** A timed session: every call succeeded, nothing refused, the hooks fired as the settings say. */
async function timedRun(variant: Variant, mix: Mix, count = CALLS, sandbox = false): Promise<RunResult> {
  const calls = Array.from({ length: count }, (_, n) => mix.call(n));
  const { result: r, expected, supervisor } = await runOnce(variant, mix, calls, { sandbox });
  const what = `${variant.name}${sandbox ? ' + sandbox' : ''} / ${mix.name} × ${count}`;
  const errors = r.toolErrors.filter(Boolean).length;
  if (r.toolErrors.length !== count || errors > 0) {
    throw new Error(`${what}: ${r.toolErrors.length} tool results (${errors} errors), expected ${count}`);
  }
  if (r.denials.length > 0)
    throw new Error(`${what}: the endpoint refused: ${r.denials.slice(0, 3).join('; ')}`);
  checkHandled(what, r, expected);
  if (supervisor) {
    if (supervisor.end?.kind !== 'complete')
      throw new Error(
        `${what}: the supervisor did not let the run complete: ${JSON.stringify(supervisor.end)}`,
      );
    if (supervisor.history.length !== Math.min(count, HISTORY_KEPT))
      throw new Error(`${what}: the supervisor's history holds ${supervisor.history.length} tool calls`);
  }
  return r;
}

/**
 * Preflight (and warm-up): every variant × mix once with --include-hook-events, a few mix calls and
 * the probes, comparing which hooks fired how often (and which calls the endpoint refused) with what
 * the settings say. Proves the settings were accepted (one bad entry makes Claude Code drop a whole
 * settings source without a word) and that every `if` condition fires where intended, and only there.
 */
async function preflight(): Promise<string[]> {
  const notes: string[] = [];
  for (const mix of MIXES) {
    for (const variant of VARIANTS) {
      const calls = [...Array.from({ length: PREFLIGHT_CALLS }, (_, n) => mix.call(n)), ...PROBES];
      const { result: r, expected } = await runOnce(variant, mix, calls, { hookEvents: true });
      const what = `preflight ${variant.name} / ${mix.name}`;
      const want = new Map([...expected.responses].filter(([, n]) => n > 0));
      const seen = r.hookResponses;
      const same = seen.size === want.size && [...want].every(([e, n]) => seen.get(e) === n);
      if (!same) {
        throw new Error(
          `${what}: hook responses ${fmtCounts(seen)}; the settings call for ${fmtCounts(want)}`,
        );
      }
      const refused = expected.denied.filter(Boolean).length;
      if (!isDeepStrictEqual(r.toolErrors, expected.denied) || r.denials.length !== refused) {
        throw new Error(
          `${what}: tool errors ${JSON.stringify(r.toolErrors)}, endpoint refusals ${r.denials.length}; ` +
            `expected refusals ${JSON.stringify(expected.denied)} (${r.denials.join('; ')})`,
        );
      }
      checkHandled(what, r, expected);
      notes.push(`  ${variant.name} / ${mix.name}: ${fmtCounts(seen)}; refused ${refused}`);
    }
  }
  return notes;
}

/**
 * What Claude Code's sandbox itself costs per Bash call (bubblewrap + its proxy around every
 * command): the same session with no hooks, with and without the sandbox block a fix run gets.
 * Not agentbox's per-call work, and not gated: it is the price of the kernel boundary, the same
 * for anyone who turns Claude Code's sandbox on. Skipped when bwrap/socat are missing.
 */
async function sandboxFigure(): Promise<string | null> {
  if (SANDBOX_CALLS === 0) return null;
  if (!probeSandbox(process.env).ok) {
    return '  sandbox: skipped (bubblewrap or socat missing)';
  }
  const bash = MIXES.find((m) => m.name === 'Bash')!;
  const plain: number[] = [];
  const boxed: number[] = [];
  for (let round = 0; round < RUNS; round++) {
    for (const sandbox of round % 2 ? [true, false] : [false, true]) {
      const r = await timedRun(VARIANTS[0]!, bash, SANDBOX_CALLS, sandbox);
      (sandbox ? boxed : plain).push(r.ms);
    }
  }
  const per = (median(boxed) - median(plain)) / SANDBOX_CALLS;
  const paired = median(boxed.map((v, i) => v - plain[i]!)) / SANDBOX_CALLS;
  console.log(
    `\nClaude Code's sandbox alone, ${SANDBOX_CALLS} × Bash true, median of ${RUNS}: ` +
      `${Math.round(median(plain))} ms without, ${Math.round(median(boxed))} ms with`,
  );
  return (
    `  not agentbox's: Claude Code's own sandbox adds ${per.toFixed(1)} ms per Bash call ` +
    `(paired ${paired.toFixed(1)} ms), with or without agentbox; Read and Write do not go through it`
  );
}

let exitCode = 0;
try {
  console.log(
    `hooks bench: ${CALLS} tool calls per session, ${RUNS} rounds, Claude Code ${claudeVersion(CLAUDE_BIN)}`,
  );
  console.log(`load average at start (1/5/15 min): ${loadAverage()} on ${os.cpus().length} CPUs`);
  const t0 = performance.now();
  const notes = await preflight();
  console.log(
    `preflight: ${VARIANTS.length} variants × ${MIXES.length} mixes, ${PREFLIGHT_CALLS} calls + ` +
      `${PROBES.length} probes each; hooks fire as configured (${((performance.now() - t0) / 1000).toFixed(1)} s). ` +
      'hook responses per session:',
  );
  for (const note of notes) console.log(note);

  const results = new Map<string, RunResult[]>(); // `${mix}\t${variant}` → one per round
  const key = (mix: Mix, variant: Variant) => `${mix.name}\t${variant.name}`;
  for (let round = 0; round < RUNS; round++) {
    const roundStart = performance.now();
    for (const mix of MIXES) {
      for (let i = 0; i < VARIANTS.length; i++) {
        const variant = VARIANTS[(i + round) % VARIANTS.length]!;
        const r = await timedRun(variant, mix);
        results.set(key(mix, variant), [...(results.get(key(mix, variant)) ?? []), r]);
      }
    }
    console.log(
      `round ${round + 1}/${RUNS}: ${((performance.now() - roundStart) / 1000).toFixed(1)} s, load ${loadAverage()}`,
    );
  }

  const cols = [
    'variant',
    'tool',
    'median',
    'per call',
    'min–max',
    'overhead/call',
    'paired/call',
    'ratio',
    '',
    'claude cpu/call',
    'agentbox cpu/call',
  ];
  const rows: string[][] = [];
  const perCall = (variant: number[], base: number[]) => (median(variant) - median(base)) / CALLS;
  const ms = (n: number) => `${n.toFixed(2)} ms`;
  const signed = (n: number) => `${n < 0 ? '−' : '+'}${ms(Math.abs(n))}`;
  const gated: string[] = [];
  let missed = false;
  for (const mix of MIXES) {
    const base = results.get(key(mix, VARIANTS[0]!))!;
    const baseMs = base.map((r) => r.ms);
    for (const variant of VARIANTS) {
      const runs = results.get(key(mix, variant))!;
      const t = runs.map((r) => r.ms);
      const isBase = variant === VARIANTS[0];
      const overhead = perCall(t, baseMs);
      // Same-round differences: robust to slow drifts in machine load.
      const paired = median(t.map((v, i) => v - baseMs[i]!)) / CALLS;
      const ratio = overhead / TARGET_MS_PER_CALL;
      const ok = ratio <= 1;
      if (variant === GATED) {
        if (!ok) missed = true;
        gated.push(
          `  ${mix.name}: without hooks ${ms(median(baseMs) / CALLS)} per call, with a fix run's hooks ` +
            `${ms(median(t) / CALLS)}: ${signed(overhead)} per call (paired ${signed(paired)}), ` +
            `${ratio.toFixed(2)} × the ${TARGET_MS_PER_CALL} ms target ${ok ? '✓' : '✗'}`,
        );
      }
      const claudeCpu = perCall(
        runs.map((r) => r.claudeCpuMs),
        base.map((r) => r.claudeCpuMs),
      );
      const benchCpu = perCall(
        runs.map((r) => r.benchCpuMs),
        base.map((r) => r.benchCpuMs),
      );
      rows.push([
        variant.name,
        mix.name,
        `${Math.round(median(t))} ms`,
        ms(median(t) / CALLS),
        `${Math.round(Math.min(...t))}–${Math.round(Math.max(...t))}`,
        isBase ? '—' : ms(overhead),
        isBase ? '—' : ms(paired),
        isBase ? '—' : ratio.toFixed(2),
        isBase || variant !== GATED ? '' : ok ? '✓' : '✗',
        isBase ? `(${Math.round(median(runs.map((r) => r.claudeCpuMs)))} ms)` : ms(claudeCpu),
        isBase ? `(${Math.round(median(runs.map((r) => r.benchCpuMs)))} ms)` : ms(benchCpu),
      ]);
    }
    const spread = (Math.max(...baseMs) - Math.min(...baseMs)) / CALLS;
    rows.push([`  noise: 'none' spans ${spread.toFixed(2)} ms per call over ${RUNS} runs`]);
  }
  console.log(
    `\nwhole claude process, ${CALLS} tool calls, median of ${RUNS} (target ${TARGET_MS_PER_CALL} ms per call ` +
      `for "${GATED.name}"):\n` +
      `  overhead/call = (median − median of none) / ${CALLS}; paired/call = median of same-round ` +
      `differences / ${CALLS}; ratio = overhead/call ÷ ${TARGET_MS_PER_CALL} ms;\n  cpu/call: the same for CPU ` +
      'time, of claude + the processes it waited for, and of this process (hook endpoint, stream reader, ' +
      `model server; ${VARIANTS[0]!.name}: totals)`,
  );
  console.log(renderTable(cols, rows));
  console.log('\nhook calls the endpoint got per session (last round), and its handler time per call:');
  for (const mix of MIXES) {
    for (const variant of VARIANTS.filter((v) => v.run)) {
      const runs = results.get(key(mix, variant))!;
      const last = runs.at(-1)!;
      const hookCalls = [...last.handled.values()].reduce((a, b) => a + b, 0);
      const handlerUs = (median(runs.map((r) => r.handlerMs)) / hookCalls) * 1000;
      console.log(
        `  ${variant.name} / ${mix.name}: ${fmtCounts(last.handled)}; ${handlerUs.toFixed(0)} µs per hook call`,
      );
    }
  }
  const sandboxLine = await sandboxFigure();
  console.log(`\nload average at end (1/5/15 min): ${loadAverage()}`);
  console.log(`"${GATED.name}" against the same session without agentbox hooks:`);
  for (const line of gated) console.log(line);
  if (sandboxLine) console.log(sandboxLine);
  console.log(`gated: ≤ ${TARGET_MS_PER_CALL} ms per call on every mix: ${missed ? '✗' : '✓'}`);
  exitCode = missed ? 1 : 0;
} catch (error) {
  console.error(`\nbench setup broken: ${(error as Error).message}`);
  exitCode = 2;
} finally {
  const left = await cleanup();
  if (left.length > 0) {
    console.error(`processes left behind (killed):\n  ${left.join('\n  ')}`);
    exitCode = 2;
  }
}
process.exitCode = exitCode;
