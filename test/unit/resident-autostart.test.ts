import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryIo } from '../../src/context.js';
import {
  clearStarting,
  DEFAULT_IDLE,
  idleSetting,
  residentSetting,
  serverEnv,
  startedNotice,
  startingMarker,
  startsResident,
} from '../../src/resident/autostart.js';
import { residentDir } from '../../src/resident/protocol.js';
import { stopResident } from '../../src/resident/stop.js';
import { tempDir } from '../helpers/git-repo.js';

/** The resident agentbox a command starts by itself (docs/resident.md): when, for how long, with what. */
describe('a resident agentbox started by itself', () => {
  const person = { in: true, err: true };

  it('in a person’s terminal by default; never in CI, a script, a run or Claude Code', () => {
    expect(startsResident({}, person)).toBe(true);
    expect(startsResident({ CI: 'true' }, person)).toBe(false);
    expect(startsResident({ CI: 'false' }, person)).toBe(true);
    expect(startsResident({}, { in: false, err: true })).toBe(false);
    expect(startsResident({}, { in: true, err: false })).toBe(false);
    for (const inside of [{ AGENTBOX_RUN: 'r1' }, { AGENTBOX_PROCESS_MARK: 'm' }, { CLAUDECODE: '1' }]) {
      expect(startsResident(inside, person)).toBe(false);
      expect(startsResident({ ...inside, AGENTBOX_RESIDENT: '1' }, person)).toBe(false);
    }
  });

  it('AGENTBOX_RESIDENT: 1 starts one anywhere else, manual and 0 never', () => {
    expect(startsResident({ AGENTBOX_RESIDENT: '1', CI: 'true' }, { in: false, err: false })).toBe(true);
    for (const value of ['manual', 'MANUAL', '0', ' 0', 'off', 'maybe'])
      expect(startsResident({ AGENTBOX_RESIDENT: value }, person)).toBe(false);
    expect(startsResident({ AGENTBOX_RESIDENT: '' }, person)).toBe(true);
  });

  it('reads AGENTBOX_RESIDENT one way for using a server and for starting one (" 0" used one, and started none)', () => {
    const cases: [string | undefined, string][] = [
      [undefined, 'auto'],
      ['', 'auto'],
      [' 0', 'off'],
      ['off', 'off'],
      ['FALSE', 'off'],
      ['no', 'off'],
      ['1', 'always'],
      ['On', 'always'],
      ['yes', 'always'],
      ['manual', 'manual'],
      ['sometimes', 'manual'],
    ];
    for (const [value, setting] of cases)
      expect(residentSetting(value === undefined ? {} : { AGENTBOX_RESIDENT: value })).toBe(setting);
  });

  it('stays 15 minutes unused unless AGENTBOX_RESIDENT_IDLE says otherwise (a duration a timer takes)', () => {
    expect(DEFAULT_IDLE).toBe('15m');
    expect(idleSetting({})).toBe('15m');
    expect(idleSetting({ AGENTBOX_RESIDENT_IDLE: ' 2h ' })).toBe('2h');
    for (const wrong of ['0s', 'soon', '-5m', '30d'])
      expect(idleSetting({ AGENTBOX_RESIDENT_IDLE: wrong })).toBe('15m');
  });

  it("keeps where things are of its starter's environment, none of its keys or tokens", () => {
    const env = serverEnv({
      PATH: '/usr/bin',
      HOME: '/home/p',
      XDG_STATE_HOME: '/s',
      LANG: 'C.UTF-8',
      AGENTBOX_LINEAGE: 'tree-1',
      ANTHROPIC_API_KEY: 'sk-ant-secret',
      GITHUB_TOKEN: 'ghp_secret',
      AWS_SECRET_ACCESS_KEY: 'aws',
      SSH_AUTH_SOCK: '/run/agent',
      AGENTBOX_CONFIG: '/home/p/cfg.yaml',
      NODE_OPTIONS: '--inspect=127.0.0.1:9229',
    });
    expect(env).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/p',
      XDG_STATE_HOME: '/s',
      LANG: 'C.UTF-8',
      AGENTBOX_LINEAGE: 'tree-1',
    });
  });

  it('says it started, for how long, and how to stop it or keep it off', () => {
    const notice = startedNotice(4321, '15m');
    expect(notice).toMatch(/started a resident agentbox \(pid 4321\)/);
    expect(notice).toMatch(/stops after 15m unused/);
    expect(notice).toMatch(/agentbox serve --stop/);
    expect(notice).toMatch(/AGENTBOX_RESIDENT=manual/);
    expect(notice).not.toMatch(/AGENTBOX_RESIDENT_IDLE/);
    // A setting it could not take is named (it fell back to 15m silently), its text made plain.
    const ignored = startedNotice(4321, '15m', { AGENTBOX_RESIDENT_IDLE: '1h30m\u001b]0;x\u0007' });
    expect(ignored).toContain('stops after 15m unused (AGENTBOX_RESIDENT_IDLE "1h30m?]0;x?" is no duration');
    expect(startedNotice(4321, '2h', { AGENTBOX_RESIDENT_IDLE: '2h' })).not.toMatch(/is no duration/);
  });
});

describe('a server that is starting', () => {
  it('its mark: taken down by its own server only; --stop drops one whose process is gone or is no agentbox serve, without waiting', async () => {
    const state = tempDir('agentbox-starting-');
    const dir = residentDir(path.join(state, 'agentbox'));
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const sock = (name: string) => path.join(dir, `${name}.sock`);
    // (a pid that was, and is no more; and a live one that is no server: this test's own)
    const dead = spawnSync('true').pid;
    fs.writeFileSync(startingMarker(sock('a')), `${dead}\n`);
    fs.writeFileSync(startingMarker(sock('b')), `${process.pid}\n`);
    fs.writeFileSync(startingMarker(sock('c')), 'not a pid\n');
    clearStarting(sock('b'), process.pid + 1);
    expect(fs.existsSync(startingMarker(sock('b')))).toBe(true);

    const io = memoryIo();
    expect(await stopResident({ cwd: state, env: { XDG_STATE_HOME: state }, io })).toBe(0);
    expect(io.stdout).toContain('no resident agentbox is running');
    expect(fs.readdirSync(dir)).toEqual([]);

    fs.writeFileSync(startingMarker(sock('d')), `${process.pid}\n`);
    clearStarting(sock('d'), process.pid);
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});
