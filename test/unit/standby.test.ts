import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startupFingerprint } from '../../src/run/standby/fingerprint.js';
import { type Held, keep, letGoOfStandby, take } from '../../src/run/standby/store.js';
import { gitRepo, type TestRepo, tempDir } from '../helpers/git-repo.js';

/** A standby that records what became of it. */
function held(run: string, wanted = () => true): Held & { readonly gone: string[] } {
  const unwanted = () => (wanted() ? null : 'its run is no longer waiting for review');
  const gone: string[] = [];
  return {
    root: '/repo',
    run,
    gone,
    unwanted,
    async letGo(why) {
      gone.push(why);
    },
  };
}

describe('the standby store: one kept, taken by its run only, let go when it is no longer wanted', () => {
  afterEach(() => letGoOfStandby('test end'));

  it('is taken by its own run once; another run finds none', async () => {
    const a = held('run-a');
    await keep(a);
    expect(take('/repo', 'run-b')).toBeNull();
    expect(take('/other', 'run-a')).toBeNull();
    expect(take('/repo', 'run-a')).toBe(a);
    expect(take('/repo', 'run-a')).toBeNull();
    expect(a.gone).toEqual([]);
  });

  it('a new one lets the last go; the server stopping lets go of the one kept', async () => {
    const a = held('run-a');
    const b = held('run-b');
    await keep(a);
    await keep(b);
    expect(a.gone).toEqual(['another run’s standby took its place']);
    await letGoOfStandby('the resident agentbox stopped');
    expect(b.gone).toEqual(['the resident agentbox stopped']);
    expect(take('/repo', 'run-b')).toBeNull();
  });

  it('is let go once unused for its time, and once no longer wanted; a taken one never', async () => {
    const a = held('run-a');
    await keep(a, { waitMs: 30 });
    await new Promise((r) => setTimeout(r, 80));
    expect(a.gone).toEqual(['unused for 30 ms']);
    let wanted = true;
    const b = held('run-b', () => wanted);
    await keep(b, { checkMs: 10 });
    await new Promise((r) => setTimeout(r, 40));
    expect(b.gone).toEqual([]);
    wanted = false;
    await new Promise((r) => setTimeout(r, 40));
    expect(b.gone).toEqual(['its run is no longer waiting for review']);
    const c = held('run-c', () => false);
    await keep(c, { waitMs: 20, checkMs: 5 });
    expect(take('/repo', 'run-c')).toBe(c);
    await new Promise((r) => setTimeout(r, 50));
    expect(c.gone).toEqual([]);
  });
});

describe('the fingerprint of what claude read at its start', () => {
  let repo: TestRepo;
  let config: string;
  const session = '3f0c1b52-6a0e-4a43-9c2e-1d2f3a4b5c6d';
  const transcript = () => path.join(config, 'projects', 'p', `${session}.jsonl`);
  const print = () =>
    startupFingerprint({
      launchDir: path.join(repo.dir, 'sub'),
      env: { ...process.env } as Record<string, string>,
      configDir: config,
      sessionId: session,
    });
  afterEach(() => {
    repo?.cleanup();
    fs.rmSync(config, { recursive: true, force: true });
  });

  it('changes with a message in the session, CLAUDE.md here or above, the settings, the git status; not with claude’s own lines', async () => {
    repo = gitRepo({ files: { 'a.txt': 'a\n', 'sub/s.txt': 's\n' } });
    config = tempDir('agentbox-config-');
    fs.mkdirSync(path.dirname(transcript()), { recursive: true });
    const line = (entry: object) => fs.appendFileSync(transcript(), `${JSON.stringify(entry)}\n`);
    line({ type: 'user', uuid: 'u1', message: { role: 'user', content: 'hi' } });
    line({ type: 'assistant', uuid: 'a1', message: { role: 'assistant', content: 'hello' } });
    const first = await print();
    expect(await print()).toBe(first);
    // A claude resuming the session writes lines of its own as it starts: not a change.
    line({ type: 'tools-used', tools: ['Bash'], sessionId: session });
    expect(await print()).toBe(first);
    // A turn sent by another claude is.
    line({ type: 'user', uuid: 'u2', message: { role: 'user', content: 'more' } });
    const turned = await print();
    expect(turned).not.toBe(first);
    const changes: [string, () => void][] = [
      ['CLAUDE.md above', () => fs.writeFileSync(path.join(repo.dir, 'CLAUDE.md'), 'x')],
      ['a setting', () => fs.writeFileSync(path.join(config, 'settings.json'), '{}')],
      ['a skill', () => fs.mkdirSync(path.join(repo.dir, 'sub', '.claude', 'skills'), { recursive: true })],
      ['an edit', () => fs.writeFileSync(path.join(repo.dir, 'a.txt'), 'b\n')],
      ['a new file', () => fs.writeFileSync(path.join(repo.dir, 'b.txt'), 'b\n')],
    ];
    let before = turned;
    for (const [what, change] of changes) {
      change();
      const now = await print();
      expect(now, what).not.toBe(before);
      before = now;
    }
  });
});
