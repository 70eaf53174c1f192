import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { prepareRunPrivacy } from '../../src/sandbox/prepare.js';
import { tempDir } from '../helpers/git-repo.js';

const CONFIG = { mode: 'required' as const, allowed_domains: [], deny_read: [], allow_read: [] };
const ID = ['-c', 'user.name=t', '-c', 'user.email=t@t'];

/**
 * A read-only run's git (issue 37): the repository's .git/config is unreadable to the run, so a
 * scout's git works through a private git dir on the repository's tree. It must show the repository
 * as it is: its branch, a detached HEAD, a repository with no commit yet, its status.
 */
describe("a read-only run's private git", () => {
  async function gitOfRun(root: string) {
    const home = tempDir('agentbox-ro-git-home-');
    const env = { HOME: home, PATH: process.env.PATH!, TMPDIR: tempDir('agentbox-ro-git-tmp-') };
    const privacy = await prepareRunPrivacy({
      env,
      runName: `scout-${path.basename(root)}`,
      repoRoot: root,
      worktree: null,
      fenced: true,
      config: CONFIG,
    });
    const box = privacy.sandbox!;
    const run = (...args: string[]) =>
      execFileSync('git', args, {
        cwd: root,
        encoding: 'utf8',
        env: {
          PATH: env.PATH,
          HOME: home,
          GIT_DIR: box.gitDir,
          GIT_WORK_TREE: root,
          GIT_CONFIG_NOSYSTEM: '1',
        },
      }).trim();
    return { run, privacy, box };
  }

  function repo(): string {
    const root = fs.realpathSync(tempDir('agentbox-ro-git-'));
    execFileSync('git', ['init', '-q', '-b', 'trunk', root]);
    return root;
  }
  const commit = (root: string, file: string) => {
    fs.writeFileSync(path.join(root, file), `${file}\n`);
    execFileSync('git', [...ID, 'add', file], { cwd: root });
    execFileSync('git', [...ID, 'commit', '-qm', file], { cwd: root });
  };

  it('is on the branch the repository is on, at its commit, with its status', async () => {
    const root = repo();
    commit(root, 'a.txt');
    execFileSync('git', ['config', 'remote.origin.url', 'https://u:SECRET@example.com/r.git'], { cwd: root });
    fs.writeFileSync(path.join(root, 'new.txt'), 'untracked\n');
    const { run, privacy, box } = await gitOfRun(root);
    try {
      expect(run('symbolic-ref', 'HEAD')).toBe('refs/heads/trunk');
      expect(run('rev-parse', 'HEAD')).toBe(
        execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim(),
      );
      expect(run('status', '--porcelain')).toBe('?? new.txt');
      expect(run('remote', 'get-url', 'origin')).toBe('https://example.com/r.git');
      expect(box.denyRead).toContain(path.join(root, '.git', 'config'));
    } finally {
      privacy.area.dispose();
    }
  });

  it('keeps a detached HEAD at its commit', async () => {
    const root = repo();
    commit(root, 'a.txt');
    commit(root, 'b.txt');
    execFileSync('git', ['checkout', '-q', '--detach', 'HEAD~1'], { cwd: root });
    const { run, privacy } = await gitOfRun(root);
    try {
      expect(run('log', '-1', '--format=%s')).toBe('a.txt');
      expect(run('status', '--porcelain')).toBe('');
    } finally {
      privacy.area.dispose();
    }
  });

  it('works in a repository with no commit yet', async () => {
    const root = repo();
    fs.writeFileSync(path.join(root, 'draft.txt'), 'x\n');
    const { run, privacy } = await gitOfRun(root);
    try {
      expect(run('symbolic-ref', 'HEAD')).toBe('refs/heads/trunk');
      expect(run('status', '--porcelain')).toBe('?? draft.txt');
    } finally {
      privacy.area.dispose();
    }
  });
});
