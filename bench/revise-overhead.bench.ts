/**
 * What a revision costs on top of Claude Code itself (issue 39): `agentbox revise <run> "<message>"`
 * against the same turn sent with `claude --resume <session id> -p "<message>"` straight in the
 * run's worktree, same scripted model, same session. Everything agentbox does around the turn (the
 * envelope check, the revision's record and checkpoint, the sandbox and hooks, the supervisor's
 * rules, the patch set: its commit, whole change and interdiff) is the difference.
 * Target: ≤ 1.2× the direct turn. Alternating rounds, medians, one warm-up each.
 * Run: `npm run build && npx tsx bench/revise-overhead.bench.ts [--runs 7]`. Exits 1 on a miss.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { bash, startModelServer, text } from '../test/fixtures/model-server/index.js';
import { CLAUDE_BIN, claudeEnv, claudeHome } from '../test/helpers/claude.js';
import { gitRepo } from '../test/helpers/git-repo.js';
import { captureWrapper, replayer } from './box-replay.js';
import { type OwnPart, ownPartLine, ownPartPreload, readOwnPart } from './own-part.js';
import { median, timeProcess } from './process-time.js';
import { startResident } from './resident.js';

const { values: args } = parseArgs({ options: { runs: { type: 'string', default: '7' } } });
const RUNS = Number(args.runs);
const TARGET_RATIO = 1.2;
const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'agentbox.cjs');
const TASK = 'BENCH-REVISE add a line to notes.txt';

const time = timeProcess;

const server = await startModelServer([
  { when: { anyText: TASK, turn: 0 }, reply: bash('echo one more line >> notes.txt') },
  { when: {}, reply: text('Done: the line is there.') },
]);
const home = claudeHome();
const repo = gitRepo({ files: { 'notes.txt': 'first line\n' } });
const env = { ...claudeEnv({ home, modelUrl: server.url }), AGENTBOX_CLAUDE_BIN: CLAUDE_BIN };
let missed = false;
const stops: (() => Promise<void>)[] = [];
try {
  await time(process.execPath, [BIN, 'init'], repo.dir, env);
  repo.commit('agentbox init');
  await time(process.execPath, [BIN, 'fix', TASK], repo.dir, env);
  const runsDir = path.join(repo.dir, '.agents', 'runs');
  const [name] = fs.readdirSync(runsDir).filter((n) => fs.existsSync(path.join(runsDir, n, 'state.json')));
  const state = JSON.parse(fs.readFileSync(path.join(runsDir, name!, 'state.json'), 'utf8'));
  if (state.status !== 'REVIEW') throw new Error(`the fix run ended ${state.status}, not REVIEW`);
  const worktree: string = state.worktree_path;
  const session: string = state.session_id;
  let round = 0;
  // One revision through the capture wrapper: claude with the revision's box, replayed alone below.
  const kept = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-bench-box-'));
  stops.push(async () => fs.rmSync(kept, { recursive: true, force: true }));
  const capture = { ...env, AGENTBOX_CLAUDE_BIN: captureWrapper(kept) };
  await time(process.execPath, [BIN, 'revise', name!, `revision turn ${++round}`], repo.dir, capture);
  const box = await replayer(kept, worktree, time);
  stops.unshift(() => box.close());
  // Each revise's own part (node's start, before and after claude, its CPU): bench/own-part.ts.
  const preload = ownPartPreload(kept, CLAUDE_BIN);
  const ownFile = path.join(kept, 'own');
  const own: OwnPart[] = [];
  const ownResident: OwnPart[] = [];
  // The same revision handed to the resident agentbox (docs/resident.md) a first revision started.
  const resident = await startResident(BIN, env, repo.dir, ['revise', name!, `revision turn ${++round}`]);
  stops.unshift(() => resident.stop());
  const revise = (served: boolean) => async () => {
    const argv = ['-r', preload, BIN, 'revise', name!, `revision turn ${++round}`];
    const ms = await time(process.execPath, argv, repo.dir, {
      ...env,
      BENCH_OWN_FILE: ownFile,
      ...(served ? {} : { AGENTBOX_RESIDENT: '0' }),
    });
    (served ? ownResident : own).push(readOwnPart(ownFile));
    return ms;
  };
  const runs: (() => Promise<number>)[] = [
    () => time(CLAUDE_BIN, ['--resume', session, '-p', `direct turn ${++round}`], worktree, env),
    () => box.run(),
    revise(false),
    revise(true),
  ];
  for (const run of runs) await run();
  own.length = 0;
  ownResident.length = 0;
  const figures: number[][] = runs.map(() => []);
  for (let i = 0; i < RUNS; i++) {
    for (let k = 0; k < runs.length; k++) {
      const at = (i + k) % runs.length;
      figures[at]!.push(await runs[at]!());
    }
  }
  const [direct, boxed, revised, served] = figures as [number[], number[], number[], number[]];
  const ratio = median(revised) / median(direct);
  // The target is the resident revision's (a person's commands after their first, which starts it).
  const servedRatio = median(served) / median(direct);
  missed = servedRatio > TARGET_RATIO;
  console.log(`revise overhead, ${RUNS} rounds (median), node ${process.version}:`);
  console.log(`  claude --resume <session> -p "<message>" in the worktree: ${Math.round(median(direct))} ms`);
  console.log(
    `  claude with the revision's box, without agentbox (its arguments, environment and settings replayed): ${Math.round(median(boxed))} ms, ${(median(boxed) / median(direct)).toFixed(2)}× — Claude Code's own part, not gated`,
  );
  console.log(`  agentbox revise <run> "<message>": ${Math.round(median(revised))} ms`);
  console.log(
    `    ${ratio.toFixed(2)}× the direct turn — not gated — overhead ${Math.round(median(revised) - median(direct))} ms`,
  );
  console.log(`    where the time goes: ${ownPartLine(own)}`);
  console.log(
    `  agentbox revise <run> "<message>", resident (the one a first revision started): ${Math.round(median(served))} ms`,
  );
  console.log(
    `    ${servedRatio.toFixed(2)}× the direct turn — target ≤ ${TARGET_RATIO}× ${missed ? '✗' : '✓'} — overhead ${Math.round(median(served) - median(direct))} ms`,
  );
  console.log(`    where the time goes: ${ownPartLine(ownResident)}`);
} finally {
  for (const stop of stops) await stop();
  await server.close();
  home.cleanup();
  repo.cleanup();
}
process.exitCode = missed ? 1 : 0;
