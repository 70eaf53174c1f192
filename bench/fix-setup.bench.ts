/**
 * Setting up a fix run on a repository of 20,000 files costs at most 1.2× a bare
 * `git worktree add -b <branch> <path> HEAD` on the same repository.
 *
 * "Setting up" is everything agentbox does before claude starts: what `startRun` does (the run
 * context, HEAD, `createRun`, the worktree, recording it), what `runHere` reads back, and what
 * `executeRun` does before it spawns claude (the run's slash commands in the worktree, the hook
 * endpoint, the deny rules, `runSettings` and `buildClaudeArgs`, the agent's environment).
 * Median of 5 after one warm-up each; the two take turns going first, each after `sync`, and every
 * worktree is removed before the next run.
 * Run: `npx tsx bench/fix-setup.bench.ts [--files 20000] [--runs 5] [--keep]`. Exits 1 when the
 * ratio is over 1.2.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { execa } from 'execa';
import type { AirlockScope } from '../src/airlock/guard.js';
import { canonical } from '../src/airlock/paths.js';
import { parseDuration } from '../src/config/duration.js';
import { runTimeout } from '../src/config/schema.js';
import { type Env, memoryIo } from '../src/context.js';
import { startEndpoint } from '../src/endpoint/server.js';
import { hookAddressBook } from '../src/endpoint/settings.js';
import { addWorktree, headSha, removeWorktree } from '../src/git/worktree.js';
import { createRun, ensureLedger, readRun, updateState } from '../src/ledger/index.js';
import { loadRunContext } from '../src/run/context.js';
import { EventLog } from '../src/run/events.js';
import { planLaunch } from '../src/run/launch.js';
import { storedOptions, worktreeBase } from '../src/run/start.js';
import { buildEnvelope } from '../src/run/tier.js';
import { assertSandboxUsable, prepareRunPrivacy } from '../src/sandbox/prepare.js';
import { assertProjectSettings } from '../src/settings/startup.js';
import { writeRunCommands } from '../src/slash/index.js';
import { createRunHookHandler } from '../src/supervisor/hooks.js';
import { askSupervisorModel } from '../src/supervisor/model.js';
import { Supervisor } from '../src/supervisor/supervisor.js';
import { GIT_ENV, type TestRepo } from '../test/helpers/git-repo.js';
import { makeBigRepo } from './git.bench.js';

const TARGET = 1.2;
const CLAUDE_BIN = fileURLToPath(new URL('../node_modules/.bin/claude', import.meta.url));

export interface FixSetup {
  readonly name: string;
  readonly worktree: string;
  readonly branch: string;
  /** claude's argv, ready to spawn. */
  readonly args: string[];
  /** Milliseconds per step, in order. */
  readonly steps: [string, number][];
  /** Closes the hook endpoint (a real run keeps it open while claude works). */
  release(): Promise<void>;
}

/**
 * Everything a fix run does before claude starts, through the same library calls and in the same
 * order as startRun → runHere → executeRun. NOTE: a few one-liners are private to start.ts and
 * execute.ts and are repeated here: where the worktree goes (`worktreePath`), the repository's
 * top-level entries (`topLevel`), and reading the configured durations and supervisor settings
 * (`timeoutMs`, `supervisorMode`, `maxIterations`, `supervisorBin`: the config's values as they
 * are, with no command-line flags to check).
 */
