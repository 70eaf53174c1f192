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
  applyStatePatch,
  createRun,
  ensureLedger,
  foldIndex,
  type IndexEvent,
  listRunNames,
  listRuns,
  makeIndexEvent,
  openLedger,
  type RunStatus,
  readMeta,
  readState,
  renderIndexMd,
  setLatest,
  updateState,
} from '../src/ledger/index.js';
import { serializeIndexEvent } from '../src/ledger/index-log.js';
import { buildMeta, serializeMeta } from '../src/ledger/meta.js';
import { formatRunName, slugify } from '../src/ledger/names.js';
import { initialState, serializeState } from '../src/ledger/state.js';
import { RUN_TYPES } from '../src/ledger/types.js';
import { gitRepo } from '../test/helpers/git-repo.js';

const { values: args } = parseArgs({
  options: { runs: { type: 'string', default: '10000' }, keep: { type: 'boolean' }, bin: { type: 'string' } },
});
const COUNT = Number(args.runs);
const TARGET_MS = 150;
const RUNS = 7;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.resolve(args.bin ?? path.join(root, 'bin', 'agentbox.js'));

const ENDINGS: RunStatus[] = [
  'DONE',
  'REVIEW',
  'MERGED',
  'CRASHED',
  'DONE',
  'DISCARDED',
  'ABORTED',
  'STALLED',
];
const TASKS = [
  'why is db latency high?',
  'optimize auth middleware',
  'fix "a; rm -rf ~" in the login form',
  'Révise la façade du cache',
  'plan the migration to the new queue',
];
const ENVELOPE = {
  model: 'claude-sonnet-4-5',
  tools_allowlist: ['Read', 'Grep', 'Glob'],
  safe_commands: [],
  human_only_commands: [],
};

/** Writes `count` runs with the ledger's own serializers: the bytes createRun/updateState write. */
function writeRuns(repoRoot: string, count: number): void {
  const ledger = openLedger(repoRoot);
  const base = Date.UTC(2025, 0, 1);
  const index: string[] = [];
  const events: IndexEvent[] = [];
  for (let i = 0; i < count; i++) {
    // 47 s apart: most minutes hold one run, some two (exercises the same-minute ordering).
    const now = new Date(base + i * 47_000);
    const type = RUN_TYPES[i % RUN_TYPES.length]!;
    const task = `${TASKS[i % TASKS.length]} #${i}`;
    const slug = slugify(task, type);
    const id = (0x100000 + i).toString(16).slice(-6);
    const name = formatRunName(now, slug, id);
    const dir = path.join(ledger.runsDir, name);
    fs.mkdirSync(path.join(dir, 'raw'), { recursive: true });
    const meta = buildMeta({
      name,
      id,
      slug,
      type,
      task,
      envelope: ENVELOPE,
      repoRoot,
      repoShaStart: null,
      now,
    });
    fs.writeFileSync(path.join(dir, 'meta.yaml'), serializeMeta(meta), { flag: 'wx' });
    let state = initialState(meta, now, null);
    const created = makeIndexEvent(meta, state, 'created', undefined, now);
    const status = ENDINGS[i % ENDINGS.length]!;
    const end = new Date(now.getTime() + 30_000);
    const failure = ['CRASHED', 'ABORTED', 'STALLED'].includes(status)
      ? { kind: 'crashed' as const, message: 'claude exited with code 1' }
      : null;
    state = applyStatePatch(state, { status, failure, tool_calls: i % 40 }, end);
    fs.writeFileSync(path.join(dir, 'state.json'), serializeState(state));
    if (status === 'DONE') fs.writeFileSync(path.join(dir, 'report.md'), `# ${task}\n`);
    const ended = makeIndexEvent(meta, state, status.toLowerCase(), failure?.message, end);
    index.push(serializeIndexEvent(created), serializeIndexEvent(ended));
    events.push(created, ended);
  }
  fs.writeFileSync(ledger.indexJsonl, index.join(''));
  fs.writeFileSync(ledger.indexMd, renderIndexMd(foldIndex(events)));
  const last = listRunNames(ledger)[0];
  if (last) setLatest(ledger, last);
}

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
