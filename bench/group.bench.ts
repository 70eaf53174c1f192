/**
 * What a group costs against one run (issue 31), same scripted task, same repository, on the real
 * Claude Code with its sandbox:
 *  - wall time of `agentbox fix "<task>" --attempts 4` (all four at once) against one `agentbox fix
 *    "<task>"`, spawn to exit. Target ≤ 2×.
 *  - agentbox's own memory: the peak RSS (VmHWM) of the foreground agentbox process — the one
 *    process that runs a group's attempts (src/group/run.ts) — for `--attempts 8` against one run's.
 *    claude and its sandbox are not counted: they are the same per attempt with or without agentbox.
 *    Target ≤ 1.5×. Each figure is read by the process itself as it exits (a preloaded reporter
 *    reads /proc/self/status), so the peak is whole, finalisation included.
 * Rounds take turns going first; medians of --runs rounds. Every attempt must end REVIEW (the
 * script passes runs.verify and the output contract), else the figures mean nothing and it exits 2.
 * Run: `npm run build && npx tsx bench/group.bench.ts [--runs 3]`. Exits 1 on a missed target.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  type RequestView,
  type Rule,
  startModelServer,
  text,
  tool,
} from '../test/fixtures/model-server/index.js';
import { CLAUDE_BIN, claudeEnv, claudeHome } from '../test/helpers/claude.js';
import { gitRepo } from '../test/helpers/git-repo.js';
import { GROUP_FILES } from '../test/helpers/group.js';
import { killTagged, newTestTag, processesWithTag } from '../test/helpers/processes.js';
import { trustAsIs } from '../test/helpers/project.js';

const { values: args } = parseArgs({
  options: { runs: { type: 'string', default: '3' }, 'node-flags': { type: 'string', default: '' } },
});
/** Flags for the agentbox processes' node (e.g. `--max-semi-space-size=1`), to see where memory goes. */
const NODE_FLAGS = args['node-flags'].split(' ').filter(Boolean);
const RUNS = Number(args.runs);
const WALL_TARGET = 2;
const MEMORY_TARGET = 1.5;
const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'agentbox.cjs');