export async function setupFixRun(
  repoRoot: string,
  env: Env = process.env,
  task = 'fix the flaky login test',
): Promise<FixSetup> {
  const steps: [string, number][] = [];
  let mark = performance.now();
  const lap = (step: string) => {
    const now = performance.now();
    steps.push([step, now - mark]);
    mark = now;
  };

  // startRun
  const rc = await loadRunContext({ cwd: repoRoot, env, io: memoryIo() });
  const base = await headSha(rc.repo.root);
  if (!base) throw new Error(`no commit in ${rc.repo.root}`);
  lap('context + HEAD');
  // startRun's checks before anything is created: the project settings, and the sandbox (a real
  // bubblewrap start when it is required).
  assertProjectSettings(rc.repo.root);
  assertSandboxUsable(env, rc.config.sandbox);
  lap('settings check + sandbox probe');
  const worktreePath = (name: string) => canonical(path.join(worktreeBase(rc, env), name));
  const run = await createRun(rc.ledger, {
    type: 'fix',
    task,
    repoShaStart: base,
    pid: process.pid,
    options: {
      timeout_ms: parseDuration(runTimeout(rc.config)),
      supervisor: rc.config.supervisor.mode,
      max_iterations: rc.config.supervisor.max_iterations,
    },
    envelope: (r) =>
      buildEnvelope({
        type: 'fix',
        runId: r.id,
        model: rc.config.claude.model,
        worktree: worktreePath(r.name),
        fixAllowed: rc.config.runs.fix_allowed_tools,
      }),
  });
  lap('createRun');
  const worktree = worktreePath(run.name);
  const branch = `agentbox/${run.name}`;
  fs.mkdirSync(path.dirname(worktree), { recursive: true });
  await addWorktree(rc.repo.root, { path: worktree, branch, base });
  lap('addWorktree');
  await updateState(
    rc.ledger,
    run.name,
    { worktree_path: worktree, branch },
    { event: 'worktree', detail: branch },
  );

  // runHere
  const { meta, state } = readRun(rc.ledger, run.name);
  if (!state) throw new Error(`run ${run.name} has no state.json`);
  const stored = storedOptions(meta);
  const supervisorTimeoutMs = parseDuration(rc.config.supervisor.timeout) ?? 30_000;
  lap('updateState + readRun');

  // executeRun, up to spawning claude
  const ledger = rc.ledger;
  const runDir = path.join(ledger.runsDir, meta.run_name);
  const launchDir = state.worktree_path ?? ledger.root;
  const scope: AirlockScope = {
    type: meta.type,
    repoRoot: canonical(ledger.root),
    ledgerDir: canonical(ledger.dir),
    runDir: canonical(runDir),
    worktree: state.worktree_path ? canonical(state.worktree_path) : null,
  };
  const log = new EventLog(runDir);
  writeRunCommands(launchDir, {
    runId: meta.run_id,
    runName: meta.run_name,
    type: meta.type,
    runDir,
    worktree: state.worktree_path,
  });
  lap('writeRunCommands');
  const supervisor = new Supervisor({
    config: { mode: stored.supervisor, maxIterations: stored.max_iterations, loopLimit: 3 },
    task: meta.task,
    runType: meta.type,
    runDir,
    log,
    startedAt: Date.now(),
    ask: (prompt) =>
      askSupervisorModel(prompt, {
        bin: rc.claudeBin,
        model: rc.config.supervisor.model ?? meta.model,
        timeoutMs: supervisorTimeoutMs,
        env,
      }),
  });
  const endpoint = await startEndpoint({
    handler: createRunHookHandler({ scope, log, launchDir, supervisor }),
    onProblem: (p) => log.append({ event: 'endpoint_problem', ...p }),
  });
  lap('Supervisor + startEndpoint');
  const privacy = await prepareRunPrivacy({
    env,
    runName: run.name,
    repoRoot: rc.ledger.root,
    worktree: scope.worktree,
    config: rc.config.sandbox,
  });
  lap('private area + private git + sandbox paths');
  const { args, settings } = planLaunch({
    meta,
    scope,
    runDir,
    launchDir,
    sessionId: randomUUID(),
    prompt: meta.task,
    endpoint,
    secrets: privacy.secrets,
    sandbox: privacy.sandbox,
    supervisorTimeoutMs,
    parentEnv: env,
    envPass: rc.config.runs.env_pass,
  });
  privacy.area.writeSecret('settings.json', `${JSON.stringify(settings)}\n`);
  privacy.area.writeSecret('hook.json', hookAddressBook(endpoint));
  lap('deny rules + runSettings + sandbox + buildClaudeArgs + env');
  return {
    name: run.name,
    worktree,
    branch,
    args,
    steps,
    release: () => {
      privacy.area.dispose();
      return endpoint.close();
    },
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function main() {
  const { values: opts } = parseArgs({
    options: {
      files: { type: 'string', default: '20000' },
      runs: { type: 'string', default: '5' },
      keep: { type: 'boolean' },
    },
  });
  const files = Number(opts.files);
  const runs = Number(opts.runs);
  // A top-level program, like the CLI's main: it decides git's environment.
  Object.assign(process.env, GIT_ENV);
  const env: Env = { ...process.env, AGENTBOX_CLAUDE_BIN: CLAUDE_BIN };

  const built = performance.now();
  const repo: TestRepo = makeBigRepo(files);
  ensureLedger(repo.dir);
  const worktrees = path.join(repo.dir, '.agents', 'worktrees');
  fs.mkdirSync(worktrees, { recursive: true });
  console.log(
    `fixture: ${files} files committed in ${((performance.now() - built) / 1000).toFixed(1)} s (${repo.dir})`,
  );

  const timeBare = async (i: number) => {
    const at = path.join(worktrees, `bare${i}`);
    const branch = `bare${i}`;
    await execa('sync');
    const t0 = performance.now();
    await execa('git', ['worktree', 'add', '-q', '-b', branch, at, 'HEAD'], { cwd: repo.dir });
    const ms = performance.now() - t0;
    await removeWorktree(repo.dir, { path: at, branch, deleteBranch: true });
    return ms;
  };
  const timeOurs = async () => {
    await execa('sync');
    const t0 = performance.now();
    const setup = await setupFixRun(repo.dir, env);
    const ms = performance.now() - t0;
    await setup.release();
    await removeWorktree(repo.dir, { path: setup.worktree, branch: setup.branch, deleteBranch: true });
    return { ms, steps: setup.steps };
  };

  const bare: number[] = [];
  const ours: number[] = [];
  const steps = new Map<string, number[]>();
  let missed = false;
  try {
    // Run 0 of each is a warm-up (page cache, the YAML parser and templates loaded once).
    for (let i = 0; i <= runs; i++) {
      let a: number;
      let b: Awaited<ReturnType<typeof timeOurs>>;
      if (i % 2 === 0) {
        a = await timeBare(i);
        b = await timeOurs();
      } else {
        b = await timeOurs();
        a = await timeBare(i);
      }
      console.log(
        `  run ${i}${i === 0 ? ' (warm-up)' : ''}: ${i % 2 === 0 ? 'bare first' : 'agentbox first'} — ` +
          `bare ${a.toFixed(0)} ms, agentbox ${b.ms.toFixed(0)} ms`,
      );
      if (i === 0) continue;
      bare.push(a);
      ours.push(b.ms);
      for (const [step, ms] of b.steps) steps.set(step, [...(steps.get(step) ?? []), ms]);
    }
    const ratio = median(ours) / median(bare);
    missed = ratio > TARGET;
    const list = (values: number[]) => values.map((v) => v.toFixed(0)).join(' ');
    console.log(`bare git worktree add -b: median ${median(bare).toFixed(0)} ms (runs: ${list(bare)})`);
    console.log(`agentbox fix-run setup:   median ${median(ours).toFixed(0)} ms (runs: ${list(ours)})`);
    console.log(`ratio ${ratio.toFixed(2)}× (target ≤ ${TARGET}×) ${missed ? 'MISSED' : 'ok'}`);
    console.log('agentbox setup by step (median ms):');
    for (const [step, values] of steps) console.log(`  ${step.padEnd(48)} ${median(values).toFixed(1)}`);
    const overhead = ours.map((v, i) => v - bare[i]!);
    console.log(
      `  per-pair difference agentbox − bare, ms: ${list(overhead)} (median ${median(overhead).toFixed(0)})`,
    );
  } finally {
    if (opts.keep) console.log(`kept: ${repo.dir}`);
    else repo.cleanup();
  }
  if (missed) process.exitCode = 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
