import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type AirlockScope, judgeToolUse } from '../../src/airlock/guard.js';
import { runDenyRules } from '../../src/airlock/rules.js';
import { tempDir } from '../helpers/git-repo.js';

const root = tempDir('agentbox-airlock-');
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
const ledger = path.join(root, '.agents');
const runDir = path.join(ledger, 'runs/26-11-21_1400__fix-x__a1b2c3');
const otherRun = path.join(ledger, 'runs/26-11-21_1300__other__ffffff');
const worktree = path.join(ledger, 'worktrees/26-11-21_1400__fix-x__a1b2c3');
for (const d of [runDir, otherRun, worktree, path.join(root, 'src')]) fs.mkdirSync(d, { recursive: true });
fs.symlinkSync(path.join(root, 'src'), path.join(worktree, 'escape'));

const fix: AirlockScope = { type: 'fix', repoRoot: root, ledgerDir: ledger, runDir, worktree };
const scout: AirlockScope = { type: 'scout', repoRoot: root, ledgerDir: ledger, runDir, worktree: null };

describe('judgeToolUse', () => {
  it.each<[string, AirlockScope, string, unknown, string, string | true]>([
    ['write in the worktree', fix, 'Write', { file_path: `${worktree}/a.ts` }, worktree, true],
    ['relative edit in the worktree', fix, 'Edit', { file_path: 'src/a.ts' }, worktree, true],
    ['write to the own run folder', fix, 'Write', { file_path: `${runDir}/raw/notes.md` }, worktree, true],
    [
      'write into the main tree',
      fix,
      'Write',
      { file_path: `${root}/src/a.ts` },
      worktree,
      'write-outside-worktree',
    ],
    [
      'relative escape with ..',
      fix,
      'Write',
      { file_path: '../../../src/a.ts' },
      worktree,
      'write-outside-worktree',
    ],
    [
      'escape through a symlink',
      fix,
      'Edit',
      { file_path: `${worktree}/escape/a.ts` },
      worktree,
      'write-outside-worktree',
    ],
    ['write to /tmp', fix, 'Write', { file_path: '/tmp/x' }, worktree, 'write-outside-worktree'],
    ['scout may not write the repo', scout, 'Write', { file_path: `${root}/a.ts` }, root, 'read-only-run'],
    ['scout notebook edit', scout, 'NotebookEdit', { notebook_path: 'a.ipynb' }, root, 'read-only-run'],
    ['read the main tree', fix, 'Read', { file_path: `${root}/src/a.ts` }, worktree, true],
    ['read the index', scout, 'Read', { file_path: `${ledger}/INDEX.md` }, root, 'ledger'],
    ['read another run', fix, 'Read', { file_path: `${otherRun}/report.md` }, worktree, 'ledger'],
    ['grep the ledger', scout, 'Grep', { pattern: 'x', path: '.agents' }, root, 'ledger'],
    ['glob from inside the ledger', scout, 'Glob', { pattern: '**/*' }, ledger, 'ledger'],
    ['grep the repo', scout, 'Grep', { pattern: 'x' }, root, true],
    ['read own run folder', fix, 'Read', { file_path: `${runDir}/raw/x` }, worktree, true],
    ['bash in the worktree', fix, 'Bash', { command: 'npm test && git status' }, worktree, true],
    ['bash with own worktree path', fix, 'Bash', { command: `ls ${worktree}/src` }, worktree, true],
    ['bash cat of the index', scout, 'Bash', { command: 'cat .agents/INDEX.md' }, root, 'ledger'],
    [
      'bash -c cat of a run',
      scout,
      'Bash',
      { command: 'bash -c "cat .agents/runs/x/report.md"' },
      root,
      'ledger',
    ],
    ['bash ls of the ledger', scout, 'Bash', { command: 'ls .agents' }, root, 'ledger'],
    [
      'bash absolute ledger path',
      fix,
      'Bash',
      { command: `python3 -c "open('${ledger}/INDEX.md')"` },
      worktree,
      'ledger',
    ],
    ['agentbox merge', fix, 'Bash', { command: 'agentbox merge latest --yes' }, worktree, 'human-gate'],
    ['npx agentbox discard', fix, 'Bash', { command: 'npx agentbox discard latest' }, worktree, 'human-gate'],
    ['node bin merge', fix, 'Bash', { command: 'node ./bin/agentbox.cjs merge x' }, worktree, 'human-gate'],
    [
      'node old bin merge',
      fix,
      'Bash',
      { command: 'node ./bin/agentbox.js merge x' },
      worktree,
      'human-gate',
    ],
    [
      'redirect into main tree',
      fix,
      'Bash',
      { command: `echo pwned > ${root}/src/a.ts` },
      worktree,
      'write-outside-worktree',
    ],
    ['scout bash with repo path', scout, 'Bash', { command: `ls ${root}/src` }, root, true],
    [
      'skill: human-only merge',
      fix,
      'Skill',
      { skill: 'run_a1b2c3:merge_a1b2c3' },
      worktree,
      'human-only-command',
    ],
    [
      'skill: other run apply',
      fix,
      'Skill',
      { skill: 'run_ffffff:apply_ffffff' },
      worktree,
      'human-only-command',
    ],
    ['skill: safe report', fix, 'Skill', { skill: 'run_a1b2c3:report_a1b2c3' }, worktree, true],
    ['unknown tool', fix, 'TodoWrite', { todos: [] }, worktree, true],
  ])('%s', (_name, scope, tool, input, cwd, expected) => {
    const verdict = judgeToolUse(scope, tool, input, cwd);
    if (expected === true) expect(verdict).toEqual({ allow: true });
    else {
      expect(verdict.allow).toBe(false);
      expect(verdict.allow === false && verdict.rule).toBe(expected);
      expect(verdict.allow === false && verdict.reason).toMatch(/^agentbox: /);
    }
  });
});

