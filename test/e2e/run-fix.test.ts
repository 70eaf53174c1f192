import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, text, tool } from '../fixtures/model-server/index.js';
import { AGENTBOX_BIN } from '../helpers/bin.js';
import { snapshotTree } from '../helpers/git-repo.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';

const FILES = {
  'src/app.ts': 'export const x = 1;\nexport const y = 2;\n',
  'old-name.txt': 'a file that moves\nline 2\nline 3\nline 4\n',
  'obsolete.txt': 'to be deleted\n',
};
// The main tree as a user sees it: without git's own folder and agentbox's ledger.
const mainTree = (p: Project) => snapshotTree(p.repo.dir, { skip: ['.git', '.agents'] });

describe('fix runs on the real Claude Code: the worktree airlock and the human gate', () => {
  let p: Project;
  beforeAll(async () => {
    p = await project({ files: FILES });
  });
  afterAll(async () => p?.cleanup());

  it('edits, adds, deletes, renames and writes a binary in its worktree only; merge --yes reproduces exactly that', async () => {
    const task = 'reshape the project';
    const at = (file: string) => (req: { workingDirectory?: string | undefined }) =>
      path.join(req.workingDirectory!, file);
    p.server.setRules(
      [
        (req: { workingDirectory?: string | undefined }) =>
          tool('Read', { file_path: at('src/app.ts')(req) }),
        (req: { workingDirectory?: string | undefined }) =>
          tool('Edit', {
            file_path: at('src/app.ts')(req),
            old_string: 'export const x = 1;',
            new_string: 'export const x = 42;',
          }),
        (req: { workingDirectory?: string | undefined }) =>
          tool('Write', { file_path: at('docs/new.md')(req), content: '# New\n' }),
        () =>
          bash(
            "git mv old-name.txt new-name.txt && echo 'line 5' >> new-name.txt && rm obsolete.txt && printf '\\211PNG\\000\\001\\377' > logo.png",
          ),
        () => text('Reshaped: x is 42, docs added, file renamed, logo added.'),
      ].map((reply, turn) => ({ when: { turn, anyText: task }, reply })),
    );
    const before = mainTree(p);
    const result = await p.agentbox(['fix', task]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const name = p.newest();
    expect(result.stdout).toContain(`✓ ${name} — REVIEW`);
    expect(result.stdout).toContain(
      `next          agentbox diff ${name.slice(-6)}, then agentbox merge ${name.slice(-6)}\n`,
    );
    // Every tool call succeeded inside the worktree…
    const results = p.server.requests
      .filter((r) => r.view.lastUserText.length > 0)
      .flatMap((r) => r.view.toolResults);
    expect(results.filter((r) => r.isError)).toEqual([]);
    // …and the main working tree did not change at all.
    expect(mainTree(p)).toEqual(before);

    const state = p.state(name);
    expect(state.status).toBe('REVIEW');
    expect(state.branch).toBe(`agentbox/${name}`);
    const worktree = state.worktree_path as string;
    // Outside the repository, in the user's data folder (HOME is the test's isolated home).
    expect(worktree.startsWith(path.join(p.home.home, '.local/share/agentbox/worktrees/'))).toBe(true);
    expect(path.basename(worktree)).toBe(name);
    expect(worktree.startsWith(fs.realpathSync(p.repo.dir))).toBe(false);
    expect(fs.readFileSync(path.join(worktree, 'src/app.ts'), 'utf8')).toContain('x = 42');

    const patch = fs.readFileSync(path.join(p.runDir(name), 'changes.patch'));
    const patchText = patch.toString('latin1');
    expect(patchText).toContain('rename from old-name.txt');
    expect(patchText).toContain('rename to new-name.txt');
    expect(patchText).toContain('deleted file mode 100644');
    expect(patchText).toContain('GIT binary patch');
    expect(patchText).not.toContain('.claude/commands');
    expect(p.read(name, 'report.md')).toContain('Reshaped: x is 42');

    const merged = await p.agentbox(['merge', name, '--yes']);
    expect(merged.stderr).toBe('');
    expect(merged.code).toBe(0);
    expect(merged.stdout).toContain('merged 5 file(s)');
    expect(merged.stdout).toContain(
      `next: run your tests; then commit the change (git add -p && git commit); then remove the run's worktree and branch: agentbox discard ${name.slice(-6)}`,
    );
    // The main tree now holds exactly what the agent left in its worktree.
    const fromWorktree = snapshotTree(worktree, { skip: ['.git', '.claude/commands', '.agentbox-run'] });
    expect(mainTree(p)).toEqual(fromWorktree);
    expect(fs.readFileSync(path.join(p.repo.dir, 'logo.png'))).toEqual(
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 0xff]),
    );
    expect(p.state(name).status).toBe('MERGED');
    const again = await p.agentbox(['merge', name, '--yes']);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already merged');
    // Discarding a merged run clears its worktree and branch away and keeps it MERGED.
    const cleaned = await p.agentbox(['discard', name]);
    expect(cleaned.stdout).toContain(`cleaned up merged run ${name}`);
    expect(fs.existsSync(worktree)).toBe(false);
    expect(p.state(name).status).toBe('MERGED');
    p.repo.commit('merge the reshape');
  });

  it('a merge that conflicts changes nothing and names the file', async () => {
    const task = 'bump y';
    p.server.setRules([
      {
        when: { turn: 0, anyText: task },
        reply: (req) => tool('Read', { file_path: path.join(req.workingDirectory!, 'src/app.ts') }),
      },
      {
        when: { turn: 1, anyText: task },
        reply: (req) =>
          tool('Edit', {
            file_path: path.join(req.workingDirectory!, 'src/app.ts'),
            old_string: 'export const y = 2;',
            new_string: 'export const y = 3;',
          }),
      },
      { when: { turn: 2, anyText: task }, reply: text('y is 3') },
    ]);
    const result = await p.agentbox(['fix', task]);
    expect(result.code).toBe(0);
    const name = p.newest();
    // Meanwhile the user changed the same line in the main tree.
    p.repo.write('src/app.ts', 'export const x = 42;\nexport const y = 99;\n');
    const before = mainTree(p);
    const merged = await p.agentbox(['merge', name, '--yes']);
    expect(merged.code).toBe(1);
    expect(merged.stderr).toContain(`the changes of ${name} do not apply`);
    expect(merged.stderr).toContain('conflicts in src/app.ts');
    expect(merged.stderr).toContain('nothing was changed');
    expect(mainTree(p)).toEqual(before);
    expect(p.state(name).status).toBe('REVIEW');

    // Without --yes and without a terminal to ask on, merge refuses and changes nothing.
    p.repo.git('checkout', '--', 'src/app.ts');
    const unasked = await p.agentbox(['merge', name]);
    expect(unasked.code).toBe(2);
    expect(unasked.stderr).toContain('refusing to merge without a confirmation');
    expect(p.repo.read('src/app.ts')).toContain('y = 2');

    // --commit makes a commit from the task.
    const committed = await p.agentbox(['merge', name, '--yes', '--commit']);
    expect(committed.code).toBe(0);
    expect(p.repo.git('log', '-1', '--format=%s%n%b')).toContain(`bump y\nMerged from agentbox run ${name}.`);
    expect(p.repo.git('status', '--porcelain')).toBe('');
  });

  it('discard removes the worktree and its branch, and keeps the run folder and its patch', async () => {
    const task = 'add notes';
    p.server.setRules([
      {
        when: { turn: 0, anyText: task },
        reply: (req) =>
          tool('Write', { file_path: path.join(req.workingDirectory!, 'NOTES.md'), content: 'n\n' }),
      },
      { when: { turn: 1, anyText: task }, reply: text('added') },
    ]);
    expect((await p.agentbox(['fix', task])).code).toBe(0);
    const name = p.newest();
    const { worktree_path: worktree, branch } = p.state(name);
    const discarded = await p.agentbox(['discard', name]);
    expect(discarded.code).toBe(0);
    expect(fs.existsSync(worktree)).toBe(false);
    expect(p.repo.git('branch', '--list', branch)).toBe('');
    expect(p.state(name).status).toBe('DISCARDED');
    expect(fs.existsSync(path.join(p.runDir(name), 'changes.patch'))).toBe(true);
    expect((await p.agentbox(['discard', name])).stdout).toContain('already discarded');
    expect((await p.agentbox(['merge', name, '--yes'])).stderr).toContain('was discarded');
  });

  it('notes the agent writes to its RUN_DIR are filed under artifacts/ and kept out of the patch', async () => {
    const task = 'take notes';
    p.server.setRules([
      {
        when: { turn: 0, anyText: task },
        reply: (req) => {
          const runDir = /RUN_DIR=(\S+)/.exec(req.system)![1]!;
          return tool('Write', {
            file_path: path.join(runDir, 'evidence/notes.md'),
            content: 'what I saw\n',
          });
        },
      },
      {
        // What is no file there (a FIFO, links out, a broken link) made the copy throw: the run's end
        // could not be recorded; a FIFO as the gate's log blocked it. Now each is skipped, and said.
        when: { turn: 1, anyText: task },
        reply: (req) => {
          const runDir = /RUN_DIR=(\S+)/.exec(req.system)![1]!;
          return tool('Bash', {
            command: `cd '${runDir}' && mkfifo pipe events.jsonl && ln -s /etc/hostname key && ln -s /nonexistent broken && ln -s .. up`,
          });
        },
      },
      {
        when: { turn: 2, anyText: task },
        reply: (req) =>
          tool('Write', { file_path: path.join(req.workingDirectory!, 'CHANGE.md'), content: 'c\n' }),
      },
      {
        // A file too large for a patch (a core dump): a 1.3 GB patch held in memory, twice, before.
        when: { turn: 3, anyText: task },
        reply: (req) => tool('Bash', { command: `truncate -s 60M '${req.workingDirectory}/core'` }),
      },
      { when: { turn: 4, anyText: task }, reply: text('noted') },
    ]);
    const result = await p.agentbox(['fix', task]);
    expect(result.code, result.stderr).toBe(0);
    const name = p.newest();
    expect(p.read(name, 'artifacts/evidence/notes.md')).toBe('what I saw\n');
    const skipped = p.events(name).filter((e) => e.event === 'artifact_skipped');
    expect(skipped.map((e) => `${e.path}: ${e.why}`).sort()).toEqual([
      'broken: a link, not a file',
      'events.jsonl: a FIFO, not a file',
      'key: a link, not a file',
      'pipe: a FIFO, not a file',
      'up: a link, not a file',
    ]);
    // The gate's log in the RUN_DIR as a FIFO blocked the run's end for good: refused, and said.
    expect(p.events(name).filter((e) => e.event === 'agent_log_skipped')).toHaveLength(1);
    expect(fs.readdirSync(path.join(p.runDir(name), 'artifacts'))).toEqual(['evidence']);
    const patch = p.read(name, 'changes.patch');
    expect(patch).toContain('+++ b/CHANGE.md');
    expect(patch).not.toContain('notes.md');
    expect(p.state(name).status).toBe('REVIEW');
    // Left out of the patch, said in the summary, the report, the events and `show`.
    expect(patch).not.toContain('core');
    const said = 'files too large for the patch, left out of it (1): they stay in the worktree';
    expect(result.stdout).toContain(said);
    expect(result.stdout).toContain('core  (60.0 MiB: over the 50.0 MiB a file may have)');
    expect(p.read(name, 'report.md')).toContain('- `core` — 60.0 MiB: over the 50.0 MiB a file may have');
    const [leftOut] = p.events(name).filter((e) => e.event === 'files_left_out');
    expect(leftOut).toMatchObject({ files: [{ path: 'core', bytes: 60 * 2 ** 20, why: 'file' }], more: 0 });
    expect((await p.agentbox(['show', name])).stdout).toContain(said);
  });

  it('Ctrl-C stops the run cleanly: claude ended, ABORTED, and what it changed is exported', async () => {
    const task = 'slow change';
    p.server.setRules([
      {
        when: { turn: 0, anyText: task },
        reply: (req) =>
          tool('Write', {
            file_path: path.join(req.workingDirectory!, 'partial.txt'),
            content: 'half done\n',
          }),
      },
      { when: { turn: 1, anyText: task }, reply: { text: 'never arrives', delayMs: 120_000 } },
    ]);
    const child = spawn(process.execPath, [AGENTBOX_BIN, 'fix', task], {
      cwd: p.repo.dir,
      env: p.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    // Wait until the model has been asked for turn 1 (the write is done, the run waits on the model).
    const deadline = Date.now() + 30_000;
    while (
      !p.server.requests.some((r) => r.view.turn === 1 && r.view.allText.includes(task)) &&
      Date.now() < deadline
    ) {
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill('SIGINT');
    // Stopped cleanly, and the exit code says Ctrl-C (128 + SIGINT) as a shell expects.
    expect(await exited).toBe(130);
    const name = p.newest();
    const state = p.state(name);
    expect(state.status).toBe('ABORTED');
    expect(state.failure).toMatchObject({ kind: 'killed', message: 'stopped by Ctrl-C' });
    expect(state.claude_pid).toBeNull();
    expect(p.read(name, 'changes.patch')).toContain('+half done');
    expect(stdout).toContain('ABORTED');
    expect(fs.existsSync(path.join(p.repo.dir, 'partial.txt'))).toBe(false);
  });

  it('a second Ctrl-C while the clean stop waits exits at once and says what is left (it said nothing)', async () => {
    // A claude that ignores SIGTERM and SIGINT (a fake: the real one ends on them), so the clean
    // stop waits out its grace period; its pid is written for the cleanup.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-stubborn-'));
    const fake = path.join(dir, 'claude');
    fs.writeFileSync(
      fake,
      `#!/bin/sh\ntrap '' TERM INT\necho $$ > '${dir}/pid'\nwhile :; do sleep 0.1; done\n`,
      {
        mode: 0o755,
      },
    );
    const child = spawn(process.execPath, [AGENTBOX_BIN, 'fix', 'stubborn'], {
      cwd: p.repo.dir,
      env: { ...p.env, AGENTBOX_CLAUDE_BIN: fake, AGENTBOX_RESIDENT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      // Until the run has recorded its claude (then it listens for Ctrl-C): a Ctrl-C before that
      // ends the command at once, with no clean stop to cut short.
      const deadline = Date.now() + 30_000;
      const recorded = () => {
        try {
          return fs.existsSync(path.join(dir, 'pid')) && Boolean(p.state(p.newest()).claude_pid);
        } catch {
          return false;
        }
      };
      while (!recorded() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 300));
      child.kill('SIGINT');
      await new Promise((r) => setTimeout(r, 500));
      const asked = Date.now();
      child.kill('SIGINT');
      expect(await exited).toBe(130);
      expect(Date.now() - asked).toBeLessThan(3_000);
      expect(stderr).toContain(
        'agentbox: Ctrl-C again: exiting at once, without the clean stop; what was running is left as it was: agentbox status shows it, agentbox recover takes it up',
      );
    } finally {
      const pid = Number(fs.readFileSync(path.join(dir, 'pid'), 'utf8'));
      for (const target of [-pid, pid])
        try {
          process.kill(target, 'SIGKILL');
        } catch {
          // gone already, or not a group leader
        }
      if (child.exitCode === null) child.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('leaves no process behind', async () => {
    await expectNoProcessesLeft(p.tag);
  });
});

describe('a repository removed while its fix run goes on', () => {
  it('says the repository is gone and where the worktree is left (it said "free disk space")', async () => {
    const q = await project({ files: { 'a.txt': 'a\n' } });
    try {
      const task = 'TASK-REPO-GONE wait';
      q.server.setRules([
        { when: { anyText: task, turn: 0 }, reply: bash('echo b > a.txt && sleep 3') },
        { when: { anyText: task }, reply: text('Done.') },
      ]);
      const run = q.agentbox(['fix', task], { env: { AGENTBOX_RESIDENT: '0' } });
      const deadline = Date.now() + 60_000;
      while (!q.server.requests.some((r) => r.view.allText.includes(task)) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 500));
      const worktree = q.state(q.newest()).worktree_path as string;
      fs.rmSync(q.repo.dir, { recursive: true, force: true });
      const ended = await run;
      expect(ended.code).toBe(1);
      expect(ended.stderr).toContain(
        `its repository ${q.repo.dir} is gone (removed or moved while the run went on)`,
      );
      expect(ended.stderr).toContain(`its worktree is left at ${worktree}`);
      expect(ended.stderr).not.toContain('free disk space');
    } finally {
      await q.cleanup();
    }
  }, 120_000);
});
