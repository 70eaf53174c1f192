/**
 * What a revision costs on top of Claude Code itself (issue 39): `agentbox revise <run> "<message>"`
 * against the same turn sent with `claude --resume <session id> -p "<message>"` straight in the
 * run's worktree, same scripted model, same session. Everything agentbox does around the turn (the
 * envelope check, the revision's record and checkpoint, the sandbox and hooks, the supervisor's
 * rules, the patch set: its commit, whole change and interdiff) is the difference.
 * The gated figure is the revision a resident agentbox serves, which takes the claude it started for
 * it while the person reviewed (a standby, src/run/standby/): so the direct turn and the box alone
 * resume copies of a second run's session (revised cold), and the served run's session holds only
 * its own revisions, as a person's does; every timed command waits SETTLE_MS first (a person reads
 * between two), whichever it is.
 * Target: ≤ 1.2× the direct turn. Alternating rounds, medians, one warm-up each.
 * Run: `npm run build && npx tsx bench/revise-overhead.bench.ts [--runs 7]`. Exits 1 on a miss.
 */

import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { claudeConfigDir, findTranscript } from '../src/claude/transcript.js';
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
/** The pause before each timed command (a person reads between two). */
const SETTLE_MS = 1500;

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
  // Two fix runs: one revised by the resident agentbox, one by agentbox run cold; the direct turns
  // and the box alone go on copies of the second's session. So nothing but its own revisions goes
  // on in the first's session, as for a person reviewing: the resident's standby (src/run/standby/)
  // stays what its next revision would start. Each session grows by one turn a round.
  const served = await fixRun();
  const cold = await fixRun();
  let round = 0;
  // One revision through the capture wrapper: claude with the revision's box, replayed alone below.
  const kept = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-bench-box-'));
  stops.push(async () => fs.rmSync(kept, { recursive: true, force: true }));
  const capture = { ...env, AGENTBOX_CLAUDE_BIN: captureWrapper(kept) };
  await time(process.execPath, [BIN, 'revise', cold.name, `revision turn ${++round}`], repo.dir, capture);
  const box = await replayer(kept, cold.worktree, time);
  stops.unshift(() => box.close());
  // Each revise's own part (node's start, before and after claude, its CPU): bench/own-part.ts.
  const preload = ownPartPreload(kept, CLAUDE_BIN);
  const ownFile = path.join(kept, 'own');
  const own: OwnPart[] = [];
  const ownResident: OwnPart[] = [];
  // The same revision handed to the resident agentbox (docs/resident.md) a first revision started.
  const resident = await startResident(BIN, env, repo.dir, [
    'revise',
    served.name,
    `revision turn ${++round}`,
  ]);
  stops.unshift(() => resident.stop());
  const revise = (byResident: boolean) => async () => {
    const argv = [
      '-r',
      preload,
      BIN,
      'revise',
      (byResident ? served : cold).name,
      `revision turn ${++round}`,
    ];
    const ms = await time(process.execPath, argv, repo.dir, {
      ...env,
      BENCH_OWN_FILE: ownFile,
      ...(byResident ? {} : { AGENTBOX_RESIDENT: '0' }),
    });
    (byResident ? ownResident : own).push(readOwnPart(ownFile));
    return ms;
  };
  const runs: (() => Promise<number>)[] = [
    () =>
      time(
        CLAUDE_BIN,
        ['--resume', copyOf(cold.session), '-p', `direct turn ${++round}`],
        cold.worktree,
        env,
      ),
    () => box.run(copyOf(cold.session)),
    revise(false),
    revise(true),
  ];
  for (const run of runs) await run();
  own.length = 0;
  ownResident.length = 0;
  const tookBefore = standbysTaken(served.name);
  const figures: number[][] = runs.map(() => []);
  for (let i = 0; i < RUNS; i++) {
    for (let k = 0; k < runs.length; k++) {
      const at = (i + k) % runs.length;
      // A person reads the change between two commands: what a command left (the resident's
      // standby starting) settles before the next one is timed, whichever it is.
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      figures[at]!.push(await runs[at]!());
    }
  }
  const took = standbysTaken(served.name) - tookBefore;
  const [direct, boxed, revised, resided] = figures as [number[], number[], number[], number[]];
  const ratio = median(revised) / median(direct);
  // The target is the resident revision's (a person's commands after their first, which starts it).
  const servedRatio = median(resided) / median(direct);
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
    `  agentbox revise <run> "<message>", resident (the one a first revision started): ${Math.round(median(resided))} ms — ${took} of ${RUNS} took the claude kept ready since the last (a standby)`,
  );
  console.log(
    `    ${servedRatio.toFixed(2)}× the direct turn — target ≤ ${TARGET_RATIO}× ${missed ? '✗' : '✓'} — overhead ${Math.round(median(resided) - median(direct))} ms`,
  );
  console.log(`    where the time goes: ${ownPartLine(ownResident)}`);
} finally {
  for (const stop of stops) await stop();
  await server.close();
  home.cleanup();
  repo.cleanup();
}
process.exitCode = missed ? 1 : 0;

/** A fix run of TASK, in REVIEW: its name, worktree and session. */
async function fixRun(): Promise<{ name: string; worktree: string; session: string }> {
  const runsDir = path.join(repo.dir, '.agents', 'runs');
  const before = new Set(fs.existsSync(runsDir) ? fs.readdirSync(runsDir) : []);
  await time(process.execPath, [BIN, 'fix', TASK], repo.dir, env);
  const name = fs.readdirSync(runsDir).find((n) => !before.has(n))!;
  const state = JSON.parse(fs.readFileSync(path.join(runsDir, name, 'state.json'), 'utf8'));
  if (state.status !== 'REVIEW') throw new Error(`the fix run ended ${state.status}, not REVIEW`);
  return { name, worktree: state.worktree_path, session: state.session_id };
}

/** A copy of session `id` as it is now, under a new id (the direct turn and the box alone resume it). */
function copyOf(id: string): string {
  const file = findTranscript(claudeConfigDir(env, home.home), id);
  if (!file) throw new Error(`no transcript of session ${id}`);
  const copy = randomUUID();
  fs.writeFileSync(
    path.join(path.dirname(file), `${copy}.jsonl`),
    fs.readFileSync(file, 'utf8').replaceAll(id, copy),
  );
  return copy;
}

/** How many revisions of run `name` took a standby (its events say so). */
function standbysTaken(name: string): number {
  const events = fs.readFileSync(path.join(repo.dir, '.agents', 'runs', name, 'events.jsonl'), 'utf8');
  return events
    .split('\n')
    .filter((line) => line.includes('"event":"standby"') && line.includes('takes the revision')).length;
}
