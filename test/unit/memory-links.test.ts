import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type AirlockScope, judgeToolUse } from '../../src/airlock/guard.js';
import { foreignMemoryAbove, memoryLinkOnTheWay, startupLinkOut } from '../../src/airlock/memory-links.js';
import { tempDir } from '../helpers/git-repo.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
function mk(prefix: string): string {
  const d = fs.realpathSync(tempDir(prefix));
  dirs.push(d);
  return d;
}

/** A tree the run may read, a home it may not, and a secret in the home. */
function world() {
  const tree = mk('agentbox-memory-tree-');
  const home = mk('agentbox-memory-home-');
  const secret = path.join(home, 'secret.txt');
  fs.writeFileSync(secret, 'SECRET\n');
  fs.mkdirSync(path.join(tree, 'sub', 'deeper'), { recursive: true });
  fs.writeFileSync(path.join(tree, 'AGENTS.md'), 'instructions\n');
  const mayRead = (real: string) => real === tree || real.startsWith(`${tree}/`);
  return { tree, home, secret, mayRead };
}

describe('memoryLinkOnTheWay: the CLAUDE.md files Claude Code loads around a file', () => {
  it('finds a link out in the file’s folder or any folder above it in the tree, CLAUDE.local.md too', () => {
    const { tree, secret, mayRead } = world();
    const file = path.join(tree, 'sub', 'deeper', 'f.txt');
    expect(memoryLinkOnTheWay(file, tree, mayRead)).toBeNull();
    fs.symlinkSync(secret, path.join(tree, 'sub', 'CLAUDE.local.md'));
    expect(memoryLinkOnTheWay(file, tree, mayRead)).toEqual({
      file: path.join(tree, 'sub', 'CLAUDE.local.md'),
      real: secret,
    });
    // A file beside it, above it: its folder's chain does not pass sub/.
    expect(memoryLinkOnTheWay(path.join(tree, 'a.txt'), tree, mayRead)).toBeNull();
  });

  it('lets a link inside the tree be (CLAUDE.md -> AGENTS.md); a broken one is refused; outside the tree nothing is looked at', () => {
    const { tree, home, mayRead } = world();
    fs.symlinkSync('AGENTS.md', path.join(tree, 'CLAUDE.md'));
    expect(memoryLinkOnTheWay(path.join(tree, 'sub', 'f.txt'), tree, mayRead)).toBeNull();
    fs.symlinkSync(path.join(home, 'not-yet'), path.join(tree, 'sub', 'CLAUDE.md'));
    expect(memoryLinkOnTheWay(path.join(tree, 'sub', 'f.txt'), tree, mayRead)).toEqual({
      file: path.join(tree, 'sub', 'CLAUDE.md'),
      real: null,
    });
    fs.symlinkSync(path.join(home, 'x'), path.join(home, 'CLAUDE.md'));
    expect(memoryLinkOnTheWay(path.join(home, 'f.txt'), tree, mayRead)).toBeNull();
  });
});

describe('startupLinkOut: what Claude Code reads when it starts', () => {
  it.each([
    ['CLAUDE.md'],
    ['CLAUDE.local.md'],
    ['.claude/CLAUDE.md'],
    ['.claude/rules/style.md'],
    ['.claude/commands/x.md'],
    ['.claude/skills/x/SKILL.md'],
    ['.claude/agents/x.md'],
    ['.claude/output-styles/x.md'],
  ])('%s as a link out is found', (rel) => {
    const { tree, secret, mayRead } = world();
    fs.mkdirSync(path.dirname(path.join(tree, rel)), { recursive: true });
    fs.symlinkSync(secret, path.join(tree, rel));
    expect(startupLinkOut(tree, mayRead)).toEqual({ file: path.join(tree, rel), real: secret });
  });

  it('.claude itself, or a folder of it, as a link out; a linked folder inside the tree is looked into', () => {
    const { tree, home, secret, mayRead } = world();
    fs.symlinkSync(home, path.join(tree, '.claude'));
    expect(startupLinkOut(tree, mayRead)?.file).toBe(path.join(tree, '.claude'));
    fs.rmSync(path.join(tree, '.claude'));
    fs.mkdirSync(path.join(tree, 'shared', 'x'), { recursive: true });
    fs.mkdirSync(path.join(tree, '.claude'));
    fs.symlinkSync('../shared', path.join(tree, '.claude', 'skills'));
    expect(startupLinkOut(tree, mayRead)).toBeNull();
    fs.symlinkSync(secret, path.join(tree, 'shared', 'x', 'SKILL.md'));
    expect(startupLinkOut(tree, mayRead)?.real).toBe(secret);
  });

  it('nothing to find in a tree without links, or with links inside it only', () => {
    const { tree, mayRead } = world();
    expect(startupLinkOut(tree, mayRead)).toBeNull();
    fs.mkdirSync(path.join(tree, '.claude', 'commands'), { recursive: true });
    fs.symlinkSync('../../AGENTS.md', path.join(tree, '.claude', 'commands', 'agents.md'));
    fs.symlinkSync('AGENTS.md', path.join(tree, 'CLAUDE.md'));
    expect(startupLinkOut(tree, mayRead)).toBeNull();
  });
});

