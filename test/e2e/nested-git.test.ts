import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, text } from '../fixtures/model-server/index.js';
import { AGENTBOX_BIN } from '../helpers/bin.js';
import { GIT_ENV, gitRepo, tempDir } from '../helpers/git-repo.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';

/**
 * Issue 27, route 1: a fix run's agent makes git repositories inside its worktree (the sandbox
 * protects only the worktree's own `.git`) and plants a command in their config. agentbox's own
 * git at the run's end and at `uninstall --purge`, and the person's own `git status` afterwards,
 * must run none of it; the run ends normally, the nested paths are logged, listed and kept out of
 * the patch. The marker lives where the sandbox cannot write: only a command run as the person,
 * outside the box, can create it.
 */
const waitFor = async (check: () => boolean, ms = 30_000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for turn 1');
    await new Promise((r) => setTimeout(r, 100));
  }
};

describe('agent-written nested repositories are inert (the real sandbox)', () => {
  let p: Project;
  let root: string;
  let marker: string;
  const plainGit = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, { cwd, env: { ...process.env, ...GIT_ENV }, stdio: 'ignore' });
  beforeAll(async () => {
    p = await project({ files: { 'src/app.ts': 'export const x = 1;\n' } });
    root = fs.realpathSync(p.repo.dir);
    marker = path.join(tempDir('agentbox-marks-'), 'fired');
    // A submodule the worktree gets as an empty folder (worktrees do not check submodules out).
    const sub = gitRepo();
    p.repo.git('-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub.dir, 'sm');
    p.repo.commit('a submodule');
  });
  afterAll(async () => p?.cleanup());

  it('the run ends REVIEW, nothing planted runs, and each nested path is logged and listed', async () => {
    const g = 'env -u GIT_DIR -u GIT_WORK_TREE -u GIT_INDEX_FILE git';
    const plant = `"touch ${marker}; false"`;
    const steps = [
      // a repository without a commit, its fsmonitor and hooks planted. NOTE: in one command: the
      // sandbox makes a `.git/config` that exists when a command starts read-only (measured).
      `${g} init -q inner && ${g} -C inner config core.fsmonitor ${plant} && ${g} -C inner config core.hooksPath hooks && mkdir -p inner/hooks && printf '#!/bin/sh\\ntouch ${marker}\\n' > inner/hooks/pre-commit && chmod +x inner/hooks/pre-commit && echo x > inner/f.txt`,
      // a .git file pointing at a git dir elsewhere in the tree, and a .git symlink to it
      `mkdir linked && ${g} init -q --separate-git-dir="$PWD/linked/gd" linked && ${g} -C linked config core.fsmonitor ${plant} && mkdir viasym && ln -s ../linked/gd viasym/.git`,
      // git init in the empty submodule folder, with a filter driver and the attributes naming it
      `(cd sm && ${g} init -q && ${g} config core.fsmonitor ${plant} && ${g} config filter.x.clean ${plant} && echo '* filter=x' > .gitattributes && echo y > y.txt)`,
      'echo fixed > fixed.txt',
    ];
    const task = 'nest a repository';
    p.server.setRules([
      ...steps.map((command, turn) => ({ when: { turn, anyText: task }, reply: bash(command) })),
      { when: { turn: steps.length, anyText: task }, reply: text('done') },
    ]);
    const first = p.server.requests.length;
    const result = await p.agentbox(['fix', task]);
    expect(fs.existsSync(marker), 'a planted command ran at the end of the run').toBe(false);
    expect(result.code, result.stderr).toBe(0);
    const name = p.newest();
    // Each planting step worked inside the box (else this test proves nothing).
    const requests = p.server.requests.slice(first);
    for (const turn of steps.keys()) {
      const res = requests.find((r) => r.view.turn === turn + 1)!.view.toolResults[0];
      expect(res?.isError, `step ${turn}: ${res?.content}`).toBeFalsy();
    }
    expect(p.state(name).status).toBe('REVIEW');
    expect(fs.existsSync(marker)).toBe(false);

    const nested = p.events(name).filter((e) => e.event === 'nested_git');
    expect(nested.map((e) => e.path).sort()).toEqual(['inner', 'linked', 'sm', 'viasym']);
    const patch = p.read(name, 'changes.patch');
    expect(patch).toContain('fixed.txt');
    expect(patch).not.toMatch(/inner|linked|viasym|\bsm\b/);
    expect(p.read(name, 'report.md')).toContain('## Nested repositories');
    const show = await p.agentbox(['show', name]);
    expect(show.stdout).toContain('nested repositories, never followed');
    expect(show.stdout).toMatch(/ {2}inner\/ {2}\(\.git folder\) → raw\/nested-git\//);
    // Not only in events.jsonl (issue 37 item 7): the run's own summary and merge's, before it
    // asks, name what is not in the patch. (Without a terminal merge then refuses to go on.)
    for (const [what, out] of [
      ['the summary', result.stdout],
      ['merge', (await p.agentbox(['merge', name])).stdout],
    ] as const) {
      expect(out, what).toContain('nested repositories, never followed, left out of the patch (4)');
      for (const folder of ['inner', 'linked', 'sm', 'viasym'])
        expect(out, what).toContain(`  ${folder}/  (.git`);
    }
    expect(p.state(name).status).toBe('REVIEW');

    // The person's own git in the worktree afterwards, with no hardening at all.
    const worktree = path.resolve(root, p.state(name).worktree_path);
    expect(fs.existsSync(path.join(worktree, 'inner', 'f.txt'))).toBe(true);
    plainGit(worktree, 'status');
    plainGit(worktree, 'diff');
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('at resume of a crashed run, a nested repository planted since runs nothing either', async () => {
    const task = 'nest then hang';
    const fired = `${marker}-resume`;
    const g = 'env -u GIT_DIR -u GIT_WORK_TREE git';
    p.server.setRules([
      {
        when: { turn: 0, anyText: task },
        reply: bash(`${g} init -q inner2 && echo z > inner2/z.txt && echo ok > done.txt`),
      },
      { when: { turn: 1, anyText: task }, reply: { text: 'never', delayMs: 120_000 } },
      { when: { anyText: 'please wrap up' }, reply: text('Wrapped up.') },
    ]);
    const child = spawn(process.execPath, [AGENTBOX_BIN, 'fix', task], {
      cwd: root,
      env: p.env,
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await waitFor(() => p.server.requests.some((r) => r.view.turn === 1 && r.view.allText.includes(task)));
    const name = p.newest();
    process.kill(p.state(name).claude_pid, 'SIGKILL');
    expect(await exited).toBe(1);
    expect(p.state(name)).toMatchObject({ status: 'CRASHED', failure: { kind: 'killed' } });
    const worktree = path.resolve(root, p.state(name).worktree_path);
    // Planted between the crash and the resume: a repository with a commit in the submodule folder.
    const sm = path.join(worktree, 'sm');
    plainGit(sm, 'init', '-q');
    plainGit(sm, 'commit', '-q', '--allow-empty', '-m', 'x');
    plainGit(sm, 'config', 'core.fsmonitor', `touch ${fired}; false`);
    const resumed = await p.agentbox(['resume', name, 'please wrap up']);
    expect(fs.existsSync(fired), 'a planted command ran at resume').toBe(false);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(p.state(name).status).not.toBe('CRASHED');
    const nested = p.events(name).filter((e) => e.event === 'nested_git');
    expect(nested.map((e) => e.path).sort()).toEqual(['inner2', 'sm']);
    expect(p.read(name, 'changes.patch')).toContain('done.txt');
    expect(p.read(name, 'changes.patch')).not.toMatch(/inner2|\bsm\b/);
    plainGit(worktree, 'status');
    expect(fs.existsSync(fired)).toBe(false);
  });

  it('uninstall --purge does not enter a nested repository', async () => {
    // A nested repository in a worktree when `uninstall --purge` looks at it (say, one left by a
    // run that never reached its end): purge's git does not enter it either.
    const fired = `${marker}-purge`;
    const name = p.runs()[0]!;
    const worktree = path.resolve(root, p.state(name).worktree_path);
    plainGit(path.join(worktree, 'sm'), 'init', '-q');
    plainGit(path.join(worktree, 'sm'), 'commit', '-q', '--allow-empty', '-m', 'x');
    plainGit(path.join(worktree, 'sm'), 'config', 'core.fsmonitor', `touch ${fired}; false`);
    expect(fs.existsSync(fired)).toBe(false);
    const purged = await p.agentbox(['uninstall', '--purge', '--force']);
    expect(purged.code, purged.stderr).toBe(0);
    expect(fs.existsSync(fired)).toBe(false);
  });

  it('leaves no process behind', async () => {
    await expectNoProcessesLeft(p.tag);
  });
});
