/**
 * What a scout run costs on top of Claude Code itself (issue 16): `agentbox scout "<question>"`
 * against plain `claude -p "<question>"`, same scripted model, same question, same repository, as a
 * new user would run them (default configuration: supervisor `rules`). Everything agentbox does
 * before claude starts (settings, endpoint, ledger entry) and after it exits (finalisation, the
 * report) is the difference. Target: ≤ 0.2 s. Alternating rounds, medians, one warm-up each.
 * Run: `npm run build && npx tsx bench/scout-overhead.bench.ts [--runs 7] [--bin <agentbox.cjs>]`
 * (`--bin`: time another build). Exits 1 on a miss.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startModelServer, text } from '../test/fixtures/model-server/index.js';
import { CLAUDE_BIN, claudeEnv, claudeHome } from '../test/helpers/claude.js';
import { gitRepo } from '../test/helpers/git-repo.js';

const { values: args } = parseArgs({
  options: { runs: { type: 'string', default: '7' }, bin: { type: 'string' } },
});
const RUNS = Number(args.runs);
const TARGET_MS = 200;
const BIN = path.resolve(
  args.bin ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'agentbox.cjs'),
);
const QUESTION = 'what does greet() return?';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** A whole process, spawn to exit, in ms; it must succeed. (Async: the model server answers meanwhile.) */
function time(command: string, argv: string[], cwd: string, env: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(command, argv, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('exit', (code) =>
      code === 0
        ? resolve(performance.now() - start)
        : reject(new Error(`${command} ${argv.join(' ')} exited ${code}:\n${stderr}`)),
    );
  });
}

const server = await startModelServer([{ when: {}, reply: text('`greet(name)` returns `hello <name>`.') }]);
const home = claudeHome();
const repo = gitRepo({ files: { 'src/greet.js': 'module.exports = (name) => "hello " + name;\n' } });
const env = { ...claudeEnv({ home, modelUrl: server.url }), AGENTBOX_CLAUDE_BIN: CLAUDE_BIN };
let missed = false;
try {
  await time(process.execPath, [BIN, 'init'], repo.dir, env);
  repo.commit('agentbox init');
  const plain = () => time(CLAUDE_BIN, ['-p', QUESTION], repo.dir, env);
  const scout = () => time(process.execPath, [BIN, 'scout', QUESTION], repo.dir, env);
  await plain();
  await scout();
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    // Alternating order, so a slow drift of the machine hits both alike.
    if (i % 2 === 0) {
      a.push(await plain());
      b.push(await scout());
    } else {
      b.push(await scout());
      a.push(await plain());
    }
  }
  const overhead = median(b) - median(a);
  const paired = median(b.map((v, i) => v - a[i]!));
  const ratio = overhead / TARGET_MS;
  missed = ratio > 1;
  console.log(`scout overhead, ${RUNS} rounds (median):`);
  console.log(`  claude -p "${QUESTION}": ${Math.round(median(a))} ms`);
  console.log(`  agentbox scout "${QUESTION}": ${Math.round(median(b))} ms`);
  console.log(
    `  overhead ${Math.round(overhead)} ms (paired ${Math.round(paired)} ms) — target ${TARGET_MS} ms — ratio ${ratio.toFixed(2)} ${missed ? '✗' : '✓'}`,
  );
} finally {
  await server.close();
  home.cleanup();
  repo.cleanup();
}
process.exitCode = missed ? 1 : 0;
