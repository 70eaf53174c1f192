import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AGENT_RUN_DIR,
  collectArtifacts,
  fileArtifacts,
  MAX_ARTIFACT_BYTES,
  MAX_ARTIFACT_FILES,
} from '../../src/run/end/artifacts.js';
import { tempDir } from '../helpers/git-repo.js';

/**
 * What a fix run's end files of the agent's artifact folder (src/run/end/artifacts.ts): regular
 * files, never through a link, within bounds; anything else skipped and said. The agent writes that
 * folder: a FIFO, a socket or a broken link there made the copy throw, and the run could not be
 * recorded at all.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function layout() {
  const root = tempDir('agentbox-artifacts-');
  dirs.push(root);
  const worktree = path.join(root, 'wt');
  const runDir = path.join(root, 'run');
  const from = path.join(worktree, AGENT_RUN_DIR);
  fs.mkdirSync(path.join(from, 'raw'), { recursive: true });
  fs.mkdirSync(runDir);
  const secret = path.join(root, 'secret.txt');
  fs.writeFileSync(secret, 'TOP-SECRET\n');
  return { root, worktree, runDir, from, secret };
}

/** A unix socket file at `file`, listening until the server is closed (which removes it). */
async function socketAt(file: string): Promise<net.Server> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(file, resolve));
  return server;
}

describe('collectArtifacts', () => {
  it('copies regular files, nested ones too, and skips a FIFO, a socket, links (broken, to a secret, to a folder) with why', async () => {
    const { worktree, runDir, from, secret, root } = layout();
    fs.writeFileSync(path.join(from, 'notes.md'), '# notes\n');
    fs.writeFileSync(path.join(from, 'raw', 'out.txt'), 'evidence\n');
    execFileSync('mkfifo', [path.join(from, 'pipe')]);
    const socket = await socketAt(path.join(from, 'raw', 'listen.sock'));
    fs.symlinkSync('/nonexistent/target', path.join(from, 'broken'));
    fs.symlinkSync(secret, path.join(from, 'key'));
    fs.symlinkSync(root, path.join(from, 'home'));
    const { files, skipped } = collectArtifacts(worktree, runDir);
    await new Promise<void>((resolve) => socket.close(() => resolve()));
    expect(files.sort()).toEqual(['artifacts/notes.md', 'artifacts/raw/out.txt']);
    expect(fs.readFileSync(path.join(runDir, 'artifacts', 'raw', 'out.txt'), 'utf8')).toBe('evidence\n');
    const why = Object.fromEntries(skipped.map((s) => [s.path, s.why]));
    expect(why).toMatchObject({
      pipe: 'a FIFO, not a file',
      broken: 'a link, not a file',
      key: 'a link, not a file',
      home: 'a link, not a file',
    });
    expect(why['raw/listen.sock']).toBe('a socket, not a file');
    // Nothing of what a link points at reached the run folder.
    const copied = fs.readdirSync(path.join(runDir, 'artifacts'), { recursive: true }) as string[];
    expect(copied.sort()).toEqual(['notes.md', 'raw', 'raw/out.txt']);
    for (const f of copied)
      expect(fs.lstatSync(path.join(runDir, 'artifacts', f)).isSymbolicLink()).toBe(false);
  });

  it('the folder itself as a link (to the home, say) is not followed', () => {
    const { worktree, runDir, from, root } = layout();
    fs.rmSync(from, { recursive: true });
    fs.symlinkSync(root, from);
    expect(collectArtifacts(worktree, runDir)).toEqual({
      files: [],
      skipped: [{ path: AGENT_RUN_DIR, why: 'a link, not a folder' }],
    });
    expect(fs.existsSync(path.join(runDir, 'artifacts'))).toBe(false);
  });

  it('a sparse file larger than the bound is skipped: it took no room in the worktree and would here', () => {
    const { worktree, runDir, from } = layout();
    fs.writeFileSync(path.join(from, 'small.txt'), 'x');
    const big = path.join(from, 'big.bin');
    fs.closeSync(fs.openSync(big, 'w'));
    fs.truncateSync(big, MAX_ARTIFACT_BYTES + 1);
    const { files, skipped } = collectArtifacts(worktree, runDir);
    expect(files).toEqual(['artifacts/small.txt']);
    expect(skipped).toEqual([{ path: 'big.bin', why: `past ${MAX_ARTIFACT_BYTES} bytes in all` }]);
  });

  it(`at most ${MAX_ARTIFACT_FILES} files; the rest are skipped and counted in the log`, () => {
    const { worktree, runDir, from } = layout();
    for (let i = 0; i < MAX_ARTIFACT_FILES + 30; i++) fs.writeFileSync(path.join(from, `f${i}.txt`), `${i}`);
    const files = fileArtifacts(worktree, runDir);
    expect(files).toHaveLength(MAX_ARTIFACT_FILES);
    const events = fs
      .readFileSync(path.join(runDir, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(
      events.slice(0, 20).every((e) => e.event === 'artifact_skipped' && /past 500 files/.test(e.why)),
    ).toBe(true);
    expect(events.at(-1)).toMatchObject({ event: 'artifact_skipped', more: 10 });
  });

  it('no artifact folder, or a read-only run: nothing, and nothing logged', () => {
    const { worktree, runDir, from } = layout();
    fs.rmSync(from, { recursive: true });
    expect(fileArtifacts(worktree, runDir)).toEqual([]);
    expect(fileArtifacts(null, runDir)).toEqual([]);
    expect(fs.existsSync(path.join(runDir, 'events.jsonl'))).toBe(false);
  });
});
