import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { asText, mentionPaths } from '../../src/claude/mentions.js';
import { tempDir } from '../helpers/git-repo.js';

const J = '\u2060';
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** A repository the run may read, a home it may not, a secret in the home. */
function world() {
  const repo = fs.realpathSync(tempDir('agentbox-mention-repo-'));
  const home = fs.realpathSync(tempDir('agentbox-mention-home-'));
  dirs.push(repo, home);
  fs.writeFileSync(path.join(home, 'secret.txt'), 'SECRET\n');
  fs.mkdirSync(path.join(repo, 'src'));
  fs.writeFileSync(path.join(repo, 'src', 'app.ts'), 'x\n');
  const where = { cwd: repo, home, mayRead: (real: string) => real.startsWith(`${repo}/`) };
  return { repo, home, secret: path.join(home, 'secret.txt'), where };
}

describe('asText: a prompt whose mention of a file the run may not read attaches nothing', () => {
  const { secret, where } = world();

  // The spellings measured with Claude Code 2.1.330 (`claude -p`): each of these attached the file.
  it.each([
    ['at the start', `@${secret}`, `${J}@${secret}`],
    ['after a space', `look at @${secret}`, `look at ${J}@${secret}`],
    ['quoted', `look at @"${secret}"`, `look at ${J}@"${secret}"`],
    ['the home', 'see @~/secret.txt', `see ${J}@~/secret.txt`],
    ['a line of it', `see @${secret}#L1-2`, `see ${J}@${secret}#L1-2`],
    ['at a sentence’s end', `see @${secret}.`, `see ${J}@${secret}.`],
    ['after a newline', `a\n@${secret}`, `a\n${J}@${secret}`],
    ['after a tab', `a\t@${secret}`, `a\t${J}@${secret}`],
    ['after a no-break space', `a\u00a0@${secret}`, `a\u00a0${J}@${secret}`],
    ['after an ideographic space', `a\u3000@${secret}`, `a\u3000${J}@${secret}`],
  ])('%s', (_, text, expected) => {
    const out = asText(text, where);
    expect(out.text).toBe(expected);
    expect(out.kept).toHaveLength(1);
  });

  it.each([
    ['a file the run may read', 'look at @src/app.ts'],
    ['nothing that exists', 'a @property decorator, a @@ -1 +1 @@ hunk, @nobody'],
    ['no mention at all', `mail a@b.com, \`@${secret}\`, (@${secret})`],
  ])('%s stays as written', (_, text) => {
    expect(asText(text, where)).toEqual({ text, kept: [] });
  });

  it('reads a mention as Claude Code could: quotes, ~, a line suffix, a last stop', () => {
    expect(mentionPaths('"~/a b.txt"', '/r', '/h')).toEqual(['/h/a b.txt']);
    expect(mentionPaths('x.ts#L3', '/r', '/h')).toEqual(['/r/x.ts#L3', '/r/x.ts']);
    expect(mentionPaths('../y).', '/r/s', undefined)).toEqual(['/r/y).', '/r/y']);
  });
});
