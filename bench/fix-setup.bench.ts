/**
 * Setting up a fix run on a repository of 20,000 files costs at most 1.2× a bare
 * `git worktree add -b <branch> <path> HEAD` on the same repository.
 *
 * "Setting up" is everything agentbox does before claude starts: what `startRun` does (the run
 * context, HEAD, `createRun`, the worktree, recording it), what `runHere` reads back, and what
 * `executeRun` does before it spawns claude (`prepareRun`: the supervisor, the run's slash commands
 * in the worktree, the hook endpoint, the private area, the deny rules, `runSettings` and
 * `buildClaudeArgs`, the agent's environment).
 * Median of 5 after one warm-up each; the two take turns going first, each after `sync`, and every
 * worktree is removed before the next run.
 * Run: `npx tsx bench/fix-setup.bench.ts [--files 20000] [--runs 5] [--keep]`. Exits 1 when the
 * ratio is over 1.2.
 */
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { execa } from 'execa';
import { parseDuration } from '../src/config/duration.js';
import { runTimeout } from '../src/config/schema.js';
import { type CommandContext, type Env, memoryIo } from '../src/context.js';
import { headSha, removeWorktree } from '../src/git/worktree.js';
import { createRun, ensureLedger, readRun } from '../src/ledger/index.js';
import { loadRunContext } from '../src/run/begin/context.js';
import { executionOf } from '../src/run/begin/options.js';
import { prepareRun } from '../src/run/begin/prepare.js';
import { buildEnvelope } from '../src/run/begin/tier.js';
import { addRunWorktree, worktreePath } from '../src/run/begin/worktree.js';
import { assertSandboxUsable } from '../src/sandbox/prepare.js';
import { assertProjectSettings } from '../src/settings/startup.js';
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
  /** Releases the run's harness: endpoint, private area, slash commands (a real run keeps them while claude works). */
  release(): Promise<void>;
}

/** What startRun does for a fix run, up to running it (see setupFixRun). */
async function startFixRun(ctx: CommandContext, task: string, lap: (step: string) => void) {
  const { env } = ctx;
  const rc = await loadRunContext(ctx);
  const base = await headSha(rc.repo.root);
  if (!base) throw new Error(`no commit in ${rc.repo.root}`);
  lap('context + HEAD');
  // startRun's checks before anything is created: the project settings, and the sandbox (a real
  // bubblewrap start when it is required).
  assertProjectSettings(rc.repo.root);
  assertSandboxUsable(env, rc.config.sandbox);
  lap('settings check + sandbox probe');
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
        worktree: worktreePath(rc, env, r.name),
        fixAllowed: rc.config.runs.fix_allowed_tools,
      }),
  });
  lap('createRun');
  const worktree = worktreePath(rc, env, run.name);
  await addRunWorktree(rc, run, worktree, base);
  lap('addWorktree + updateState');
  return { rc, run, worktree };
}

/**
 * Everything a fix run does before claude starts, through the same library calls and in the same
 * order as startRun → runHere → executeRun (`prepareRun` is exactly what executeRun runs before it
 * spawns claude). NOTE: the run is created without templates and its options are the
 * configuration's as they are, with no command-line flags to check.
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
  const ctx = { cwd: repoRoot, env, io: memoryIo() };
  const { rc, run, worktree } = await startFixRun(ctx, task, lap);

  // runHere
  const { meta, state } = readRun(rc.ledger, run.name);
  if (!state) throw new Error(`run ${run.name} has no state.json`);
  const execution = executionOf(ctx, rc, meta, state);
  lap('readRun + options');

  // executeRun, up to spawning claude
  const prepared = await prepareRun(execution, { onStep: lap });
  return {
    name: run.name,
    worktree,
    branch: `agentbox/${run.name}`,
    args: prepared.launch.args,
    steps,
    release: async () => {
      await prepared.harness.release();
    },
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** One bare `git worktree add -b`, timed; the worktree is removed after. */
async function timeBare(repoDir: string, worktrees: string, i: number): Promise<number> {
  const at = path.join(worktrees, `bare${i}`);
  const branch = `bare${i}`;
  await execa('sync');
  const t0 = performance.now();
  await execa('git', ['worktree', 'add', '-q', '-b', branch, at, 'HEAD'], { cwd: repoDir });
  const ms = performance.now() - t0;
  await removeWorktree(repoDir, { path: at, branch, deleteBranch: true });
  return ms;
}

/** One agentbox fix-run setup, timed with its steps; released and removed after. */
async function timeOurs(repoDir: string, env: Env): Promise<{ ms: number; steps: [string, number][] }> {
  await execa('sync');
  const t0 = performance.now();
  const setup = await setupFixRun(repoDir, env);
  const ms = performance.now() - t0;
  await setup.release();
  await removeWorktree(repoDir, { path: setup.worktree, branch: setup.branch, deleteBranch: true });
  return { ms, steps: setup.steps };
}

/** The two take turns going first; run 0 of each is a warm-up (page cache, the YAML parser and templates loaded once). */
async function measure(repoDir: string, worktrees: string, env: Env, runs: number) {
  const bare: number[] = [];
  const ours: number[] = [];
  const steps = new Map<string, number[]>();
  for (let i = 0; i <= runs; i++) {
    let a: number;
    let b: Awaited<ReturnType<typeof timeOurs>>;
    if (i % 2 === 0) {
      a = await timeBare(repoDir, worktrees, i);
      b = await timeOurs(repoDir, env);
    } else {
      b = await timeOurs(repoDir, env);
      a = await timeBare(repoDir, worktrees, i);
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
  return { bare, ours, steps };
}

/** Prints the figures; true when the target was missed. */
function report({ bare, ours, steps }: Awaited<ReturnType<typeof measure>>): boolean {
  const ratio = median(ours) / median(bare);
  const missed = ratio > TARGET;
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
  return missed;
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
  let missed = false;
  try {
    missed = report(await measure(repo.dir, worktrees, env, Number(opts.runs)));
  } finally {
    if (opts.keep) console.log(`kept: ${repo.dir}`);
    else repo.cleanup();
  }
  if (missed) process.exitCode = 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