describe('foreignMemoryAbove: the memory files of the folders above a run', () => {
  it("finds one that belongs to another user, a link or a file, in any folder above; the person's and root's are theirs", () => {
    const top = mk('agentbox-memory-above-');
    const tree = path.join(top, 'a', 'b', 'repo');
    fs.mkdirSync(tree, { recursive: true });
    const me = process.getuid?.() ?? 0;
    fs.writeFileSync(path.join(top, 'a', 'CLAUDE.md'), 'mine\n');
    expect(foreignMemoryAbove(tree, me)).toBeNull();
    // Files here are the test's: as another uid they read as someone else's.
    expect(foreignMemoryAbove(tree, me + 4242)).toEqual(
      me === 0 ? null : { file: path.join(top, 'a', 'CLAUDE.md'), owner: me },
    );
    // (the tree's own memory files are startupLinkOut's, not this one's)
    fs.writeFileSync(path.join(tree, 'CLAUDE.md'), 'the repository\n');
    if (me !== 0) return;
    const planted = path.join(top, 'a', 'b', 'CLAUDE.local.md');
    fs.symlinkSync('/etc/hostname', planted);
    fs.lchownSync(planted, 65534, 65534);
    expect(foreignMemoryAbove(tree, me)).toEqual({ file: planted, owner: 65534 });
    fs.rmSync(planted);
    fs.writeFileSync(planted, 'a stranger says\n');
    fs.chownSync(planted, 65534, 65534);
    expect(foreignMemoryAbove(tree, me)).toEqual({ file: planted, owner: 65534 });
  });
});

describe('judgeToolUse: a tool that loads a CLAUDE.md link out is refused (sandboxed runs)', () => {
  const { tree, secret } = world();
  const ledger = path.join(tree, '.agents');
  const runDir = path.join(ledger, 'runs', '26-11-29_1400__fix-x__a1b2c3');
  fs.mkdirSync(runDir, { recursive: true });
  fs.symlinkSync(secret, path.join(tree, 'sub', 'CLAUDE.md'));
  const reads = { denyRead: [path.dirname(secret)], allowRead: [tree] };
  const fix: AirlockScope = { type: 'fix', repoRoot: tree, ledgerDir: ledger, runDir, worktree: tree, reads };
  const f = path.join(tree, 'sub', 'deeper', 'f.txt');

  it.each([
    ['Read', { file_path: f }],
    ['Edit', { file_path: f, old_string: 'a', new_string: 'b' }],
    ['Write', { file_path: f, content: 'x' }],
    ['MultiEdit', { file_path: f, edits: [] }],
    ['NotebookEdit', { notebook_path: path.join(tree, 'sub', 'n.ipynb') }],
    ['Read (relative)', { file_path: 'sub/deeper/f.txt' }],
  ])('%s', (tool, input) => {
    const verdict = judgeToolUse(fix, tool.split(' ')[0]!, input, tree);
    expect(verdict).toMatchObject({ allow: false, rule: 'memory-link' });
    expect(!verdict.allow && verdict.reason).toContain(
      `${path.join(tree, 'sub', 'CLAUDE.md')} is a link to ${secret}`,
    );
  });

  it('Grep and Glob load nothing; a file elsewhere in the tree is fine; without a read fence nothing is checked', () => {
    expect(judgeToolUse(fix, 'Grep', { pattern: 'x', path: path.join(tree, 'sub') }, tree).allow).toBe(true);
    expect(judgeToolUse(fix, 'Read', { file_path: path.join(tree, 'AGENTS.md') }, tree).allow).toBe(true);
    const { reads: _, ...unfenced } = fix;
    expect(judgeToolUse(unfenced, 'Read', { file_path: f }, tree).allow).toBe(true);
  });
});
