/**
 * `agentbox status` with 10,000 runs on disk must answer in under 150 ms, whole process.
 * Run: `npm run build && npx tsx bench/status.bench.ts [--runs 10000] [--keep] [--bin bin/agentbox.js]`.
 * `--keep` leaves the fixture repo for profiling; `--bin` times another build of the CLI.
 * Exits 1 when plain `status` misses the target.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  createRun,
  ensureLedger,
  listRunNames,
  listRuns,
  openLedger,
  readMeta,
  readState,
  updateState,
} from '../src/ledger/index.js';
import { gitRepo } from '../test/helpers/git-repo.js';
import { ENVELOPE, writeRuns } from './ledger-fixture.js';

const { values: args } = parseArgs({
  options: { runs: { type: 'string', default: '10000' }, keep: { type: 'boolean' }, bin: { type: 'string' } },
});
const COUNT = Number(args.runs);
const TARGET_MS = 150;
const RUNS = 7;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.resolve(args.bin ?? path.join(root, 'bin', 'agentbox.js'));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function timeProcess(cwd: string, argv: string[]): number {
  const times: number[] = [];
  for (let i = 0; i <= RUNS; i++) {
    const start = performance.now();
    const result = spawnSync(process.execPath, argv, { cwd, encoding: 'utf8', maxBuffer: 1 << 28 });
    const ms = performance.now() - start;
    if (result.status !== 0)
      throw new Error(`${argv.join(' ')} failed (${result.status}):\n${result.stderr}`);
    if (i > 0) times.push(ms); // the first run warms the disk cache
  }
  return median(times);
}

function timeInProcess(fn: () => unknown): number {
  fn();
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    fn();
    times.push(performance.now() - start);
  }
  return median(times);
}

const fmt = (n: number) => n.toLocaleString('en-US');

const repo = gitRepo();
let missed = false;
try {
  if (!args.bin && !fs.existsSync(path.join(root, 'dist', 'cli', 'main.js'))) {
    throw new Error('dist/cli/main.js is missing — run "npm run build" first');
  }
  ensureLedger(repo.dir);
  const started = performance.now();
  writeRuns(repo.dir, COUNT - 1);
  // The newest run goes through the real API, so the fixture and createRun are proven to agree.
  const ledger = openLedger(repo.dir);
  const handle = await createRun(ledger, {
    type: 'fix',
    task: 'the newest run',
    envelope: ENVELOPE,
    repoShaStart: null,
  });
  await updateState(ledger, handle, { status: 'REVIEW' });
  console.log(
    `fixture: ${fmt(COUNT)} runs written in ${Math.round(performance.now() - started)} ms (${repo.dir})`,
  );

  const names = listRunNames(ledger);
  const dirs = names.map((name) => path.join(ledger.runsDir, name));
  console.log('\n--all strategies, in-process (median of 5):');
  const fold = timeInProcess(() => listRuns(ledger, {}));
  const states = timeInProcess(() => dirs.map((dir) => readState(dir)));
  const withMeta = timeInProcess(() => dirs.map((dir) => [readState(dir), readMeta(dir)]));
  console.log(`  fold INDEX.jsonl (chosen):                 ${fold.toFixed(1)} ms`);
  console.log(`  read every state.json (summary inside):    ${states.toFixed(1)} ms`);
  console.log(`  read every state.json + parse meta.yaml:   ${withMeta.toFixed(1)} ms`);
  const top = timeInProcess(() => listRuns(ledger, { limit: 20 }));
  console.log(`  default view (listRuns limit 20):          ${top.toFixed(1)} ms`);

  console.log(`\nwhole process, node bin/agentbox.js … (median of ${RUNS} after 1 warm-up):`);
  const floor = timeProcess(repo.dir, ['-e', '0']);
  const cliFloor = timeProcess(repo.dir, [bin, '--version']);
  console.log(`  floors: node -e 0 ${Math.round(floor)} ms; agentbox --version ${Math.round(cliFloor)} ms`);
  for (const argv of [['status'], ['status', '--all'], ['status', '--json'], ['status', '--json', '--all']]) {
    const ms = timeProcess(repo.dir, [bin, ...argv]);
    const ratio = ms / TARGET_MS;
    const ok = ratio <= 1;
    if (argv.length === 1 && !ok) missed = true;
    console.log(
      `  ${argv.join(' ')} (${fmt(COUNT)} runs): median ${Math.round(ms)} ms — target ${TARGET_MS} ms — ` +
        `ratio ${ratio.toFixed(2)} ${ok ? '✓' : '✗'}`,
    );
  }
} finally {
  if (args.keep) console.log(`\nkept the fixture: ${repo.dir}`);
  else repo.cleanup();
}
process.exitCode = missed ? 1 : 0;
