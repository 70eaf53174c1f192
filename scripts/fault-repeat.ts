/**
 * The CI fault suite (test/e2e/faults.test.ts) N times in a row, each with a fresh random seed,
 * stopping at the first failure: how flaky is it? `--only` keeps the tests whose name contains it
 * (vitest's -t). Prints one line per run (seed, result, minutes) and the count; exits 1 on a
 * failure, naming the seed to replay.
 *
 *   npm run build && npx tsx scripts/fault-repeat.ts [--runs 10] [--only "20 runs in parallel"]
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '10' }, only: { type: 'string' } },
});
const only = values.only === undefined ? [] : ['-t', values.only];
const runs = Number(values.runs);
const logs = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-fault-repeat-'));
for (let i = 1; i <= runs; i++) {
  const seed = String(Math.floor(Math.random() * 1_000_000_007));
  const log = path.join(logs, `run-${i}.log`);
  const started = Date.now();
  const run = spawnSync('npx', ['vitest', 'run', 'test/e2e/faults.test.ts', ...only], {
    env: { ...process.env, AGENTBOX_FAULT_SEED: seed },
    encoding: 'utf8',
  });
  fs.writeFileSync(log, `${run.stdout}\n${run.stderr}`);
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  console.log(
    `run ${i}/${runs}: seed ${seed}: ${run.status === 0 ? 'pass' : 'FAIL'} (${minutes} min, log ${log})`,
  );
  if (run.status !== 0) {
    console.log(
      `${i - 1} passed in a row before a failure; replay: AGENTBOX_FAULT_SEED=${seed} npx vitest run test/e2e/faults.test.ts${values.only === undefined ? '' : ` -t '${values.only}'`}`,
    );
    process.exit(1);
  }
}
console.log(`${runs} passed in a row`);
