import { afterAll, beforeAll, describe, it } from 'vitest';
import { type Project, project } from '../helpers/project.js';
import { playReadmeTour, TOUR_FILES } from '../helpers/readme-tour.js';

/**
 * The README's tour is true (issue 16): every command in its fenced block runs, in a temporary
 * repository with the scripted model, and prints what the README shows — run names, ids, commit
 * hashes, times, costs and paths aside. `TOUR_WRITE=<file>` writes what it printed (the repository
 * as /home/me/greet), to paste. test/e2e/pack.test.ts plays it again with the installed package.
 */
describe('the README tour', () => {
  let p: Project;
  beforeAll(async () => {
    p = await project({ files: TOUR_FILES });
  });
  afterAll(async () => p?.cleanup());

  it('every command runs and prints what the README shows', async () => {
    await playReadmeTour(p);
  }, 300_000);
});
