import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { recordResultCommit, resultTree } from '../../src/git/result-commit.js';
import { mergeMessage, resultMessage, subjectOf } from '../../src/present/result-message.js';
import { gitRepo, type TestRepo, tempDir } from '../helpers/git-repo.js';

/** A patch of the worktree's changes against HEAD, written to a file; the worktree then reset. */
function patchOf(repo: TestRepo, change: () => void): string {
  change();
  repo.git('add', '-A');
  // Outside the repository, in a folder of its own that is removed after the tests.
  const file = path.join(tempDir('agentbox-patch-'), 'changes.patch');
  fs.writeFileSync(file, repo.git('diff', '--cached', '--binary', '--full-index', 'HEAD'));
  repo.git('reset', '-q', '--hard');
  repo.git('clean', '-fdq');
  return file;
}

describe('recordResultCommit', () => {
  let repo: TestRepo;

  it('commits base + patch on the branch, chains a second result, and leaves every index and file alone', async () => {
    repo = gitRepo({ files: { 'a.txt': 'a\n', 'bin.dat': Buffer.from([0, 1, 2, 3]).toString('latin1') } });
    const base = repo.git('rev-parse', 'HEAD').trim();
    repo.git('branch', 'agentbox/r1');
    const first = patchOf(repo, () => {
      repo.write('a.txt', 'A\n');
      repo.write('new/b.txt', 'b\n');
      fs.rmSync(path.join(repo.dir, 'bin.dat'));
    });
    const status = repo.git('status', '--porcelain');
    const one = await recordResultCommit({
      repoRoot: repo.dir,
      branch: 'agentbox/r1',
      base,
      previous: null,
      patchFile: first,
      message: resultMessage({ name: 'r1', task: 'do it', status: 'REVIEW', answer: 'done' }),
    });
    expect(one).toMatchObject({ parent: base, replaced: null, created: true });
    expect(repo.git('rev-parse', 'agentbox/r1').trim()).toBe(one.commit);
    expect(repo.git('show', `${one.commit}:a.txt`)).toBe('A\n');
    expect(repo.git('ls-tree', '-r', '--name-only', one.commit).trim().split('\n')).toEqual([
      'README.md',
      'a.txt',
      'new/b.txt',
    ]);
    expect(repo.git('log', '-1', '--format=%an|%s', one.commit).trim()).toBe('agentbox|do it');
    expect(repo.git('status', '--porcelain')).toBe(status);
    expect(repo.git('rev-parse', 'HEAD').trim()).toBe(base);

    // The same result again (finalisation repeated after a crash): nothing new.
    const same = await recordResultCommit({
      repoRoot: repo.dir,
      branch: 'agentbox/r1',
      base,
      previous: one.commit,
      patchFile: first,
      message: 'x',
    });
    expect(same).toMatchObject({ commit: one.commit, created: false });

    // A resumed run's larger patch: a second commit on top of the first.
    const second = patchOf(repo, () => {
      repo.write('a.txt', 'AA\n');
      repo.write('new/b.txt', 'b\n');
      fs.rmSync(path.join(repo.dir, 'bin.dat'));
    });
    const two = await recordResultCommit({
      repoRoot: repo.dir,
      branch: 'agentbox/r1',
      base,
      previous: one.commit,
      patchFile: second,
      message: 'again',
    });
    expect(two).toMatchObject({ parent: one.commit, created: true, replaced: null });
    expect(repo.git('show', 'agentbox/r1:a.txt')).toBe('AA\n');
    expect(repo.git('rev-list', '--count', `${base}..agentbox/r1`).trim()).toBe('2');
  });

  it("takes the run's branch by its exact name: a branch below that name is not its tip", async () => {
    repo = gitRepo({ files: { 'a.txt': 'a\n' } });
    const base = repo.git('rev-parse', 'HEAD').trim();
    const patch = patchOf(repo, () => repo.write('a.txt', 'A\n'));
    // agentbox/r9/x holds exactly the result, and is given as the previous one: were it taken for
    // agentbox/r9 (for-each-ref lists the refs below a name too), the result would be "already there".
    repo.write('a.txt', 'A\n');
    repo.git('commit', '-qam', 'the same change, elsewhere');
    const other = repo.git('rev-parse', 'HEAD').trim();
    repo.git('branch', 'agentbox/r9/x', other);
    repo.git('reset', '-q', '--hard', base);
    const record = () =>
      recordResultCommit({
        repoRoot: repo.dir,
        branch: 'agentbox/r9',
        base,
        previous: other,
        patchFile: patch,
        message: 'm',
      });
    // agentbox/r9 cannot be made beside agentbox/r9/x: git refuses, nothing is claimed.
    await expect(record()).rejects.toThrow();
    repo.git('branch', '-D', 'agentbox/r9/x');
    expect(await record()).toMatchObject({ parent: base, created: true, replaced: null });
  });

  it('a branch moved by someone else is started over from base, and what it held is reported', async () => {
    repo = gitRepo({ files: { 'a.txt': 'a\n' } });
    const base = repo.git('rev-parse', 'HEAD').trim();
    repo.write('other.txt', 'other\n');
    const other = repo.commit('someone else');
    repo.git('branch', 'agentbox/r2', other);
    repo.git('reset', '-q', '--hard', base);
    const patch = patchOf(repo, () => repo.write('a.txt', 'changed\n'));
    const done = await recordResultCommit({
      repoRoot: repo.dir,
      branch: 'agentbox/r2',
      base,
      previous: null,
      patchFile: patch,
      message: 'm',
    });
    expect(done).toMatchObject({ parent: base, replaced: other, created: true });
    expect(repo.git('ls-tree', '--name-only', 'agentbox/r2').trim().split('\n')).toEqual([
      'README.md',
      'a.txt',
    ]);
  });

  it('a patch that does not apply to base fails with git’s reason, and the branch stays', async () => {
    repo = gitRepo({ files: { 'a.txt': 'a\n' } });
    const base = repo.git('rev-parse', 'HEAD').trim();
    repo.git('branch', 'agentbox/r3');
    const bogus = path.join(tempDir('agentbox-patch-'), 'bogus.patch');
    fs.writeFileSync(
      bogus,
      'diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-zzz\n+yyy\n',
    );
    await expect(resultTree(repo.dir, base, bogus)).rejects.toThrow(
      /git apply --cached .* failed in .*patch does not apply/s,
    );
    await expect(
      recordResultCommit({
        repoRoot: repo.dir,
        branch: 'agentbox/r3',
        base,
        previous: null,
        patchFile: bogus,
        message: 'm',
      }),
    ).rejects.toThrow(/patch does not apply/);
    expect(repo.git('rev-parse', 'agentbox/r3').trim()).toBe(base);
  });
});

