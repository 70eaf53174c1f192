/**
 * Runs published through git, at team scale: a generated `origin` holding 10,000 published runs
 * (refs/agentbox/runs/* and a branch each, written with `git fast-import`), a fresh clone, then
 * `agentbox fetch` (all new), `agentbox fetch` again (nothing new), and `agentbox status` /
 * `status --all` with the 10,000 fetched runs. Prints the figures and the bytes the remote holds
 * per run. Targets: a second fetch ≤ 5 s, status ≤ 1 s (the status bench gates it finely).
 * Run: `npm run build && npx tsx bench/remote.bench.ts [--runs 10000] [--keep]`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildMeta, serializeMeta } from '../src/ledger/meta.js';
import { formatRunName } from '../src/ledger/names.js';
import { applyStatePatch, initialState, serializeState } from '../src/ledger/state.js';
import { publicationText } from '../src/remote/publish.js';
import { GIT_ENV, gitRepo, tempDir } from '../test/helpers/git-repo.js';
import { ENVELOPE } from './ledger-fixture.js';

const { values: args } = parseArgs({
  options: { runs: { type: 'string', default: '10000' }, keep: { type: 'boolean' } },
});
const COUNT = Number(args.runs);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'bin', 'agentbox.cjs');
const env = { ...process.env, ...GIT_ENV, AGENTBOX_HOST: 'bench-runner' };
const fmt = (n: number) => n.toLocaleString('en-US');
const since = (start: number) => Math.round(performance.now() - start);

/** One published run's files, shaped like a real fix run's (sizes as measured, see docs/scaling.md). */
function runFiles(i: number, base: string): { name: string; files: [string, string][] } {
  const now = new Date(Date.UTC(2026, 0, 1) + i * 60_000);
  const name = formatRunName(now, `task-number-${i % 97}`, i.toString(16).padStart(6, '0'));
  const meta = buildMeta({
    name,
    id: name.slice(-6),
    slug: `task-number-${i % 97}`,
    type: 'fix',
    task: `fix the thing number ${i}`,
    envelope: ENVELOPE,
    repoRoot: '/home/runner/work/repo',
    repoShaStart: base,
    now,
  });
  const state = applyStatePatch(
    initialState(meta, now, 4242),
    { status: i % 5 === 0 ? 'DONE' : 'REVIEW', tool_calls: 20 + (i % 13) },
    new Date(now.getTime() + 300_000),
  );
  const events = Array.from(
    { length: 20 },
    (_, k) =>
      `{"ts":"${now.toISOString()}","event":"PostToolUse","tool":"Edit","target":"src/module-${k}.ts","n":${i * 20 + k}}`,
  ).join('\n');
  const patch = `diff --git a/src/module-${i % 50}.ts b/src/module-${i % 50}.ts\n--- a/src/module-${i % 50}.ts\n+++ b/src/module-${i % 50}.ts\n@@ -1 +1 @@\n-export const v = 1;\n+export const v = ${i};\n`;
  return {
    name,
    files: [
      ['meta.yaml', serializeMeta(meta)],
      ['state.json', serializeState(state)],
      ['events.jsonl', `${events}\n`],
      ['report.md', `# fix report: ${name}\n\n## Summary\nChanged v to ${i} in module ${i % 50}.\n`],
      ['changes.patch', patch],
      ['prompt.md', `You are working on task ${i}.\n${'Follow the project rules. '.repeat(24)}\n`],
      ['publication.json', publicationText('bench-runner', meta.agentbox_version)],
    ],
  };
}

/** A fast-import stream: a commit per run on refs/agentbox/runs/<run>, and its branch at main. */
function fastImport(base: string): Buffer {
  const parts: string[] = [];
  for (let i = 0; i < COUNT; i++) {
    const { name, files } = runFiles(i, base);
    const message = `agentbox run ${name}\n`;
    parts.push(
      `commit refs/agentbox/runs/${name}\ncommitter agentbox <agentbox@localhost> ${1767225600 + i * 60} +0000\n`,
    );
    parts.push(`data ${Buffer.byteLength(message)}\n${message}`);
    for (const [file, text] of files)
      parts.push(`M 100644 inline ${file}\ndata ${Buffer.byteLength(text)}\n${text}\n`);
    parts.push(`\nreset refs/heads/agentbox/${name}\nfrom ${base}\n\n`);
  }
  return Buffer.from(parts.join(''));
}

