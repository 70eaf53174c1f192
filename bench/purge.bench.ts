/**
 * `agentbox uninstall --purge` of fix-run worktrees holding `node_modules` costs at most 1.5× git
 * removing the same worktrees (`git worktree remove --force`, one after another).
 *
 * Each round builds two identical repositories, each with `--worktrees` leftover fix-run worktrees
 * (on `agentbox/<run>` branches, in the default data folder of a HOME of their own) holding a
 * generated node_modules-like tree of `--files` small files, ignored by git as node_modules is.
 * Then it times git removing one set and the built CLI purging the other (whole process: the
 * search, the check for unsaved changes, the removal, the branches), each after `sync`, the two
 * taking turns going first. Medians of `--runs` rounds; the ratio is printed.
 * Run: `npm run build && npx tsx bench/purge.bench.ts [--worktrees 4] [--files 20000] [--runs 3]`
 * (`--bin <file>`: time another build, e.g. an older `bin/agentbox.cjs` with its `dist/`).
 * Exits 1 when the ratio is over 1.5, 2 when a purge left something behind.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { GIT_ENV } from '../test/helpers/git-repo.js';

const TARGET = 1.5;
const BUILT = fileURLToPath(new URL('../bin/agentbox.cjs', import.meta.url));

interface Fixture {
  readonly home: string;
  readonly repo: string;
  readonly worktrees: string[];
}

/** A node_modules-like tree: packages of 50 files in 5 folders, files of a few bytes. */
function fillNodeModules(dir: string, files: number): void {
  for (let i = 0; i < files; i++) {
    const folder = path.join(dir, `pkg-${Math.floor(i / 50)}`, `lib-${Math.floor(i / 10) % 5}`);
    if (i % 10 === 0) fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(path.join(folder, `f${i}.js`), 'module.exports = 1;\n');
  }
}

function makeFixture(root: string, worktrees: number, files: number): Fixture {
  const home = path.join(root, 'home');
  const repo = path.join(root, 'repo');
  fs.mkdirSync(repo, { recursive: true });
  const env = { ...process.env, ...GIT_ENV, HOME: home, XDG_DATA_HOME: '' };
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env, stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(repo, '.gitignore'), 'node_modules/\n');
  fs.writeFileSync(path.join(repo, 'index.js'), 'module.exports = 1;\n');
  git('add', '-A');
  git('commit', '-qm', 'init');
  const base = path.join(home, '.local', 'share', 'agentbox', 'worktrees', 'repo-0badc0de');
  const paths: string[] = [];
  for (let i = 1; i <= worktrees; i++) {
    const name = `26-11-27_0200__install-deps-${i}__${String(i).padStart(6, '0')}`;
    const wt = path.join(base, name);
    git('branch', '-q', `agentbox/${name}`);
    git('worktree', 'add', '-q', wt, `agentbox/${name}`);
    fillNodeModules(path.join(wt, 'node_modules'), files);
    paths.push(wt);
  }
  return { home, repo, worktrees: paths };
}

function timeGit(f: Fixture): number {
  spawnSync('sync');
  const started = performance.now();
  for (const wt of f.worktrees)
    execFileSync('git', ['worktree', 'remove', '--force', wt], { cwd: f.repo, stdio: 'pipe' });
  return performance.now() - started;
}

function timePurge(f: Fixture, bin: string): number {
  spawnSync('sync');
  const started = performance.now();
  const run = spawnSync(process.execPath, [bin, 'uninstall', '--purge'], {
    cwd: f.repo,
    env: { ...process.env, HOME: f.home, XDG_DATA_HOME: '', AGENTBOX_WATCHDOG: '0' },
    encoding: 'utf8',
  });
  const ms = performance.now() - started;
  if (run.status !== 0) throw new Error(`agentbox uninstall --purge exited ${run.status}:\n${run.stderr}`);
  const left = f.worktrees.filter((wt) => fs.existsSync(wt));
  if (left.length > 0 || fs.existsSync(path.join(f.home, '.local', 'share', 'agentbox'))) {
    console.error(`  purge left ${left.join(', ') || 'the agentbox data folder'} behind`);
    leftBehind = true;
  }
  return ms;
}

let leftBehind = false;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      worktrees: { type: 'string', default: '4' },
      files: { type: 'string', default: '20000' },
      runs: { type: 'string', default: '3' },
      bin: { type: 'string', default: BUILT },
    },
  });
  const [worktrees, files, runs] = [values.worktrees, values.files, values.runs].map(Number) as [
    number,
    number,
    number,
  ];
  const bin = path.resolve(values.bin);
  if (!fs.existsSync(path.join(path.dirname(bin), '..', 'dist')))
    throw new Error(`no dist/ beside ${bin}: run "npm run build" first`);
  console.log(
    `purge: ${bin}, ${worktrees} worktrees × ${files} files each, ${runs} rounds; load ${os.loadavg()[0]!.toFixed(1)}`,
  );
  const gitMs: number[] = [];
  const purgeMs: number[] = [];
  for (let round = 0; round < runs; round++) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-purge-bench-'));
    try {
      const forGit = makeFixture(path.join(dir, 'git'), worktrees, files);
      const forPurge = makeFixture(path.join(dir, 'purge'), worktrees, files);
      if (round % 2 === 0) gitMs.push(timeGit(forGit));
      purgeMs.push(timePurge(forPurge, bin));
      if (round % 2 === 1) gitMs.push(timeGit(forGit));
      console.log(
        `  round ${round + 1}: git ${(gitMs.at(-1)! / 1000).toFixed(2)} s, agentbox ${(purgeMs.at(-1)! / 1000).toFixed(2)} s; load ${os.loadavg()[0]!.toFixed(1)}`,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  const ratio = median(purgeMs) / median(gitMs);
  console.log(
    `git worktree remove --force, each: ${(median(gitMs) / 1000).toFixed(2)} s; agentbox uninstall --purge: ${(median(purgeMs) / 1000).toFixed(2)} s`,
  );
  console.log(`ratio ${ratio.toFixed(2)} (target ≤ ${TARGET}) ${ratio <= TARGET ? '✓' : '✗'}`);
  process.exitCode = leftBehind ? 2 : ratio <= TARGET ? 0 : 1;
}

await main();
