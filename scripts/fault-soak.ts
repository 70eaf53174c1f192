/**
 * The fault soak: the kill scenarios of test/e2e/faults.test.ts with many landed kills and a random
 * seed, outside `npm test`. Prints per scenario: landed kills, redraws, kill points (turn, phase),
 * outcomes and lost artifacts; exits 1 when anything was lost or a kill went unexplained.
 *
 *   npm run build && npx tsx scripts/fault-soak.ts [--kills 500] [--seed N]
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Row } from '../test/helpers/fault-table.js';

const { values } = parseArgs({
  options: { kills: { type: 'string', default: '500' }, seed: { type: 'string' } },
});
const seed = values.seed ?? String(Math.floor(Math.random() * 1_000_000_007));
const report = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-soak-')), 'faults.json');
const started = Date.now();
const result = spawnSync('npx', ['vitest', 'run', 'test/e2e/faults.test.ts', '-t', 'at random points'], {
  stdio: 'inherit',
  env: {
    ...process.env,
    AGENTBOX_FAULT_TRIES: values.kills,
    AGENTBOX_FAULT_SEED: seed,
    AGENTBOX_FAULT_REPORT: report,
  },
});
const minutes = ((Date.now() - started) / 60_000).toFixed(1);
if (!fs.existsSync(report)) {
  console.error(`soak (seed ${seed}) wrote no report; vitest exited ${result.status}`);
  process.exit(1);
}
const { rows } = JSON.parse(fs.readFileSync(report, 'utf8')) as { rows: Row[] };
console.log(`\nfault soak: seed ${seed}, ${values.kills} landed kills per scenario, ${minutes} min`);
for (const r of rows.filter((row) => row.scenario.includes('random point'))) {
  console.log(
    `\n${r.scenario}: ${r.tries} landed kills, ${r.redrawn} redrawn, ${r.lost.length} artifacts lost`,
  );
  for (const [point, n] of Object.entries(r.points).sort()) console.log(`  killed at ${point}: ${n}`);
  for (const [outcome, n] of Object.entries(r.outcomes)) console.log(`  then ${outcome}: ${n}`);
  for (const lost of r.lost) console.log(`  LOST ${lost}`);
}
process.exit(result.status === 0 ? 0 : 1);
