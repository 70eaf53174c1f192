import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentboxError } from '../../src/errors.js';
import { excerpt, GitError, git, runGit, runGitBytes, shown } from '../../src/git/exec.js';
import { gitRepo, type TestRepo } from '../helpers/git-repo.js';

const repos: TestRepo[] = [];
afterEach(() => {
  for (const r of repos.splice(0)) r.cleanup();
});
function repo(files?: Record<string, string>): TestRepo {
  const r = gitRepo(files ? { files } : {});
  repos.push(r);
  return r;
}

/** The environment git's child sees, printed by a shell alias (`!env`). */
async function childEnv(call: Parameters<typeof git>[1]): Promise<Map<string, string>> {
  const out = await git(['-c', 'alias.showenv=!env', 'showenv'], call);
  return new Map(
    out.split('\n').map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

describe('git runner', () => {
  it('returns stdout without the final newline, and nothing else cut: a -z listing keeps its leading space', async () => {
    const r = repo({ ' lead.txt': 'x\n' });
    expect(await git(['rev-parse', 'HEAD'], { cwd: r.dir })).toBe(r.git('rev-parse', 'HEAD').trim());
    const listed = await git(['ls-files', '-z', '--', ' lead.txt'], { cwd: r.dir });
    expect(listed).toBe(' lead.txt\0');
  });

  it('a failure is one shape: GitError (an AgentboxError, GIT_FAILED) with the args, where, the exit code, git stderr and a hint', async () => {
    const r = repo();
    const error = await git(['rev-parse', '--verify', 'no-such-branch^{commit}'], { cwd: r.dir }).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(GitError);
    expect(error).toBeInstanceOf(AgentboxError);
    expect(error).toMatchObject({
      code: 'GIT_FAILED',
      exitCode: 1,
      gitExitCode: 128,
      cwd: r.dir,
      args: ['rev-parse', '--verify', 'no-such-branch^{commit}'],
      stderr: 'fatal: Needed a single revision',
      hint: `run "git -C ${r.dir} rev-parse --verify no-such-branch^{commit}" to see git's full message`,
    });
    expect(error.message).toBe(
      `git rev-parse --verify no-such-branch^{commit} failed in ${r.dir}: fatal: Needed a single revision`,
    );
    const hinted = await git(['checkout', 'nowhere'], { cwd: r.dir, hint: 'do this next' }).catch((e) => e);
    expect(hinted).toMatchObject({ code: 'GIT_FAILED', hint: 'do this next' });
    expect(hinted.message).toContain("error: pathspec 'nowhere' did not match");
  });

  it('runGit returns a failure as data', async () => {
    const r = repo();
    const result = await runGit(['check-ignore', '-q', 'README.md'], { cwd: r.dir });
    expect(result).toEqual({ exitCode: 1, stdout: '', stderr: '' });
  });

  it('git that cannot start (the folder is gone) fails the same way, exit code -1', async () => {
    const r = repo();
    const gone = path.join(r.dir, 'gone');
    const result = await runGit(['status'], { cwd: gone });
    expect(result.exitCode).toBe(-1);
    expect(result.stderr).toMatch(/ENOENT/);
    await expect(git(['status'], { cwd: gone })).rejects.toMatchObject({
      code: 'GIT_FAILED',
      gitExitCode: -1,
    });
  });

  it('git runs in the C locale, with the passed environment exactly (nothing of the process leaks) plus vars', async () => {
    const r = repo();
    process.env.AGENTBOX_EXEC_TEST_LEAK = 'leaked';
    try {
      const env = { PATH: process.env.PATH, HOME: r.dir, LC_ALL: 'de_DE.UTF-8', LANG: 'de_DE.UTF-8' };
      const seen = await childEnv({ cwd: r.dir, env, vars: { GIT_INDEX_FILE: '/tmp/x' } });
      expect(seen.get('LC_ALL')).toBe('C');
      expect(seen.get('LANGUAGE')).toBe('C');
      expect(seen.get('HOME')).toBe(r.dir);
      expect(seen.get('GIT_INDEX_FILE')).toBe('/tmp/x');
      expect(seen.has('AGENTBOX_EXEC_TEST_LEAK')).toBe(false);
      // Without an env the child inherits agentbox's own (the CLI's); keepLocale leaves the locale.
      const inherited = await childEnv({ cwd: r.dir, keepLocale: true, vars: { LC_ALL: 'POSIX' } });
      expect(inherited.get('AGENTBOX_EXEC_TEST_LEAK')).toBe('leaked');
      expect(inherited.get('LC_ALL')).toBe('POSIX');
    } finally {
      delete process.env.AGENTBOX_EXEC_TEST_LEAK;
    }
  });

  it('a git still running when its process exits is ended with it (children are owned)', async () => {
    const r = repo();
    const marker = `wait${process.pid}x${Date.now()}`;
    // A duration no other process has, so the test can find (and end) the sleep it leaves.
    const seconds = `29.${process.pid}${Date.now() % 1000}`;
    const exec = path.resolve('src/git/exec.ts');
    // The child starts a git that would wait 30 s, then exits: that git must not outlive it.
    const script = `import { runGit } from ${JSON.stringify(exec)};
      void runGit(['-c', 'alias.${marker}=!sleep ${seconds}', '${marker}'], { cwd: ${JSON.stringify(r.dir)} });
      setTimeout(() => process.exit(0), 500);`;
    const gits = () =>
      fs
        .readdirSync('/proc')
        .filter((p) => /^\d+$/.test(p))
        .filter((p) => {
          try {
            const argv = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
            return path.basename(argv[0]!) === 'git' && argv.includes(marker);
          } catch {
            return false;
          }
        });
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: 'ignore',
    });
    let seen = false;
    for (let i = 0; i < 100 && !seen; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      seen = gits().length > 0;
    }
    await new Promise((resolve) => child.once('exit', resolve));
    try {
      expect(seen).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(gits()).toEqual([]);
    } finally {
      // What git started (sh, sleep) is not its to end, nor execa's before: the test ends it.
      for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
        try {
          const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
          if (cmdline.includes(marker) || cmdline.includes(seconds)) process.kill(Number(pid));
        } catch {}
      }
    }
  });

  it('input goes to stdin; runGitBytes returns the exact bytes', async () => {
    const r = repo();
    const sha = await git(['hash-object', '-w', '--stdin'], { cwd: r.dir, input: 'hello\n' });
    expect(sha).toBe('ce013625030ba8dba906f756967f9e9ca394464a');
    const bytes = Buffer.from([0, 255, 10, 13, 10, 10]);
    fs.writeFileSync(path.join(r.dir, 'bin.dat'), bytes);
    const blob = await git(['hash-object', '-w', 'bin.dat'], { cwd: r.dir });
    const read = await runGitBytes(['cat-file', 'blob', blob], { cwd: r.dir });
    expect(read.exitCode).toBe(0);
    expect(Buffer.compare(read.stdout, bytes)).toBe(0);
    const bad = await runGitBytes(['cat-file', 'blob', 'nope'], { cwd: r.dir });
    expect(bad.exitCode).toBe(128);
    expect(bad.stderr).toMatch(/Not a valid object name nope/);
  });
});

describe('excerpt and shown (pure)', () => {
  it.each([
    ['', ''],
    ['fatal: one line\n', 'fatal: one line'],
    ['1\n2\n3\n4\n5\n6\n7', '1\n2\n3\n4\n5\n…'],
    ['x'.repeat(700), `${'x'.repeat(600)}…`],
  ])('excerpt(%j)', (stderr, expected) => {
    expect(excerpt(stderr)).toBe(expected);
  });

  it.each([
    [['status'], 'status'],
    [['commit', '-m', 'fix "a; rm -rf ~"'], `commit -m 'fix "a; rm -rf ~"'`],
    [['show', "it's"], `show 'it'\\''s'`],
    [['rev-parse', 'HEAD^{commit}', ':(exclude)a b'], `rev-parse HEAD^{commit} ':(exclude)a b'`],
  ])('shown(%j)', (args, expected) => {
    expect(shown(args)).toBe(expected);
  });
});
