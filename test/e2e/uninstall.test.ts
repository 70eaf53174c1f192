import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, text, tool } from '../fixtures/model-server/index.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';

/** A fix task whose agent writes `file` in its worktree, then ends. */
function writes(task: string, file: string) {
  return [
    {
      when: { turn: 0, anyText: task },
      reply: (req: { workingDirectory?: string | undefined }) =>
        tool('Write', { file_path: path.join(req.workingDirectory!, file), content: `${file}\n` }),
    },
    { when: { turn: 1, anyText: task }, reply: text(`wrote ${file}`) },
  ];
}

describe('uninstall leaves the repository as it was (issue 14, item 7)', () => {
  let p: Project;
  beforeAll(async () => {
    p = await project();
  });
  afterAll(async () => p?.cleanup());

  it('after real fix runs: a plain uninstall keeps .agents/ ignored; --purge removes every worktree, branch and ref, refusing first while changes would be lost', async () => {
    p.server.setRules([
      // One sandboxed shell command: Claude Code sets its sandbox up at the first.
      { when: { turn: 0, anyText: 'add file a' }, reply: bash('true') },
      ...writes('add file a', 'a.txt').map((r) => ({ ...r, when: { ...r.when, turn: r.when.turn + 1 } })),
      ...writes('add file b', 'b.txt'),
    ]);
    expect((await p.agentbox(['fix', 'add file a'])).code).toBe(0);
    const review = p.newest();
    expect((await p.agentbox(['fix', 'add file b'])).code).toBe(0);
    const merged = p.newest();
    expect((await p.agentbox(['merge', merged.slice(-6), '--yes'])).code).toBe(0);
    const worktrees = [review, merged].map((name) => p.state(name).worktree_path as string);
    // Claude Code's sandbox (not agentbox, not the agent) added its line to the person's global git
    // ignore file during the sandboxed fix runs; uninstall says so and leaves it (issue 29).
    const globalIgnore = path.join(p.home.home, '.config', 'git', 'ignore');
    expect(fs.readFileSync(globalIgnore, 'utf8').split('\n')).toContain('**/.claude/.cc-writes/');
    const git = (...args: string[]) => p.repo.git(...args).trim();
    const refs = () => git('for-each-ref', '--format=%(refname)', 'refs/heads/agentbox/', 'refs/agentbox/');
    expect(refs().split('\n')).toHaveLength(4);

    // Plain: the runs stay, still ignored, and the output says what is left and how to remove it.
    const plain = await p.agentbox(['uninstall']);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('moved .agents/ to .git/info/exclude');
    expect(plain.stdout).toContain(
      'kept 2 worktree(s), 2 branch(es), 2 ref(s) of runs — "agentbox uninstall --purge" removes them',
    );
    expect(git('status', '--porcelain', '--untracked-files=all')).not.toContain('.agents');

    // The run in REVIEW has changes that exist only in its worktree and the ledger: refused.
    const refused = await p.agentbox(['uninstall', '--purge']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${review.slice(-6)}  ${review}: its changes wait for review (REVIEW)`);
    expect(refused.stderr).toContain('agentbox uninstall --purge --force');
    expect(refused.stderr).not.toContain(merged);
    for (const wt of worktrees) expect(fs.existsSync(wt)).toBe(true);
    expect(refs().split('\n')).toHaveLength(4);

    const purged = await p.agentbox(['uninstall', '--purge', '--force']);
    expect(purged.stderr).toBe('');
    expect(purged.code).toBe(0);
    const listing = purged.stdout.slice(0, purged.stdout.indexOf('✓'));
    for (const [i, name] of [review, merged].entries()) {
      expect(listing).toContain(`worktree ${worktrees[i]} (${name.slice(-6)})`);
      expect(listing).toContain(`branch   agentbox/${name}`);
      expect(listing).toContain(`ref      refs/agentbox/checkpoints/${name}`);
    }
    expect(purged.stdout).toContain(`deleted the unmerged changes of ${review.slice(-6)} (--force)`);
    expect(purged.stdout).toContain(
      `  kept "**/.claude/.cc-writes/" in ${globalIgnore}: Claude Code's sandbox added it, not agentbox`,
    );
    expect(fs.readFileSync(globalIgnore, 'utf8')).toContain('**/.claude/.cc-writes/');
    expect(refs()).toBe('');
    expect(git('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    for (const wt of worktrees) expect(fs.existsSync(wt)).toBe(false);
    // A line per item as it goes (issue 29): a worktree of node_modules takes seconds.
    const progress = purged.stdout.match(/^ {2}removed .* \(\d+\/6, \d+\.\d s\)$/gm) ?? [];
    expect(progress).toHaveLength(6);
    for (const name of [review, merged]) {
      expect(progress.some((l) => l.startsWith(`  removed worktree ${name.slice(-6)} (`))).toBe(true);
      expect(progress.some((l) => l.startsWith(`  removed branch agentbox/${name} (`))).toBe(true);
    }
    // The per-repository worktree folder in the data folder went with its last worktree, and so
    // did the empty agentbox/worktrees/ and agentbox/ above it (issue 29).
    const data = path.join(p.home.home, '.local', 'share');
    expect(path.dirname(worktrees[0]!).startsWith(path.join(data, 'agentbox', 'worktrees'))).toBe(true);
    expect(fs.existsSync(path.dirname(worktrees[0]!))).toBe(false);
    expect(fs.readdirSync(data)).not.toContain('agentbox');
    expect(p.repo.exists('.agents')).toBe(false);
    expect(p.repo.read('.git/info/exclude')).not.toContain('agentbox');

    const again = await p.agentbox(['uninstall', '--purge']);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(`agentbox is not installed in ${p.repo.dir} — nothing to uninstall.\n`);
    await expectNoProcessesLeft(p.tag);
  });
});
