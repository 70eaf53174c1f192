import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { restoreCheckpoint, takeCheckpoint } from '../../src/git/checkpoint.js';
import { liveTree } from '../../src/git/live-diff.js';
import { exportPatch } from '../../src/git/patch.js';
import { uncommittedPaths } from '../../src/git/traces.js';
import { addWorktree } from '../../src/git/worktree.js';
import { GIT_ENV, gitRepo, tempDir } from '../helpers/git-repo.js';

/*
 * Issue 37, a route found beside item 3: agentbox's own git on a run's worktree — the patch at
 * the run's end, a checkpoint, its restore, the live diff — runs outside the sandbox, as the
 * person, with their config. A filter driver of theirs whose program runs a repository script
 * (`sh scripts/clean.sh`, as nbstripout's `python -m` finds the folder's modules first) ran the
 * agent's version of that script on every such call, once the agent's `.gitattributes` sent a
 * file to it. Each call below must leave no mark.
 */
describe('agentbox’s git on a worktree runs no filter of the person’s', () => {
  beforeAll(() => {
    for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
  });
  afterAll(() => vi.unstubAllEnvs());

  /** The person's repo with `filter.strip` running scripts/clean.sh; a worktree the agent wrote in. */
  async function agentWrote() {
    const marks = tempDir('agentbox-marks-');
    const repo = gitRepo({ files: { 'scripts/clean.sh': 'cat\n', 'src/a.ts': 'a\n' } });
    repo.git('config', 'filter.strip.clean', 'sh scripts/clean.sh');
    repo.git('config', 'filter.strip.smudge', 'sh scripts/clean.sh');
    const base = repo.git('rev-parse', 'HEAD').trim();
    const wt = path.join(tempDir('agentbox-wt-'), 'wt');
    await addWorktree(repo.dir, { path: wt, branch: 'agentbox/run', base });
    const write = (file: string, content: string) => fs.writeFileSync(path.join(wt, file), content);
    write('.gitattributes', '* filter=strip\n');
    write('scripts/clean.sh', `echo "$(id -u)" >> '${marks}/clean'\ncat\n`);
    write('notes.txt', 'notes\n');
    write('src/a.ts', 'b\n');
    return { repo, wt, base, marks, marked: () => fs.readdirSync(marks) };
  }

  it('the patch at the run’s end (exportPatch)', async () => {
    const { wt, base, marked } = await agentWrote();
    const { patch } = await exportPatch(wt, { base });
    expect(marked()).toEqual([]);
    // The bytes the agent wrote, not a filter's output.
    expect(patch.toString()).toContain('+echo "$(id -u)"');
    expect(patch.toString()).toContain('+notes');
  });

  it('the live diff of a running run (liveTree)', async () => {
    const { repo, wt, base, marked } = await agentWrote();
    const live = await liveTree({ commonDir: path.join(repo.dir, '.git'), worktree: wt, base, exclude: [] });
    live.dispose();
    expect(marked()).toEqual([]);
    expect(live.files.map((f) => f.path)).toContain('notes.txt');
  });

  it('a checkpoint, and its restore', async () => {
    const { wt, marked } = await agentWrote();
    const point = await takeCheckpoint(wt, 'run');
    expect(marked()).toEqual([]);
    fs.rmSync(path.join(wt, 'notes.txt'));
    fs.writeFileSync(path.join(wt, 'src/a.ts'), 'broken\n');
    await restoreCheckpoint(wt, point);
    expect(marked()).toEqual([]);
    expect(fs.readFileSync(path.join(wt, 'notes.txt'), 'utf8')).toBe('notes\n');
    expect(fs.readFileSync(path.join(wt, 'src/a.ts'), 'utf8')).toBe('b\n');
  });

  it('what uninstall --purge asks of an unsettled run’s worktree (uncommittedPaths)', async () => {
    const { wt, marked } = await agentWrote();
    expect((await uncommittedPaths(wt)).sort()).toEqual([
      '.gitattributes',
      'notes.txt',
      'scripts/clean.sh',
      'src/a.ts',
    ]);
    expect(marked()).toEqual([]);
  });

  it('the filter is live for the person’s own git in that worktree (so the tests can fail)', async () => {
    const { repo, wt, marked } = await agentWrote();
    repo.git('-C', wt, 'add', '-A');
    expect(marked()).toEqual(['clean']);
  });

  it('a worktree from another’s branch (fix --base) is checked out with the person’s filters off; their own HEAD keeps them', async () => {
    const marks = tempDir('agentbox-marks-');
    const repo = gitRepo({ files: { 'src/a.ts': 'a\n' } });
    repo.git('config', 'filter.strip.clean', 'sh scripts/smudge.sh');
    repo.git('config', 'filter.strip.smudge', 'sh scripts/smudge.sh');
    const off = ['-c', 'filter.strip.clean=', '-c', 'filter.strip.smudge='];
    // Someone else's branch: its attributes send the person's driver its files, its script marks.
    repo.git('checkout', '-q', '-b', 'theirs');
    repo.write('.gitattributes', '*.ts filter=strip\n');
    repo.write('scripts/smudge.sh', `echo "$(id -u)" >> '${marks}/smudge'\ncat\n`);
    repo.git(...off, 'add', '-A');
    repo.git(...off, 'commit', '-qm', 'theirs');
    repo.git(...off, 'checkout', '-q', 'main');
    const theirs = path.join(tempDir('agentbox-wt-'), 'wt');
    await addWorktree(repo.dir, { path: theirs, branch: 'agentbox/theirs', base: 'theirs' });
    expect(fs.readdirSync(marks)).toEqual([]);
    expect(fs.readFileSync(path.join(theirs, 'src/a.ts'), 'utf8')).toBe('a\n');
    // The person's own checked-out commit, with those attributes, runs their filter as git would.
    repo.git(...off, 'merge', '-q', 'theirs');
    const own = path.join(tempDir('agentbox-wt-'), 'wt');
    await addWorktree(repo.dir, { path: own, branch: 'agentbox/own', base: 'HEAD' });
    expect(fs.readdirSync(marks)).toEqual(['smudge']);
  });
});
