import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RequestView, text, tool } from '../fixtures/model-server/index.js';
import { tempDir } from '../helpers/git-repo.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';

/**
 * Issue 37 item 3, on the real Claude Code and its sandbox: the person's `.git/hooks/pre-commit`
 * runs `sh scripts/lint.sh`; a fix run's model rewrites `scripts/lint.sh`; `merge --yes --commit`
 * used to run it, as the person and outside any box (the issue saw `uid=0(root)` in a marker).
 * Now the commit runs no hook of theirs: no marker, and merge says which hook did not run.
 */
describe('merge --yes --commit runs no hook of the person’s on the run’s files', () => {
  let p: Project;
  let marks: string;
  beforeAll(async () => {
    marks = tempDir('agentbox-marks-');
    p = await project({ files: { 'scripts/lint.sh': 'exit 0\n', 'src/a.ts': 'export const a = 1;\n' } });
    const hook = path.join(p.repo.dir, '.git/hooks/pre-commit');
    fs.writeFileSync(hook, '#!/bin/sh\nsh scripts/lint.sh\n', { mode: 0o755 });
  });
  afterAll(async () => p?.cleanup());

  it('the run rewrites scripts/lint.sh; the merge commits it without running it', async () => {
    const task = 'TASK-HOOKS make a two';
    const at = (r: RequestView, file: string) => path.join(r.workingDirectory!, file);
    p.server.setRules([
      {
        when: { anyText: task, turn: 0 },
        reply: (r: RequestView) =>
          tool('Write', {
            file_path: at(r, 'scripts/lint.sh'),
            content: `id >> '${marks}/lint'\nexit 0\n`,
          }),
      },
      {
        when: { anyText: task, turn: 1 },
        reply: (r: RequestView) =>
          tool('Edit', {
            file_path: at(r, 'src/a.ts'),
            old_string: 'export const a = 1;',
            new_string: 'export const a = 2;',
          }),
      },
      { when: { anyText: task }, reply: text('a is 2 now; lint adjusted.') },
    ]);
    const run = await p.agentbox(['fix', task]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const name = p.newest();
    expect(p.state(name).status).toBe('REVIEW');
    expect(p.read(name, 'changes.patch')).toContain(`+id >> '${marks}/lint'`);
    // Inside its box the agent never ran it either.
    expect(fs.readdirSync(marks)).toEqual([]);

    const merged = await p.agentbox(['merge', name.slice(-6), '--yes', '--commit']);
    expect(merged.stderr).toBe('');
    expect(merged.code).toBe(0);
    expect(fs.readdirSync(marks)).toEqual([]);
    expect(merged.stdout).toContain(
      '  your git hooks did not run for this commit: pre-commit (.git/hooks)\n',
    );
    expect(merged.stdout).toContain('once you have read them: git commit --amend --no-edit --only\n');
    expect(p.repo.git('show', '--name-only', '--format=', 'HEAD').trim().split('\n')).toEqual([
      'scripts/lint.sh',
      'src/a.ts',
    ]);
    expect(p.state(name).status).toBe('MERGED');
    expect(p.events(name).find((e) => e.event === 'merge_git')).toMatchObject({
      committed: true,
      hooks_not_run: ['pre-commit'],
      hooks_dir: '.git/hooks',
      run_hooks: 'git commit --amend --no-edit --only',
    });
    // The ledger's record of the merge says it too (INDEX.jsonl).
    const index = fs.readFileSync(path.join(p.repo.dir, '.agents/INDEX.jsonl'), 'utf8');
    const record = index
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .find((e) => e.event === 'merged' && e.run === name);
    expect(record?.detail).toContain('(git hooks not run: pre-commit)');
    await expectNoProcessesLeft(p.tag);
  }, 180_000);
});

/**
 * Found beside item 3: agentbox's own git at a run's end (the patch, checkpoints) ran the person's
 * filter on what the agent wrote. The person's config has `filter.strip.clean = sh
 * scripts/clean.sh`; the model writes a `.gitattributes` sending every .txt file to it and its own
 * scripts/clean.sh. Nothing may run it: not the run's end, not the merge.
 */
describe('a run’s end and its merge run no filter of the person’s on what the agent wrote', () => {
  let p: Project;
  let marks: string;
  beforeAll(async () => {
    marks = tempDir('agentbox-marks-');
    p = await project({ files: { 'scripts/clean.sh': 'cat\n', 'src/a.ts': 'export const a = 1;\n' } });
    p.repo.git('config', 'filter.strip.clean', 'sh scripts/clean.sh');
    p.repo.git('config', 'filter.strip.smudge', 'sh scripts/clean.sh');
  });
  afterAll(async () => p?.cleanup());

  it('the agent maps its notes to the filter and rewrites the script it runs', async () => {
    const task = 'TASK-FILTER write notes';
    const files: [string, string][] = [
      ['.gitattributes', '*.txt filter=strip\n'],
      ['scripts/clean.sh', `echo "$PWD" >> '${marks}/clean'\ncat\n`],
      ['notes.txt', 'notes\n'],
    ];
    p.server.setRules([
      ...files.map(([file, content], turn) => ({
        when: { anyText: task, turn },
        reply: (r: RequestView) =>
          tool('Write', { file_path: path.join(r.workingDirectory!, file), content }),
      })),
      { when: { anyText: task }, reply: text('notes written.') },
    ]);
    const run = await p.agentbox(['fix', task]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const name = p.newest();
    expect(fs.readdirSync(marks)).toEqual([]);
    // The patch holds the bytes the agent wrote, not what a filter made of them.
    expect(p.read(name, 'changes.patch')).toContain(`+echo "$PWD" >> '${marks}/clean'`);

    const merged = await p.agentbox(['merge', name.slice(-6), '--yes', '--allow-sensitive', '--commit']);
    expect(merged.stderr).toBe('');
    expect(merged.code).toBe(0);
    expect(fs.readdirSync(marks)).toEqual([]);
    expect(merged.stdout).toContain('  not run through your git filters: notes.txt (strip)\n');
    expect(p.events(name).find((e) => e.event === 'merge_git')).toMatchObject({
      filters_off: ['strip'],
      unfiltered: [{ path: 'notes.txt', driver: 'strip' }],
    });
    await expectNoProcessesLeft(p.tag);
  }, 180_000);
});