const median = (values: number[]) => {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/**
 * Preloaded into each agentbox: as it exits, its peak and last RSS (kB, /proc/self/status), and
 * the peaks of its V8 heap in use and of memory outside the heap (buffers), sampled every 100 ms
 * (what a peak RSS is made of).
 */
const REPORTER = `
const fs = require('node:fs');
const peak = { heapUsed: 0, heapTotal: 0, external: 0 };
const sample = () => {
  const m = process.memoryUsage();
  for (const k of Object.keys(peak)) peak[k] = Math.max(peak[k], m[k]);
};
setInterval(sample, 100).unref();
process.once('exit', () => {
  sample();
  const s = fs.readFileSync('/proc/self/status', 'utf8');
  const kb = (k) => Number(new RegExp('^' + k + ':\\\\s+(\\\\d+)', 'm').exec(s)[1]);
  fs.writeFileSync(process.env.BENCH_RSS_FILE, JSON.stringify({ hwm: kb('VmHWM'), rss: kb('VmRSS'), ...peak }));
});
`;

function memoryReporter(dir: string): string {
  const file = path.join(dir, 'rss-report.cjs');
  fs.writeFileSync(file, REPORTER);
  return file;
}

/** Every run of `task` (each attempt alike) sets x to 42, passing runs.verify, and answers in the contract's shape. */
function passingRules(task: string): Rule[] {
  return [
    {
      when: { anyText: task, turn: 0 },
      reply: (r: RequestView) =>
        tool('Edit', {
          file_path: path.join(r.workingDirectory!, 'src/app.ts'),
          old_string: 'export const x = 1;',
          new_string: 'export const x = 42;',
        }),
    },
    { when: { anyText: task }, reply: text('## Summary\nSet x to 42.') },
  ];
}

interface Figure {
  readonly ms: number;
  /** VmHWM of the agentbox process, MB. */
  readonly hwmMb: number;
  /** Peaks of the V8 heap in use and of memory outside it (buffers), MB. */
  readonly heapMb: number;
  readonly externalMb: number;
}

const server = await startModelServer([]);
const home = claudeHome();
const repo = gitRepo({ files: GROUP_FILES });
const tag = newTestTag();
const env = {
  ...claudeEnv({ home, modelUrl: server.url, extra: { AGENTBOX_TEST_TAG: tag, AGENTBOX_LINEAGE: tag } }),
  AGENTBOX_CLAUDE_BIN: CLAUDE_BIN,
};
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-bench-group-'));
const reporter = memoryReporter(scratch);
const rssFile = path.join(scratch, 'rss.json');
let task = 0;

/** One `agentbox fix` of a fresh task whose every attempt passes; its wall time and peak RSS. */
function fix(attempts: number): Promise<Figure> {
  const name = `BENCH-GROUP-${++task} set x`;
  server.setRules(passingRules(name));
  const argv = [...NODE_FLAGS, '-r', reporter, BIN, 'fix', name, '--json'];
  if (attempts > 1) argv.push('--attempts', String(attempts), '--max-parallel', String(attempts));
  trustAsIs(repo.dir, env);
  fs.rmSync(rssFile, { force: true });
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(process.execPath, argv, {
      cwd: repo.dir,
      env: { ...env, BENCH_RSS_FILE: rssFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('close', (code) => {
      const ms = performance.now() - start;
      if (code !== 0)
        return reject(
          new Error(`agentbox ${argv.slice(NODE_FLAGS.length + 3).join(' ')} exited ${code}:\n${out}${err}`),
        );
      // A run prints its outcome as indented JSON; a group, one line per attempt's end, then its own.
      const result = JSON.parse(attempts > 1 ? out.trim().split('\n').at(-1)! : out);
      const statuses: (string | null)[] = result.attempts
        ? result.attempts.map((a: { status: string | null }) => a.status)
        : [result.status];
      if (statuses.some((s) => s !== 'REVIEW'))
        return reject(new Error(`not every attempt ended REVIEW: ${statuses.join(', ')}\n${out}`));
      const m = JSON.parse(fs.readFileSync(rssFile, 'utf8'));
      resolve({ ms, hwmMb: m.hwm / 1024, heapMb: m.heapUsed / 2 ** 20, externalMb: m.external / 2 ** 20 });
    });
  });
}

let code = 0;
try {
  console.log(
    `load average at start: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  const init = spawn(process.execPath, [BIN, 'init'], { cwd: repo.dir, env, stdio: 'ignore' });
  await new Promise((r) => init.on('close', r));
  repo.commit('agentbox init');
  // Warm-up: the page cache, Claude Code's first start in this HOME.
  await fix(1);
  const one: Figure[] = [];
  const four: Figure[] = [];
  const eight: Figure[] = [];
  for (let i = 0; i < RUNS; i++) {
    const order: [Figure[], number][] = [
      [one, 1],
      [four, 4],
      [eight, 8],
    ];
    // Each round starts one further along, so a drift of the machine's load hits all alike.
    for (let k = 0; k < order.length; k++) {
      const [list, attempts] = order[(i + k) % order.length]!;
      list.push(await fix(attempts));
    }
    const last = (l: Figure[]) => `${(l.at(-1)!.ms / 1000).toFixed(1)} s, ${l.at(-1)!.hwmMb.toFixed(1)} MB`;
    console.log(
      `  round ${i + 1}: one run ${last(one)} · 4 attempts ${last(four)} · 8 attempts ${last(eight)} · load ${os.loadavg()[0]!.toFixed(1)}`,
    );
  }
  const ms = (l: Figure[]) => median(l.map((f) => f.ms));
  const mb = (l: Figure[]) => median(l.map((f) => f.hwmMb));
  const wall = ms(four) / ms(one);
  const memory = mb(eight) / mb(one);
  console.log(
    `wall time: one run ${(ms(one) / 1000).toFixed(1)} s, 4 attempts ${(ms(four) / 1000).toFixed(1)} s: ${wall.toFixed(2)}× (target ≤ ${WALL_TARGET}×) ${wall <= WALL_TARGET ? 'ok' : 'MISSED'}`,
  );
  console.log(
    `agentbox peak RSS (VmHWM): one run ${mb(one).toFixed(1)} MB, 4 attempts ${mb(four).toFixed(1)} MB, 8 attempts ${mb(eight).toFixed(1)} MB: ${memory.toFixed(2)}× (target ≤ ${MEMORY_TARGET}×) ${memory <= MEMORY_TARGET ? 'ok' : 'MISSED'}`,
  );
  const part = (l: Figure[], k: 'heapMb' | 'externalMb') => median(l.map((f) => f[k])).toFixed(1);
  console.log(
    `  peak V8 heap in use: ${part(one, 'heapMb')} / ${part(four, 'heapMb')} / ${part(eight, 'heapMb')} MB; outside the heap: ${part(one, 'externalMb')} / ${part(four, 'externalMb')} / ${part(eight, 'externalMb')} MB (one / 4 / 8)`,
  );
  console.log(`  8 attempts add ${((mb(eight) - mb(one)) / 7).toFixed(1)} MB per attempt over one run`);
  if (wall > WALL_TARGET || memory > MEMORY_TARGET) code = 1;
} catch (error) {
  console.error((error as Error).message);
  code = 2;
} finally {
  let left = processesWithTag(tag);
  for (let i = 0; i < 100 && left.length > 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    left = processesWithTag(tag);
  }
  if (left.length > 0) {
    console.error(`${left.length} process(es) left behind, killed: ${left.map((p) => p.cmdline).join('; ')}`);
    code = 2;
  }
  killTagged(tag);
  await server.close();
  home.cleanup();
  repo.cleanup();
  fs.rmSync(scratch, { recursive: true, force: true });
}
process.exit(code);
