import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, type RequestView, text, tool } from '../fixtures/model-server/index.js';
import { type Project, project } from '../helpers/project.js';
import { startPty, waitFor } from '../helpers/pty.js';

/**
 * Issue 14 item 4: review before merge is git-native. The result is a real commit on the run's
 * branch; `agentbox diff` shows it through the person's pager; merge can show it before it asks;
 * a conflict's hint works; a run merged by hand can be recorded.
 */
describe('review and merge, git-native', () => {
  let p: Project;
  beforeAll(async () => {
    p = await project({ files: { 'src/app.js': 'module.exports = 1;\n', 'notes.txt': 'one\ntwo\nthree\n' } });
  });
  afterAll(async () => p?.cleanup());

  /** A fix run that adds a file and changes two, through Write and the shell. */
  async function fixRun(task: string, extra: string[] = []): Promise<{ name: string; id: string }> {
    p.server.setRules([
      {
        when: { anyText: task, turn: 0 },
        reply: (r: RequestView) =>
          tool('Write', {
            file_path: path.join(r.workingDirectory!, 'src/new.js'),
            content: 'export const added = 2;\n',
          }),
      },
      {
        when: { anyText: task, turn: 1 },
        reply: bash(
          "printf 'module.exports = 42;\\n' > src/app.js && printf 'one\\nTWO\\nthree\\n' > notes.txt",
        ),
      },
      { when: { anyText: task }, reply: text('Changed app.js to 42 and added src/new.js.') },
    ]);
    const result = await p.agentbox(['fix', task, '--json', ...extra]);
    expect(result.code, result.stderr).toBe(0);
    const name = JSON.parse(result.stdout).run as string;
    return { name, id: name.slice(-6) };
  }

  it('the result is a commit on agentbox/<run>: git log and git diff work, and it is the patch exactly', async () => {
    const { name, id } = await fixRun('TASK-COMMIT make app return 42');
    const state = p.state(name);
    expect(state.status).toBe('REVIEW');
    const branch = `agentbox/${name}`;
    expect(state.branch).toBe(branch);
    expect(state.result_commit).toMatch(/^[0-9a-f]{40}$/);
    expect(p.repo.git('rev-parse', branch).trim()).toBe(state.result_commit);
    // Subject from the task, the answer in the body, trailers, agentbox as the author.
    const log = p.repo.git('log', '-1', '--format=%an <%ae>%n%s%n%b', branch);
    expect(log).toContain('agentbox <agentbox@localhost>\nTASK-COMMIT make app return 42\n');
    expect(log).toContain('Changed app.js to 42 and added src/new.js.');
    expect(log).toContain(`Agentbox-Run: ${name}\nAgentbox-Status: REVIEW`);
    // Parent: the commit the run started from (main, untouched).
    const meta = p.read(name, 'meta.yaml');
    const base = /repo_sha_start: (\w+)/.exec(meta)![1]!;
    expect(p.repo.git('rev-parse', `${branch}^`).trim()).toBe(base);
    expect(p.repo.git('rev-parse', 'main').trim()).toBe(base);
    // The commit holds exactly base + changes.patch: applying the patch to base gives its tree.
    expect(p.repo.git('diff', '--name-only', 'main', branch).trim().split('\n').sort()).toEqual([
      'notes.txt',
      'src/app.js',
      'src/new.js',
    ]);
    expect(p.repo.git('show', `${branch}:src/app.js`)).toBe('module.exports = 42;\n');
    const check = fs.mkdtempSync(path.join(p.repo.dir, '..', 'check-'));
    try {
      p.repo.git('worktree', 'add', '--detach', '--quiet', check, base);
      p.repo.git('-C', check, 'apply', '--binary', path.join(p.runDir(name), 'changes.patch'));
      p.repo.git('-C', check, 'add', '-A');
      expect(p.repo.git('-C', check, 'write-tree').trim()).toBe(
        p.repo.git('rev-parse', `${branch}^{tree}`).trim(),
      );
    } finally {
      p.repo.git('worktree', 'remove', '--force', check);
    }
    expect(
      p.events(name).some((e) => e.event === 'result_committed' && e.commit === state.result_commit),
    ).toBe(true);
    // The run's worktree has its branch checked out: it now sits on the result, clean.
    const worktree = state.worktree_path as string;
    expect(p.repo.git('-C', worktree, 'rev-parse', 'HEAD').trim()).toBe(state.result_commit);
    expect(p.repo.git('-C', worktree, 'status', '--porcelain')).toBe('');
    // The report and show name it; the next step is to review the diff.
    expect(p.read(name, 'report.md')).toContain(`on branch \`${branch}\``);
    const shown = await p.agentbox(['show', id]);
    expect(shown.stdout).toMatch(new RegExp(`commit +${state.result_commit.slice(0, 12)}`));
    expect(shown.stdout).toContain(`agentbox diff ${id}, then agentbox merge ${id}`);
  });

  it('agentbox diff: the patch as git shows it, --stat, --name-only, colour on request, clear errors', async () => {
    const { name, id } = await fixRun('TASK-DIFF make app return 42');
    const whole = await p.agentbox(['diff', id]);
    expect(whole.code, whole.stderr).toBe(0);
    expect(whole.stdout).toContain('diff --git a/src/app.js b/src/app.js');
    expect(whole.stdout).toContain('-module.exports = 1;\n+module.exports = 42;');
    expect(whole.stdout).toContain('+export const added = 2;');
    expect(whole.stdout).not.toContain('\u001b[');
    const stat = await p.agentbox(['diff', id, '--stat']);
    expect(stat.stdout).toMatch(/src\/app\.js +\| 2 \+-/);
    expect(stat.stdout).toContain('3 files changed');
    const names = await p.agentbox(['diff', id, '--name-only']);
    expect(names.stdout.trim().split('\n').sort()).toEqual(['notes.txt', 'src/app.js', 'src/new.js']);
    const coloured = await p.agentbox(['diff', id, '--color=always']);
    expect(coloured.stdout).toContain('\u001b[32m');
    expect(plain(coloured.stdout)).toContain('\n+module.exports = 42;\n');
    // The same for a discarded run whose result commit is gone (built from changes.patch).
    expect((await p.agentbox(['discard', id])).code).toBe(0);
    expect(p.repo.git('branch', '--list', `agentbox/${name}`)).toBe('');
    const statePath = path.join(p.runDir(name), 'state.json');
    const state = JSON.parse(fs.readFileSync(statePath, 'utf8'));
    fs.writeFileSync(statePath, JSON.stringify({ ...state, result_commit: '0'.repeat(40) }));
    const rebuilt = await p.agentbox(['diff', id]);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(rebuilt.stdout.replace(/index \w+\.\.\w+/g, 'index X')).toBe(
      whole.stdout.replace(/index \w+\.\.\w+/g, 'index X'),
    );
    const bad = await p.agentbox(['diff', id, '--color=sometimes']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--color takes auto, always or never, not "sometimes"');
    const scout = 'TASK-DIFF-SCOUT';
    p.server.setRules([{ when: { anyText: scout }, reply: text('nothing to change') }]);
    const scouted = JSON.parse((await p.agentbox(['scout', scout, '--json'])).stdout).run as string;
    const none = await p.agentbox(['diff', scouted.slice(-6)]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('is a scout run: it changes no files');
  });

  it("in a terminal, diff goes through the person's pager, and merge shows it on `d` before it asks", async () => {
    const { name, id } = await fixRun('TASK-PAGER make app return 42');
    const env = { ...p.env, GIT_PAGER: 'sed "s/^/PAGED|/"', PAGER: 'false' };
    const paged = startPty(['diff', id], { cwd: p.repo.dir, env });
    expect(await paged.exited).toBe(0);
    // Through the pager, and in colour: git's own colour.ui=auto sees the terminal.
    expect(plain(paged.output())).toMatch(/PAGED\|\+module\.exports = 42;/);
    expect(paged.output()).toContain('\u001b[32m');
    const unpaged = startPty(['diff', id, '--no-pager'], { cwd: p.repo.dir, env });
    expect(await unpaged.exited).toBe(0);
    expect(unpaged.output()).not.toContain('PAGED|');
    expect(unpaged.output()).toContain('module.exports = 42;');

    const merging = startPty(['merge', id], { cwd: p.repo.dir, env });
    await waitFor(() => merging.output().includes('[y/N/d = show the diff]'), 'the merge prompt');
    await merging.type('d');
    await waitFor(() => /PAGED\|\+export const added = 2;/.test(plain(merging.output())), 'the diff, paged');
    await waitFor(() => merging.output().split('[y/N/d = show the diff]').length === 3, 'the prompt again');
    await merging.type('y');
    expect(await merging.exited).toBe(0);
    expect(merging.output()).toContain('merged 3 file(s)');
    expect(fs.readFileSync(path.join(p.repo.dir, 'src/app.js'), 'utf8')).toBe('module.exports = 42;\n');
    expect(p.state(name).status).toBe('MERGED');
    p.repo.git('checkout', '--quiet', '--', '.');
    p.repo.git('clean', '-fdq', '--', 'src');
  });

  it('a conflict with a local edit says to commit or stash; a run merged by hand can be recorded', async () => {
    const { name, id } = await fixRun('TASK-CONFLICT make app return 42');
    // The person is editing a file the run changed, and has not committed.
    fs.writeFileSync(path.join(p.repo.dir, 'src/app.js'), 'module.exports = 7;\n');
    const before = p.repo.git('status', '--porcelain');
    const refused = await p.agentbox(['merge', id, '--yes']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('conflicts in src/app.js');
    expect(refused.stderr).toContain(
      'You have uncommitted changes in src/app.js: commit them, or stash them (git stash)',
    );
    expect(refused.stderr).toContain(`agentbox merge ${id} --mark-merged`);
    expect(p.repo.git('status', '--porcelain')).toBe(before);
    expect(fs.readFileSync(path.join(p.repo.dir, 'src/app.js'), 'utf8')).toBe('module.exports = 7;\n');

    // Committed, it still conflicts: the hint is the three-way merge, then --mark-merged.
    p.repo.git('commit', '-qam', 'seven');
    const again = await p.agentbox(['merge', id, '--yes']);
    expect(again.stderr).toContain('changed here since the run started');
    expect(again.stderr).toContain(`git apply --3way ${path.join(p.runDir(name), 'changes.patch')}`);
    // The person follows it, resolves, and records the run.
    try {
      p.repo.git('apply', '--3way', path.join(p.runDir(name), 'changes.patch'));
    } catch {
      // Conflict markers in src/app.js: what the person resolves next.
    }
    expect(fs.readFileSync(path.join(p.repo.dir, 'src/app.js'), 'utf8')).toContain('<<<<<<<');
    fs.writeFileSync(path.join(p.repo.dir, 'src/app.js'), 'module.exports = 42;\n');
    p.repo.git('add', '-A');
    p.repo.git('commit', '-qm', 'merged by hand');
    const badFlags = await p.agentbox(['merge', id, '--mark-merged', '--commit']);
    expect(badFlags.code).toBe(2);
    expect(badFlags.stderr).toContain('--mark-merged changes no file');
    const marked = await p.agentbox(['merge', id, '--mark-merged']);
    expect(marked.code, marked.stderr).toBe(0);
    expect(marked.stdout).toContain(`recorded ${name} as merged (by hand; nothing was applied)`);
    expect(p.state(name).status).toBe('MERGED');
    const index = fs
      .readFileSync(path.join(p.repo.dir, '.agents', 'INDEX.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(index.at(-1)).toMatchObject({ run: name, event: 'merged', detail: 'marked merged by hand' });
    expect((await p.agentbox(['merge', id, '--mark-merged'])).stderr).toContain('is already merged');
  });

  it('from fix --detach to a merged, committed change with agentbox commands and git only', async () => {
    // A first line longer than a subject (git's 72 characters), and a second line.
    const subject = 'TASK-FLOW make app return 43 instead of 1 so that every caller of the';
    const task = `${subject} module sees the new value\nThe second line says why.`;
    p.server.setRules([
      {
        when: { anyText: 'TASK-FLOW', turn: 0 },
        reply: bash("printf 'module.exports = 43;\\n' > src/app.js"),
      },
      { when: { anyText: 'TASK-FLOW' }, reply: text('app.js now returns 43.') },
    ]);
    const head = p.repo.git('rev-parse', 'HEAD').trim();
    const started = await p.agentbox(['fix', task, '--detach']);
    expect(started.code, started.stderr).toBe(0);
    const name = started.stdout.split('\n')[0]!;
    const id = name.slice(-6);
    expect(started.stdout).toBe(
      `${name}\n  running in the background — follow it: agentbox watch ${id} · stop it: agentbox stop ${id}\n`,
    );
    const watched = await p.agentbox(['watch', id], { timeoutMs: 120_000 });
    expect(watched.code, watched.stderr).toBe(0);
    expect(watched.stdout.trimEnd().split('\n').slice(-2)).toEqual([
      `✓ ${name} — REVIEW · exit 0`,
      `  next agentbox diff ${id}, then agentbox merge ${id}`,
    ]);
    const reviewed = await p.agentbox(['diff', id]);
    expect(reviewed.stdout).toContain('+module.exports = 43;');
    expect(p.repo.git('diff', '--stat', 'HEAD', `agentbox/${name}`)).toContain('src/app.js');
    const merged = await p.agentbox(['merge', id, '--yes', '--commit']);
    expect(merged.code, merged.stderr).toBe(0);
    // git's convention: a subject cut at a word, no ellipsis; a blank line; the whole task in the body.
    expect(p.repo.git('log', '-1', '--format=%B', 'HEAD')).toBe(
      `${subject}\n\nMerged from agentbox run ${name}.\n\nTask:\n${task}\n\nAgentbox-Run: ${name}\n\n`,
    );
    expect(p.repo.git('rev-parse', 'HEAD^').trim()).toBe(head);
    expect(p.repo.git('show', 'HEAD:src/app.js')).toBe('module.exports = 43;\n');
    expect(p.repo.git('status', '--porcelain', '--', 'src')).toBe('');
    const cleaned = await p.agentbox(['discard', id]);
    expect(cleaned.code, cleaned.stderr).toBe(0);
    expect(p.repo.git('branch', '--list', `agentbox/${name}`)).toBe('');
  });
});

/** Text without its SGR colour sequences. */
function plain(text: string): string {
  return text.replace(/\u001b\[[0-9;]*m/g, '');
}