function agentbox(cwd: string, argv: string[]): { ms: number; stdout: string } {
  const start = performance.now();
  const r = spawnSync(process.execPath, [bin, ...argv], { cwd, env, encoding: 'utf8', maxBuffer: 1 << 28 });
  const ms = performance.now() - start;
  if (r.status !== 0) throw new Error(`agentbox ${argv.join(' ')} failed (${r.status}):\n${r.stderr}`);
  return { ms, stdout: r.stdout };
}

function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
}

const origin = gitRepo({ bare: true });
const work = tempDir('agentbox-bench-remote-');
let missed = false;
try {
  if (!fs.existsSync(path.join(root, 'dist', 'cli', 'main.cjs')))
    throw new Error('run "npm run build" first');
  const seed = gitRepo({ files: { 'src/app.ts': 'export const x = 1;\n' } });
  seed.git('push', '--quiet', origin.dir, 'main');
  const base = seed.git('rev-parse', 'HEAD').trim();
  seed.cleanup();
  let start = performance.now();
  execFileSync('git', ['fast-import', '--quiet'], { cwd: origin.dir, env, input: fastImport(base) });
  execFileSync('git', ['gc', '--quiet'], { cwd: origin.dir, env });
  console.log(
    `origin: ${fmt(COUNT)} published runs generated with fast-import and packed in ${since(start)} ms`,
  );
  const pack = fs
    .readdirSync(path.join(origin.dir, 'objects', 'pack'))
    .filter((f) => f.endsWith('.pack'))
    .reduce((sum, f) => sum + fs.statSync(path.join(origin.dir, 'objects', 'pack', f)).size, 0);
  const refs = fs.statSync(path.join(origin.dir, 'packed-refs')).size;
  console.log(
    `  packed objects ${fmt(pack)} bytes, packed-refs ${fmt(refs)} bytes: ${fmt(Math.round((pack + refs) / COUNT))} bytes per run`,
  );

  const laptop = path.join(work, 'laptop');
  // A person's clone of main only: the 10,000 run branches come with agentbox fetch, not git clone.
  execFileSync('git', ['clone', '--quiet', '--single-branch', '--branch', 'main', origin.dir, laptop], {
    env,
  });
  execFileSync('git', ['config', 'user.email', 'b@x'], { cwd: laptop, env });
  agentbox(laptop, ['init']);

  const first = agentbox(laptop, ['fetch', '--json']);
  const result = JSON.parse(first.stdout);
  console.log(
    `\nagentbox fetch, first (${fmt(result.imported.length)} new runs): ${fmt(Math.round(first.ms))} ms`,
  );
  if (result.imported.length !== COUNT)
    throw new Error(`imported ${result.imported.length}, expected ${COUNT}`);
  const again = median([0, 1, 2].map(() => agentbox(laptop, ['fetch']).ms));
  const ok = (ms: number, target: number) => {
    if (ms > target) missed = true;
    return `${fmt(Math.round(ms))} ms (target ≤ ${fmt(target)}) ${ms <= target ? '✓' : '✗'}`;
  };
  console.log(`agentbox fetch, again (nothing new, median of 3): ${ok(again, 5000)}`);
  start = performance.now();
  const status = median([0, 1, 2, 3, 4].map(() => agentbox(laptop, ['status']).ms));
  const all = median([0, 1, 2].map(() => agentbox(laptop, ['status', '--all']).ms));
  console.log(`agentbox status with ${fmt(COUNT)} fetched runs (median of 5): ${ok(status, 1000)}`);
  console.log(`agentbox status --all (median of 3): ${ok(all, 3000)}`);
  const ledgerBytes = Number(
    execFileSync('du', ['-sb', path.join(laptop, '.agents')], { encoding: 'utf8' }).split('\t')[0],
  );
  console.log(
    `the laptop's .agents/ after the fetch: ${fmt(ledgerBytes)} bytes (${fmt(Math.round(ledgerBytes / COUNT))} per run)`,
  );
} finally {
  if (args.keep) console.log(`\nkept: origin ${origin.dir}, laptop ${work}`);
  else {
    origin.cleanup();
    fs.rmSync(work, { recursive: true, force: true });
  }
}
process.exitCode = missed ? 1 : 0;
