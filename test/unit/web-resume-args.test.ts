import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from '../../src/cli/run.js';
import { memoryIo } from '../../src/context.js';
import { addWorktree, headSha } from '../../src/git/worktree.js';
import { readRun, updateState } from '../../src/ledger/index.js';
import { resumeAction, resumeArgs } from '../../src/web/resume.js';
import { GIT_ENV, tempDir } from '../helpers/git-repo.js';
import { create, ledgerRepo } from './fixtures/ledger.js';

/**
 * The page's Resume starts `agentbox resume` with the person's instructions: they arrive as the
 * instructions, whatever they begin with — never as one of resume's options. The CLI's own parser,
 * in-process, on a real ledger: a stopped run whose envelope today's configuration would change
 * (the fixture's) must be refused with CONFIG_CHANGED, as the page cannot `--force` it.
 */
describe('POST /api/runs/<run>/resume: the instructions are never options', () => {
  it.each(['--force', '--force fix the test', '--help', '-x add a test', '--json'])(
    'instructions %j: the run is refused as the page would have it (CONFIG_CHANGED), nothing else',
    async (instructions) => {
      const { repo, ledger } = ledgerRepo();
      const stopped = await create(ledger, 'add x', '2026-03-01T10:00:00Z', { type: 'fix' });
      // Its own worktree, on its own branch (a run that names another is refused before this check).
      const wt = path.join(tempDir('agentbox-wt-'), stopped.name);
      await addWorktree(repo.dir, {
        path: wt,
        branch: `agentbox/${stopped.name}`,
        base: (await headSha(repo.dir))!,
      });
      await updateState(ledger, stopped.name, {
        status: 'ABORTED',
        session_id: 's-1',
        worktree_path: fs.realpathSync(wt),
      });
      const home = tempDir('agentbox-home-');
      fs.mkdirSync(path.join(home, '.claude', 'projects', 'p'), { recursive: true });
      fs.writeFileSync(path.join(home, '.claude', 'projects', 'p', 's-1.jsonl'), '{}\n');
      const io = memoryIo();
      const env = { ...GIT_ENV, PATH: process.env.PATH, HOME: home };
      const code = await run(resumeArgs(stopped.id, instructions), { cwd: repo.dir, env, io });
      expect(io.stderr).toMatch(/the envelope of .* changed since it started/);
      expect(io.stdout).not.toMatch(/Usage:/);
      expect(code).not.toBe(0);
      expect(readRun(ledger, stopped.name).state?.status).toBe('ABORTED');
    },
  );
});

describe('POST /api/runs/<run>/resume: a run resume would refuse is a 409, and nothing is started', () => {
  it.each(['REVIEW', 'DONE', 'MERGED'] as const)(
    '%s (it answered 202 resumed: true, then failed unseen)',
    async (status) => {
      const { repo, ledger } = ledgerRepo();
      const made = await create(ledger, 'add x', '2026-03-01T10:00:00Z', { type: 'fix' });
      await updateState(ledger, made.name, { status });
      const error = await resumeAction({ root: repo.dir, ledger, env: {} }, made.id, {}).catch(
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ status: 409 });
      expect((error as Error).message).toContain(
        `is ${status}; only CRASHED, ABORTED or STALLED runs can be resumed`,
      );
      expect(fs.existsSync(path.join(ledger.runsDir, made.name, 'raw', 'agentbox.log'))).toBe(false);
    },
  );
});
