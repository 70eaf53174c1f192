/**
 * What a fix run's checkpoint (taken at the end of every turn, while claude waits for its Stop
 * hook) costs, on a worktree of `--files` files with `--changed` of them changed and one new file.
 * No target was set for it: it prints the figures, to compare with a turn's length (seconds).
 * Run: `npx tsx bench/checkpoint.bench.ts [--files 2000] [--changed 20]`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { restoreCheckpoint, takeCheckpoint } from '../src/git/checkpoint.js';
import { addWorktree, headSha } from '../src/git/worktree.js';
import { gitRepo, tempDir } from '../test/helpers/git-repo.js';

const { values: args } = parseArgs({
  options: { files: { type: 'string', default: '2000' }, changed: { type: 'string', default: '20' } },
});
const FILES = Number(args.files);
const CHANGED = Number(args.changed);
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;

const files: Record<string, string> = {};
for (let i = 0; i < FILES; i++)
  files[`src/dir${i % 50}/file${i}.ts`] = `export const x${i} = ${i};\n`.repeat(20);
const repo = gitRepo({ files });
const dir = tempDir();
try {
  const wt = path.join(dir, 'wt');
  await addWorktree(repo.dir, { path: wt, branch: 'agentbox/bench', base: (await headSha(repo.dir))! });
  for (let i = 0; i < CHANGED; i++) fs.writeFileSync(path.join(wt, `src/dir0/file${i * 50}.ts`), 'changed\n');
  fs.writeFileSync(path.join(wt, 'new.txt'), 'new\n');
  const take: number[] = [];
  let point = await takeCheckpoint(wt, 'bench');
  for (let i = 0; i < 11; i++) {
    const start = performance.now();
    point = await takeCheckpoint(wt, 'bench');
    take.push(performance.now() - start);
  }
  const restore: number[] = [];
  for (let i = 0; i < 5; i++) {
    fs.writeFileSync(path.join(wt, 'later.txt'), 'later\n');
    const start = performance.now();
    await restoreCheckpoint(wt, point);
    restore.push(performance.now() - start);
  }
  console.log(`worktree of ${FILES} files, ${CHANGED} changed and 1 new:`);
  console.log(`  take a checkpoint (per turn):   median ${median(take).toFixed(1)} ms of 11`);
  console.log(`  restore it (after a crash):     median ${median(restore).toFixed(1)} ms of 5`);
} finally {
  repo.cleanup();
  fs.rmSync(dir, { recursive: true, force: true });
}
