import fs from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { gitRepo, tempDir } from '../helpers/git-repo.js';

// The test helpers remove what they make (test/helpers/cleanup.ts): a test's own folders when it
// ends, folders made outside a test when the file is done. The tests below run in order.
describe('test folders remove themselves', () => {
  let fileLevel = '';
  let made: string[] = [];
  beforeAll(() => {
    fileLevel = tempDir();
  });

  it('a test makes a folder and a repository', () => {
    made = [tempDir(), gitRepo().dir];
    for (const dir of made) expect(fs.existsSync(dir)).toBe(true);
  });

  it('they are gone once that test ended; the beforeAll folder is still there', () => {
    expect(made).toHaveLength(2);
    for (const dir of made) expect(fs.existsSync(dir), dir).toBe(false);
    expect(fs.existsSync(fileLevel)).toBe(true);
  });

  it('the test repository never runs gc or maintenance in the background', () => {
    const repo = gitRepo();
    expect(repo.git('config', 'gc.auto').trim()).toBe('0');
    expect(repo.git('config', 'maintenance.auto').trim()).toBe('false');
  });
});
