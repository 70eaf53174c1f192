import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ledgerPaths } from '../../src/ledger/index.js';
import { agentboxStateDir } from '../../src/util/state-dir.js';
import { loadUiState, notPrivate, saveUiState, uiStateFile } from '../../src/web/secrets.js';
import { gitRepo, type TestRepo } from '../helpers/git-repo.js';

/** A token and port a cloned repository chose, as a committed `.agents/ui/state.json` would carry. */
const CHOSEN = { token: 'A'.repeat(32), session: 'B'.repeat(32), csrf: 'C'.repeat(32), port: 4321 };

describe('the web UI secrets live in the person state dir, never in the repository', () => {
  let repo: TestRepo;
  let home: string;
  let said: string[];
  let place: { env: Record<string, string>; root: string; ledger: ReturnType<typeof ledgerPaths> };
  const say = (line: string) => said.push(line);
  beforeEach(() => {
    repo = gitRepo();
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-ui-home-'));
    said = [];
    place = { env: { HOME: home }, root: repo.dir, ledger: ledgerPaths(repo.dir) };
  });
  afterEach(() => {
    repo.cleanup();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it.each([
    [{ HOME: '/h' }, '/h/.local/state/agentbox'],
    [{ HOME: '/h', XDG_STATE_HOME: '/x/state' }, '/x/state/agentbox'],
    // The specification ignores a relative XDG_STATE_HOME.
    [{ HOME: '/h', XDG_STATE_HOME: 'rel' }, '/h/.local/state/agentbox'],
  ])('the state dir of %o is %s', (env, dir) => {
    expect(agentboxStateDir(env)).toBe(dir);
  });

  it('one file per repository, by its canonical root (a symlinked path is the same), 0600 in a 0700 folder', () => {
    const first = loadUiState(place, say);
    const file = uiStateFile(place);
    expect(file.startsWith(path.join(home, '.local/state/agentbox/ui/'))).toBe(true);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    const link = path.join(home, 'link');
    fs.symlinkSync(repo.dir, link);
    expect(uiStateFile({ ...place, root: link })).toBe(file);
    expect(loadUiState(place, say)).toEqual(first);
    expect(said).toEqual([]);
    expect(fs.existsSync(path.join(repo.dir, '.agents', 'ui'))).toBe(false);
    const other = gitRepo();
    try {
      expect(uiStateFile({ ...place, root: other.dir })).not.toBe(file);
    } finally {
      other.cleanup();
    }
  });

  it('a committed .agents/ui/state.json (token and port chosen) is never used: removed, and said', () => {
    const legacy = path.join(repo.dir, '.agents', 'ui', 'state.json');
    fs.mkdirSync(path.dirname(legacy), { recursive: true });
    fs.writeFileSync(legacy, JSON.stringify(CHOSEN), { mode: 0o644 });
    const state = loadUiState(place, say);
    expect(state.token).not.toBe(CHOSEN.token);
    expect(state.session).not.toBe(CHOSEN.session);
    expect(state.port).toBeNull();
    expect(fs.existsSync(legacy)).toBe(false);
    expect(said.join('\n')).toContain(`removed ${legacy} without using it`);
  });

  it('the same secrets planted in the state dir with a wider mode, or as a link, are not used: replaced, and said', () => {
    const file = uiStateFile(place);
    for (const plant of [
      () => fs.writeFileSync(file, JSON.stringify(CHOSEN), { mode: 0o644 }),
      () => {
        const elsewhere = path.join(home, 'chosen.json');
        fs.writeFileSync(elsewhere, JSON.stringify(CHOSEN), { mode: 0o600 });
        fs.symlinkSync(elsewhere, file);
      },
      () => {
        fs.writeFileSync(file, JSON.stringify(CHOSEN), { mode: 0o600 });
        fs.chmodSync(path.dirname(file), 0o755);
      },
    ]) {
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      fs.rmSync(file, { force: true });
      plant();
      fs.chmodSync(file, fs.lstatSync(file).isSymbolicLink() ? 0o600 : fs.statSync(file).mode & 0o777);
      said = [];
      const state = loadUiState(place, say);
      expect(state.token).not.toBe(CHOSEN.token);
      expect(said.join('\n')).toMatch(
        /not using .*state\.json: (its mode is 0[67]\d\d|it is not a plain file)/,
      );
      expect(fs.lstatSync(file).isFile()).toBe(true);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
      expect(loadUiState(place, say)).toEqual(state);
    }
  });

  it.runIf(process.getuid?.() === 0)(
    'a file of another owner is not used; a folder of another owner is not written into',
    () => {
      const file = uiStateFile(place);
      saveUiState(place, { ...CHOSEN, port: null });
      fs.chownSync(file, 4242, 4242);
      const state = loadUiState(place, say);
      expect(state.token).not.toBe(CHOSEN.token);
      expect(said.join('\n')).toContain('it belongs to user 4242');
      fs.chownSync(path.dirname(file), 4242, 4242);
      expect(() => loadUiState(place, say)).toThrow(
        /cannot keep the web UI's secrets in .*: it belongs to user 4242/,
      );
    },
  );

  it('notPrivate names what is wrong (pure over a stat)', () => {
    const stat = (mode: number, uid: number, file = true) =>
      ({ mode, uid, isFile: () => file, isDirectory: () => !file }) as fs.Stats;
    expect(notPrivate(stat(0o100600, 7), 'file', 7)).toBeNull();
    expect(notPrivate(stat(0o100640, 7), 'file', 7)).toBe('its mode is 0640, not 0600');
    expect(notPrivate(stat(0o100600, 8), 'file', 7)).toBe('it belongs to user 8, not to you (7)');
    expect(notPrivate(stat(0o40700, 7, false), 'file', 7)).toBe('it is not a plain file');
    expect(notPrivate(stat(0o40755, 7, false), 'folder', 7)).toBe('its mode is 0755, not 0700');
  });
});
