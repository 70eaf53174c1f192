import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  addIgnoreBlock,
  IGNORE_MARK,
  type IgnoreRule,
  ignoreFilePath,
  LEDGER_IGNORES,
  removeIgnoreBlock,
  unignored,
} from '../../src/git/ignore.js';
import { gitRepo, type TestRepo, tempDir } from '../helpers/git-repo.js';

const PATTERNS = LEDGER_IGNORES.map((rule) => rule.pattern);
const BLOCK = `${IGNORE_MARK}\n.agents/\n.claude/commands/run_*/\n`;

describe('addIgnoreBlock', () => {
  it.each<[string, string | undefined, string]>([
    ['no file', undefined, BLOCK],
    ['an empty file', '', BLOCK],
    ['a file with a final newline', 'node_modules/\n', `node_modules/\n\n${BLOCK}`],
    ['a file without a final newline', 'node_modules/', `node_modules/\n${BLOCK}`],
    ['a file ending in a blank line', 'node_modules/\n\n', `node_modules/\n\n\n${BLOCK}`],
    ['a file of one newline', '\n', `\n\n${BLOCK}`],
  ])('appends the block to %s', (_name, text, expected) => {
    expect(addIgnoreBlock(text, PATTERNS)).toBe(expected);
  });

  it.each([
    ['at the end', `x\n\n${IGNORE_MARK}\n.agents/\n`, `x\n\n${IGNORE_MARK}\n.agents/\nagentbox.yaml\n`],
    [
      'before the user’s lines',
      `x\n\n${IGNORE_MARK}\n.agents/\n\ndist/\n`,
      `x\n\n${IGNORE_MARK}\n.agents/\nagentbox.yaml\n\ndist/\n`,
    ],
  ])('extends an existing block %s', (_name, text, expected) => {
    expect(addIgnoreBlock(text, ['agentbox.yaml'])).toBe(expected);
  });

  it.each([[undefined], [''], ['node_modules/\n']])('changes nothing without patterns: %j', (text) => {
    expect(addIgnoreBlock(text, [])).toBe(text ?? '');
  });
});

describe('removeIgnoreBlock', () => {
  it.each([
    ['an empty file', ''],
    ['one newline', '\n'],
    ['a final newline', 'node_modules/\n'],
    ['no final newline', 'node_modules/'],
    ['a trailing blank line', 'node_modules/\n\n'],
    ['comments and several lines', '# deps\nnode_modules/\n\n# build\ndist/\n'],
    ['CRLF lines', 'node_modules/\r\ndist/\r\n'],
  ])('gives back %s after addIgnoreBlock', (_name, original) => {
    expect(removeIgnoreBlock(addIgnoreBlock(original, PATTERNS), PATTERNS)).toEqual({
      text: original,
      removed: PATTERNS,
    });
  });

  it('keeps the user’s lines added after the block', () => {
    const added = `${addIgnoreBlock('node_modules/\n', PATTERNS)}\ndist/\n`;
    expect(removeIgnoreBlock(added, PATTERNS)).toEqual({
      text: 'node_modules/\n\ndist/\n',
      removed: PATTERNS,
    });
  });

  it('keeps a line the user put under the mark', () => {
    const text = `node_modules/\n\n${IGNORE_MARK}\n.agents/\nsecrets/\n.claude/commands/run_*/\n`;
    expect(removeIgnoreBlock(text, PATTERNS)).toEqual({
      text: 'node_modules/\n\nsecrets/\n',
      removed: PATTERNS,
    });
  });

  it('removes only the patterns it knows, and the mark', () => {
    const text = `${IGNORE_MARK}\n.agents/\nagentbox.yaml\n`;
    expect(removeIgnoreBlock(text, [...PATTERNS, 'agentbox.yaml'])).toEqual({
      text: '',
      removed: ['.agents/', 'agentbox.yaml'],
    });
  });

  it('leaves the same pattern outside the block alone', () => {
    const text = `.agents/\n\n${IGNORE_MARK}\n.agents/\n`;
    expect(removeIgnoreBlock(text, PATTERNS)).toEqual({ text: '.agents/\n', removed: ['.agents/'] });
  });

  it.each([[''], ['node_modules/\n'], ['.agents/\n']])('changes nothing without the mark: %j', (text) => {
    expect(removeIgnoreBlock(text, PATTERNS)).toEqual({ text, removed: [] });
  });
});

describe('ignoreFilePath', () => {
  it.each([
    ['shared', '/repo/.gitignore'],
    ['local', '/repo/.git/info/exclude'],
  ] as const)('%s → %s', (scope, expected) => {
    const repo = { root: '/repo', worktreeRoot: '/repo', commonDir: '/repo/.git' };
    expect(ignoreFilePath(repo, scope)).toBe(expected);
  });
});

describe('unignored', () => {
  let repo: TestRepo | undefined;
  let dir: string | undefined;
  afterEach(() => {
    repo = undefined;
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });
  const [ledger, commands] = LEDGER_IGNORES as [IgnoreRule, IgnoreRule];

  it.each<[string, Record<string, string>, string | undefined, IgnoreRule[]]>([
    ['nothing is ignored', {}, undefined, [ledger, commands]],
    ['.gitignore has .agents/', { '.gitignore': '.agents/\n' }, undefined, [commands]],
    [
      '.gitignore has both, in the user’s own words',
      { '.gitignore': '.agents\n.claude/commands/\n' },
      undefined,
      [],
    ],
    ['.gitignore has agentbox’s block', { '.gitignore': BLOCK }, undefined, []],
    [
      'a nested .gitignore covers commands',
      { '.claude/.gitignore': 'commands/run_*/\n' },
      undefined,
      [ledger],
    ],
    ['.git/info/exclude has .agents/', {}, '.agents/\n', [commands]],
    [
      'a later negation un-ignores it',
      { '.gitignore': '.agents/\n!.agents/\n' },
      undefined,
      [ledger, commands],
    ],
  ])('when %s', async (_name, files, exclude, expected) => {
    repo = gitRepo({ files });
    if (exclude !== undefined) repo.write('.git/info/exclude', exclude);
    expect(await unignored(repo.dir, LEDGER_IGNORES)).toEqual(expected);
  });

  it('asks about paths that do not exist yet (--no-index)', async () => {
    repo = gitRepo({ files: { '.gitignore': '.agents/\n' } });
    expect(repo.exists('.agents')).toBe(false);
    expect(await unignored(repo.dir, [ledger])).toEqual([]);
  });

  it('fails outside a git repository, naming the folder', async () => {
    dir = tempDir();
    await expect(unignored(dir, LEDGER_IGNORES)).rejects.toMatchObject({
      code: 'GIT_FAILED',
      message: `git check-ignore -q --no-index .agents/INDEX.md failed in ${dir}: fatal: not a git repository (or any of the parent directories): .git`,
    });
  });

  it('agrees with git once addIgnoreBlock wrote the missing rules', async () => {
    repo = gitRepo({ files: { '.gitignore': 'node_modules/' } });
    const missing = await unignored(repo.dir, LEDGER_IGNORES);
    repo.write(
      '.gitignore',
      addIgnoreBlock(
        repo.read('.gitignore'),
        missing.map((rule) => rule.pattern),
      ),
    );
    expect(await unignored(repo.dir, LEDGER_IGNORES)).toEqual([]);
    expect(fs.readFileSync(path.join(repo.dir, '.gitignore'), 'utf8')).toBe(`node_modules/\n${BLOCK}`);
  });
});