describe('runDenyRules', () => {
  it('denies a read-only run every write in the repository', () => {
    const rules = runDenyRules(scout, []);
    expect(rules).toContain(`Edit(/${root}/**)`);
    expect(rules).toContain(`Read(/${ledger}/INDEX.md)`);
    expect(rules).toContain(`Read(/${ledger}/ui/**)`);
    expect(rules).toContain(`Read(/${ledger}/cache/**)`);
    expect(rules).toContain(`Read(/${ledger}/**)`);
    expect(rules).toContain('Bash(agentbox merge:*)');
  });

  it('denies a fix run the main tree around its worktree, never the worktree itself', () => {
    const rules = runDenyRules(fix, [
      { name: 'src', dir: true },
      { name: 'README.md', dir: false },
      { name: '.agents', dir: true },
    ]);
    expect(rules).toContain(`Edit(/${root}/src/**)`);
    expect(rules).toContain(`Edit(/${root}/README.md)`);
    // A rule matching the .agents folder would cover the worktree under it (gitignore semantics).
    expect(rules).toContain(`Edit(/${root}/.agents/cache/index-fold.json)`);
    expect(rules).not.toContain(`Edit(/${root}/*)`);
    expect(rules).not.toContain(`Edit(/${root}/**)`);
    expect(rules.some((r) => r.startsWith(`Edit(/${root}/.agents`) && r.endsWith('/**)'))).toBe(false);
    for (const r of rules)
      expect(r.startsWith('Edit(//') || r.startsWith('Read(//') || r.startsWith('Bash(')).toBe(true);
  });

  it('never denies the folder holding the worktree (runs.worktree_dir: wt): the sandbox would make the worktree read-only', () => {
    const rules = runDenyRules({ ...fix, worktree: path.join(root, 'wt', 'fix-x') }, [
      { name: 'src', dir: true },
      { name: 'wt', dir: true },
      { name: '.agents', dir: true },
    ]);
    expect(rules).toContain(`Edit(/${root}/src/**)`);
    expect(rules.some((r) => r.startsWith(`Edit(/${root}/wt`))).toBe(false);
  });

  it('denies the whole repository when the worktree lives outside it', () => {
    const rules = runDenyRules({ ...fix, worktree: '/elsewhere/wt' }, [{ name: 'src', dir: true }]);
    expect(rules).toContain(`Edit(/${root}/**)`);
  });
});
