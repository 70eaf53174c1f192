import { describe, expect, it } from 'vitest';
import { git, prefetchGit } from '../../src/git/exec.js';
import { prefetchScope } from '../../src/git/prefetch.js';
import { onBehalfOf, ownerEnv, ownerPid } from '../../src/process/owner.js';
import { gitRepo } from '../helpers/git-repo.js';

/**
 * A run's start asks git early for what its later steps read (src/git/prefetch.ts). Real git: a
 * commit made between the prefetch and the read shows which answer the read got.
 */
describe('git reads started early', () => {
  const head = (cwd: string) => git(['rev-parse', 'HEAD'], { cwd });

  it('are taken by the same command, once; a later read asks git again', async () => {
    const repo = gitRepo({ files: { a: '1\n' } });
    const before = repo.git('rev-parse', 'HEAD').trim();
    await prefetchScope(async () => {
      prefetchGit(['rev-parse', 'HEAD'], { cwd: repo.dir });
      // (the prefetched git has run once its answer is awaited; the commit comes after it)
      await new Promise((resolve) => setTimeout(resolve, 200));
      repo.write('a', '2\n');
      const after = repo.commit('second');
      expect(await head(repo.dir)).toBe(before);
      expect(await head(repo.dir)).toBe(after);
    });
  });

  it('are never taken outside their command, nor by another with its own scope', async () => {
    const repo = gitRepo({ files: { a: '1\n' } });
    // Outside a scope there is nothing to keep: the read asks git.
    prefetchGit(['rev-parse', 'HEAD'], { cwd: repo.dir });
    await new Promise((resolve) => setTimeout(resolve, 200));
    repo.write('a', '2\n');
    const second = repo.commit('second');
    expect(await head(repo.dir)).toBe(second);

    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = prefetchScope(async () => {
      prefetchGit(['rev-parse', 'HEAD'], { cwd: repo.dir });
      await held;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    repo.write('a', '3\n');
    const third = repo.commit('third');
    await prefetchScope(async () => expect(await head(repo.dir)).toBe(third));
    release();
    await first;
  });

  it('a read with other variables, another environment or input is not the prefetched one', async () => {
    const repo = gitRepo({ files: { a: '1\n' } });
    const before = repo.git('rev-parse', 'HEAD').trim();
    await prefetchScope(async () => {
      prefetchGit(['rev-parse', 'HEAD'], { cwd: repo.dir, vars: { GIT_CONFIG_NOSYSTEM: '1' } });
      await new Promise((resolve) => setTimeout(resolve, 200));
      repo.write('a', '2\n');
      const after = repo.commit('second');
      expect(await head(repo.dir)).toBe(after);
      expect(
        await git(['rev-parse', 'HEAD'], {
          cwd: repo.dir,
          env: { ...process.env },
          vars: { GIT_CONFIG_NOSYSTEM: '1' },
        }),
      ).toBe(after);
      expect(await git(['rev-parse', 'HEAD'], { cwd: repo.dir, vars: { GIT_CONFIG_NOSYSTEM: '1' } })).toBe(
        before,
      );
    });
  });
});

describe('the process a command runs for', () => {
  it('is this one, or the client a resident agentbox runs it for, through awaits', async () => {
    expect(ownerPid()).toBe(process.pid);
    expect(ownerEnv()).toBe(process.env);
    const env = { HOME: '/home/client' };
    await onBehalfOf(4242, env, async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(ownerPid()).toBe(4242);
      expect(ownerEnv()).toBe(env);
    });
    expect(ownerPid()).toBe(process.pid);
  });

  it("gives git the client's environment when a call names none", async () => {
    const repo = gitRepo({ files: { a: '1\n' } });
    const env = { ...process.env, GIT_AUTHOR_NAME: 'Client Person' } as Record<string, string>;
    const ident = () => git(['var', 'GIT_AUTHOR_IDENT'], { cwd: repo.dir });
    expect(await ident()).not.toContain('Client Person');
    expect(await onBehalfOf(4242, env, ident)).toContain('Client Person');
  });
});
