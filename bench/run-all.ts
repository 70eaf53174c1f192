/**
 * `npm run bench`: every benchmark in this folder, one after another (never two at once: they time
 * processes on a shared machine), with its figures as it prints them. Exits 1 when one missed its
 * target or failed. `npm run bench -- status watchdog` runs only those.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const benches = fs
  .readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => wanted.length === 0 || wanted.includes(f.replace('.bench.ts', '')))
  .sort();
const failed: string[] = [];
for (const bench of benches) {
  console.log(`\n=== ${bench}`);
  const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(here, bench)], { stdio: 'inherit' });
  if (run.status !== 0) failed.push(bench);
}
console.log(
  failed.length === 0 ? '\nall benchmarks met their targets' : `\nmissed or failed: ${failed.join(', ')}`,
);
process.exit(failed.length === 0 ? 0 : 1);
