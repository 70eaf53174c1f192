import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRun, ensureLedger, openLedger, updateState } from '../../src/ledger/index.js';
import { AGENTBOX_BIN, runAgentbox } from '../helpers/bin.js';
import { gitRepo, tempDir } from '../helpers/git-repo.js';
import { ENVELOPE } from '../unit/fixtures/ledger.js';

/*
 * src/cli/main.ts, the one place that meets the process: a reader that goes away before agentbox
 * has printed (`agentbox status --all | head`). The built bin, as a shell runs it, with its
 * stdout's reading end closed before it writes a byte.
 */

interface Ended {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

/** `agentbox <args>` with nobody reading its output; how it ended. */
function withReaderGone(args: string[], cwd: string): Promise<Ended> {
  const home = tempDir('agentbox-home-');
  const env = { PATH: process.env.PATH ?? '', HOME: home, CLAUDE_CONFIG_DIR: path.join(home, '.claude') };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [AGENTBOX_BIN, ...args], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`agentbox ${args.join(' ')} did not end with its reader gone:\n${stderr}`));
    }, 30_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
}

async function repoWithRuns(count: number): Promise<string> {
  const repo = gitRepo();
  ensureLedger(repo.dir);
  const ledger = openLedger(repo.dir);
  for (let i = 0; i < count; i++) {
    const run = await createRun(ledger, {
      type: 'scout',
      task: `question number ${i} ${'and some words '.repeat(8)}`,
      envelope: ENVELOPE,
      repoShaStart: null,
      now: new Date(Date.UTC(2025, 0, 1, 0, i)),
    });
    await updateState(ledger, run, { status: 'DONE' });
  }
  return repo.dir;
}

describe('a reader that went away', () => {
  it.each([
    ['status --all', ['status', '--all']],
    ['status --json --all', ['status', '--json', '--all']],
    ['show', ['show', 'latest']],
    ['--help', ['--help']],
  ])('%s: ends with its own code, no stack trace, nothing written to the repository', async (_, args) => {
    const dir = await repoWithRuns(30);
    const before = fs.readdirSync(path.join(dir, '.agents', 'runs')).sort();
    const ended = await withReaderGone(args, dir);
    expect(ended.stderr).toBe('');
    expect(ended).toMatchObject({ code: 0, signal: null });
    expect(fs.readdirSync(path.join(dir, '.agents', 'runs')).sort()).toEqual(before);
  });

  it('the web UI stops cleanly, as when its terminal closes, instead of serving nobody', async () => {
    const dir = await repoWithRuns(1);
    const ended = await withReaderGone(['ui', '--no-open', '--port', '0'], dir);
    expect(ended.stderr).not.toMatch(/Error|at .*:\d+:\d+/);
    expect(ended).toMatchObject({ code: 0, signal: null });
  });
});

describe('module loading', () => {
  it.each([
    ['show', ['show', 'latest']],
    ['show --json', ['show', 'latest', '--json']],
  ])(
    '%s reads meta.yaml with the YAML parser the bundle carries, not a second copy from node_modules',
    async (_, args) => {
      const dir = await repoWithRuns(1);
      const home = tempDir('agentbox-home-');
      // Preloaded into the bin's process: at its exit, every module file node loaded that is yaml's own.
      const spy = path.join(home, 'spy.cjs');
      fs.writeFileSync(
        spy,
        `process.once('exit', () => process.stderr.write('yaml files: ' + Object.keys(require.cache).filter((f) => f.includes('/node_modules/yaml/')).length + '\\n'));\n`,
      );
      const env = {
        PATH: process.env.PATH ?? '',
        HOME: home,
        CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
        NODE_OPTIONS: `--require ${spy}`,
      };
      const { code, stderr } = await runAgentbox(args, { cwd: dir, env });
      expect(code, stderr).toBe(0);
      expect(stderr).toContain('yaml files: 0');
    },
  );
});

describe('a working folder that was removed', () => {
  it.each([
    ['status', ['status']],
    ['scout (the resident client hands it back)', ['scout', 'what is here?']],
  ])('%s: one line saying so and what to do, exit 1, no stack trace', async (_, args) => {
    const dir = tempDir('agentbox-gone-');
    const child = spawn(
      'sh',
      ['-c', 'cd "$0" && rmdir "$0" && exec "$@"', dir, process.execPath, AGENTBOX_BIN, ...args],
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, AGENTBOX_RESIDENT: 'manual' } },
    );
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code).toBe(1);
    expect(stderr).toBe(
      'agentbox: the current folder no longer exists (it was removed or moved away)\n  → cd to a folder that exists, e.g. your repository, and run the command again\n',
    );
  });
});