describe('result messages', () => {
  it('subject from the task, the answer cut, the task whole, trailers last', () => {
    const message = resultMessage({
      name: 'run-1',
      task: 'fix the login\nmore words',
      status: 'REVIEW',
      answer: 'x'.repeat(2500),
    });
    const [subject, blank, answer] = message.split('\n');
    expect(subject).toBe('fix the login');
    expect(blank).toBe('');
    expect([...answer!].length).toBe(2000);
    expect(answer!.endsWith('…')).toBe(true);
    expect(
      message.endsWith('Task:\nfix the login\nmore words\n\nAgentbox-Run: run-1\nAgentbox-Status: REVIEW\n'),
    ).toBe(true);
    expect(resultMessage({ name: 'run-2', task: '   ', status: 'REVIEW', answer: null }).split('\n')[0]).toBe(
      'agentbox run run-2',
    );
    expect(subjectOf('😀'.repeat(80))).toBe('😀'.repeat(72));
  });

  it('the agent’s answer and the task reach `git log` as text: no escape sequence, every other control shown escaped', () => {
    // git log prints a message byte for byte (with --no-pager, a pass-through pager, a CI log).
    const hostile =
      '\x1b]52;c;Y3VybA==\x07\x1b]8;;https://evil.example/\x1b\\docs\x1b]8;;\x1b\\\x1b[2J\u009b3;3H\u202eevil';
    const messages = [
      resultMessage({
        name: 'r',
        task: `fix it ${hostile}\nmore`,
        status: 'REVIEW',
        answer: `done ${hostile}`,
      }),
      mergeMessage('r', `fix it ${hostile}`),
    ];
    for (const message of messages) {
      expect(message).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
      expect(message).toContain('docs');
      expect(message).toContain('\\u202eevil');
      expect(message.split('\n')[0]).toBe('fix it docs\\u202eevil');
    }
  });
});
