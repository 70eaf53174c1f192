/**
 * The watchdog runs before every agentbox command; with 10,000 finished runs in the ledger it must
 * add under 20 ms. Measured two ways: the whole `agentbox status` process with the watchdog on and
 * off (AGENTBOX_WATCHDOG=0), and the watchdog alone, in-process.
 * Run: `npm run build && npx tsx bench/watchdog.bench.ts [--runs 10000] [--active 3]`.
 * Exits 1 when the added time misses the target.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { activeDir, createRun, ensureLedger, openLedger, updateState } from '../src/ledger/index.js';
import { processStartTime } from '../src/process/reap.js';
import { runWatchdog } from '../src/watchdog/watchdog.js';
import { gitRepo } from '../test/helpers/git-repo.js';
import { ENVELOPE, writeRuns } from './ledger-fixture.js';

const { values: args } = parseArgs({
  options: { runs: { type: 'string', default: '10000' }, active: { type: 'string', default: '3' } },
});
const COUNT = Number(args.runs);
const ACTIVE = Number(args.active);
const TARGET_MS = 20;
const PROCESS_RUNS = 21;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'bin', 'agentbox.cjs');

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Alternates on/off so that drift in the machine's load hits both sides alike. */
function timeStatus(cwd: string): { on: number; off: number } {
  const on: number[] = [];
  const off: number[] = [];
  for (let i = 0; i <= PROCESS_RUNS; i++) {
    for (const [watchdog, into] of [
      ['1', on],
      ['0', off],
    ] as const) {
      const start = performance.now();
      const result = spawnSync(process.execPath, [bin, 'status'], {
        cwd,
        encoding: 'utf8',
        env: { ...process.env, AGENTBOX_WATCHDOG: watchdog },
      });
      const ms = performance.now() - start;
      if (result.status !== 0 || result.stderr !== '')
        throw new Error(`agentbox status failed (${result.status}):\n${result.stderr}`);
      if (i > 0) into.push(ms);
    }
  }
  return { on: median(on), off: median(off) };
}

const repo = gitRepo();
let missed = false;
try {
  if (!fs.existsSync(path.join(root, 'dist', 'cli', 'main.cjs'))) {
    throw new Error('dist/cli/main.cjs is missing — run "npm run build" first');
  }
  ensureLedger(repo.dir);
  writeRuns(repo.dir, COUNT);
  const ledger = openLedger(repo.dir);
  // The one-time scan of a ledger from before the markers (no .agents/active/ yet).
  const scanStart = performance.now();
  await runWatchdog(ledger, { stallMs: () => 5 * 60_000 });
  const scanMs = performance.now() - scanStart;
  // Runs in progress, supervised by this (live) process, each with its slash commands.
  for (let i = 0; i < ACTIVE; i++) {
    const run = await createRun(ledger, {
      type: 'scout',
      task: `in progress ${i}`,
      envelope: ENVELOPE,
      repoShaStart: null,
      pid: process.pid,
    });
    await updateState(ledger, run, {
      pid_start: processStartTime(process.pid),
      last_heartbeat: new Date().toISOString(),
    });
    fs.mkdirSync(path.join(repo.dir, '.claude', 'commands', `run_${run.id}`), { recursive: true });
  }
  console.log(
    `fixture: ${COUNT.toLocaleString('en-US')} finished runs + ${ACTIVE} active (${fs.readdirSync(activeDir(ledger)).length} markers)`,
  );

  const inProcess: number[] = [];
  for (let i = 0; i < 50; i++) {
    const start = performance.now();
    const findings = await runWatchdog(ledger, { stallMs: () => 5 * 60_000 });
    inProcess.push(performance.now() - start);
    if (findings.length > 0) throw new Error(`unexpected findings: ${JSON.stringify(findings)}`);
  }
  console.log(`\nthe watchdog alone, in-process (median of 50): ${median(inProcess).toFixed(2)} ms`);
  console.log(`one-time scan of a ledger without markers (${COUNT} runs): ${scanMs.toFixed(0)} ms`);

  const { on, off } = timeStatus(repo.dir);
  const added = on - off;
  const ratio = added / TARGET_MS;
  missed = ratio > 1;
  console.log(`\nagentbox status, whole process (median of ${PROCESS_RUNS} each, alternating):`);
  console.log(`  watchdog off: ${off.toFixed(1)} ms; on: ${on.toFixed(1)} ms`);
  console.log(
    `  added by the watchdog: ${added.toFixed(1)} ms — target ${TARGET_MS} ms — ratio ${ratio.toFixed(2)} ${missed ? '✗' : '✓'}`,
  );
} finally {
  repo.cleanup();
}
process.exitCode = missed ? 1 : 0;
