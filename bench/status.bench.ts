/**
 * `agentbox --version` and `agentbox status` with 10,000 runs on disk, whole process, as ratios of
 * `node -e 0` timed in the same run: --version ≤ 1.2×, status ≤ 1.5×, status --all ≤ 2×; and
 * `status --all` once more with .agents/cache deleted before each run (the whole fold, no target).
 * Run: `npm run build && npx tsx bench/status.bench.ts [--runs 10000] [--keep] [--bin bin/agentbox.cjs]`.
 * `--keep` leaves the fixture repo for profiling; `--bin` times another build of the CLI.
 * Exits 1 when a ratio misses its target.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readFoldedIndex } from '../src/ledger/fold-cache.js';
import {
  createRun,
  ensureLedger,
  foldIndex,
  listRunNames,
  listRuns,
  openLedger,
  readIndexLog,
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
/** Each command and its target as a ratio of `node -e 0` in the same run (issue 16). */
const CASES: ReadonlyArray<readonly [string[], number]> = [
  [['--version'], 1.2],
  [['status'], 1.5],
  [['status', '--json'], 1.5],
  [['status', '--all'], 2],
  [['status', '--json', '--all'], 2],
];
const RUNS = 7;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.resolve(args.bin ?? path.join(root, 'bin', 'agentbox.cjs'));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function timeProcess(cwd: string, argv: string[], before?: () => void): number {
  const times: number[] = [];
  for (let i = 0; i <= RUNS; i++) {
    before?.();
    const start = performance.now();
    // Output as bytes: decoding 4 MB of `--json --all` here (~5 ms) is this bench's cost, not agentbox's.
    const result = spawnSync(process.execPath, argv, { cwd, maxBuffer: 1 << 28 });
    const ms = performance.now() - start;
    if (result.status !== 0)
      throw new Error(`${argv.join(' ')} failed (${result.status}):\n${result.stderr.toString('utf8')}`);
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
  if (!args.bin && !fs.existsSync(path.join(root, 'dist', 'cli', 'main.cjs'))) {
    throw new Error('dist/cli/main.cjs is missing — run "npm run build" first');
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
  const cached = timeInProcess(() => listRuns(ledger, {}));
  const cachedFold = timeInProcess(() => readFoldedIndex(ledger));
  const fold = timeInProcess(() => foldIndex(readIndexLog(ledger).events));
  const states = timeInProcess(() => dirs.map((dir) => readState(dir)));
  const withMeta = timeInProcess(() => dirs.map((dir) => [readState(dir), readMeta(dir)]));
  console.log(`  listRuns --all, cached fold (chosen):      ${cached.toFixed(1)} ms`);
  console.log(`    of which the cached fold itself:         ${cachedFold.toFixed(1)} ms`);
  console.log(`  fold all of INDEX.jsonl (no cache):        ${fold.toFixed(1)} ms`);
  console.log(`  read every state.json (summary inside):    ${states.toFixed(1)} ms`);
  console.log(`  read every state.json + parse meta.yaml:   ${withMeta.toFixed(1)} ms`);
  const top = timeInProcess(() => listRuns(ledger, { limit: 20 }));
  const plainNames = timeInProcess(() => fs.readdirSync(ledger.runsDir).sort().reverse());
  console.log(`  default view (listRuns limit 20):          ${top.toFixed(1)} ms`);
  console.log(
    `    of which the cached names:               ${timeInProcess(() => listRunNames(ledger)).toFixed(1)} ms`,
  );
  console.log(`  readdir runs/ and sort (no cache):         ${plainNames.toFixed(1)} ms`);

  console.log(
    `\nwhole process, node bin/agentbox.cjs … (median of ${RUNS} after 1 warm-up), as ratios of node -e 0:`,
  );
  const floor = timeProcess(repo.dir, ['-e', '0']);
  console.log(`  node -e 0: ${Math.round(floor)} ms`);
  for (const [argv, target] of CASES) {
    const ms = timeProcess(repo.dir, [bin, ...argv]);
    const ratio = ms / floor;
    const ok = ratio <= target;
    if (!ok) missed = true;
    const what = argv[0] === 'status' ? `${argv.join(' ')} (${fmt(COUNT)} runs)` : argv.join(' ');
    console.log(
      `  ${what.padEnd(38)} ${String(Math.round(ms)).padStart(4)} ms — ratio ${ratio.toFixed(2)} (target ≤ ${target}) ${ok ? '✓' : '✗'}`,
    );
  }
  // The first `status --all` after the cache is gone (or the log was rewritten): the whole fold.
  const cold = timeProcess(repo.dir, [bin, 'status', '--all'], () =>
    fs.rmSync(path.join(ledger.dir, 'cache'), { recursive: true, force: true }),
  );
  console.log(
    `  ${'status --all, no .agents/cache'.padEnd(38)} ${String(Math.round(cold)).padStart(4)} ms — ratio ${(cold / floor).toFixed(2)} (no target)`,
  );
} finally {
  if (args.keep) console.log(`\nkept the fixture: ${repo.dir}`);
  else repo.cleanup();
}
process.exitCode = missed ? 1 : 0;
