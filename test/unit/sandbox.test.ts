import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createPrivateGit } from '../../src/git/private.js';
import { bwrapFailure, probeSandbox, probeSandboxAsync } from '../../src/sandbox/available.js';
import { absentBefore, releaseLeftovers, removeEmpty } from '../../src/sandbox/leftovers.js';
import {
  createPrivateArea,
  privateBase,
  removeRunArea,
  sweepOrphanedSecrets,
} from '../../src/sandbox/private.js';
import { sandboxSettings } from '../../src/sandbox/settings.js';
import { GIT_ENV, gitRepo, tempDir } from '../helpers/git-repo.js';

const dirs: string[] = [];
const temp = (prefix: string) => {
  const dir = tempDir(prefix);
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('sandboxSettings', () => {
  it('fails closed, never retries outside, and passes the paths through', () => {
    expect(
      sandboxSettings({
        writable: ['/wt', '/priv/git'],
        denyRead: ['/home/u', '/repo/.agents'],
        allowRead: ['/home/u/.npm'],
        denyWrite: ['/repo/.git'],
        autoAllowBash: true,
        allowedDomains: ['127.0.0.1:4000'],
      }),
    ).toEqual({
      sandbox: {
        enabled: true,
        failIfUnavailable: true,
        autoAllowBashIfSandboxed: true,
        allowUnsandboxedCommands: false,
        filesystem: {
          allowWrite: ['/wt', '/priv/git'],
          denyWrite: ['/repo/.git'],
          denyRead: ['/home/u', '/repo/.agents'],
          allowRead: ['/home/u/.npm'],
        },
        network: { allowedDomains: ['127.0.0.1:4000'] },
      },
    });
  });
});

describe('probeSandbox', () => {
  it('works on this machine (bubblewrap and socat are installed by .ci/run)', () => {
    expect(probeSandbox({ PATH: process.env.PATH }, 'linux')).toEqual({
      ok: true,
      detail: 'bubblewrap + socat',
    });
  });

  it('names what is missing and how to install it', () => {
    const empty = temp('agentbox-nopath-');
    expect(probeSandbox({ PATH: empty }, 'linux')).toEqual({
      ok: false,
      problem: 'bwrap and socat are not installed',
      fix: expect.stringContaining('apt-get install bubblewrap socat'),
    });
  });

  it('tries bubblewrap once for the checks of one command: a success is kept, a failure asked again', () => {
    const tries = (exit: number) => {
      const bin = temp('agentbox-fakebwrap-');
      const log = path.join(bin, 'tries');
      fs.writeFileSync(path.join(bin, 'bwrap'), `#!/bin/sh\necho x >> '${log}'\nexit ${exit}\n`, {
        mode: 0o755,
      });
      fs.writeFileSync(path.join(bin, 'socat'), '#!/bin/sh\n', { mode: 0o755 });
      const env = { PATH: `${bin}:/usr/bin:/bin` };
      const answers = [probeSandbox(env, 'linux'), probeSandbox(env, 'linux')].map((p) => p.ok);
      return { answers, tries: fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).length };
    };
    expect(tries(0)).toEqual({ answers: [true, true], tries: 1 });
    expect(tries(1)).toEqual({ answers: [false, false], tries: 2 });
  });

  const USERNS = expect.stringContaining('allow unprivileged user namespaces');
  const GENERIC =
    'fix what bubblewrap says above (see it whole: bwrap --ro-bind / / --dev /dev --unshare-net --unshare-pid -- true), then run agentbox doctor again';
  it.each([
    [
      'bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.',
      USERNS,
    ],
    ['bwrap: setting up uid map: Permission denied\n', USERNS],
    ['bwrap: Creating new namespace failed: Operation not permitted', USERNS],
    ['bwrap: execvp true: Too many levels of symbolic links', GENERIC],
    ['bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted', GENERIC],
    [undefined, GENERIC],
  ])('bwrapFailure: the fix matches what bubblewrap said (%j)', (why, fix) => {
    const failure = bwrapFailure(1, why);
    expect(failure.fix).toEqual(fix);
    expect(failure.problem).toBe(`bubblewrap cannot create a sandbox here: ${why?.trim() ?? 'exit 1'}`);
  });

  it('says a platform without a sandbox has none', () => {
    expect(probeSandbox({ PATH: '' }, 'win32')).toMatchObject({
      ok: false,
      problem: 'Claude Code has no sandbox on win32',
    });
  });

  it('gives the same answers tried without holding the event loop (probeSandboxAsync)', async () => {
    expect(await probeSandboxAsync({ PATH: process.env.PATH }, 'linux')).toEqual(
      probeSandbox({ PATH: process.env.PATH }, 'linux'),
    );
    expect(await probeSandboxAsync({ PATH: temp('agentbox-nopath-') }, 'linux')).toMatchObject({
      ok: false,
      problem: 'bwrap and socat are not installed',
    });
    // A bubblewrap that cannot make its namespaces: its first line of complaint, both ways.
    const bin = temp('agentbox-fakebwrap-');
    fs.writeFileSync(
      path.join(bin, 'bwrap'),
      '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\necho more >&2\nexit 1\n',
      { mode: 0o755 },
    );
    fs.symlinkSync(
      execFileSync('sh', ['-c', 'command -v socat'], { encoding: 'utf8' }).trim(),
      path.join(bin, 'socat'),
    );
    const env = { PATH: `${bin}:/usr/bin:/bin` };
    const refused = {
      ok: false,
      problem: 'bubblewrap cannot create a sandbox here: bwrap: No permissions to create new namespace',
      fix: expect.stringContaining('unprivileged_userns_clone'),
    };
    expect(probeSandbox(env, 'linux')).toEqual(refused);
    expect(await probeSandboxAsync(env, 'linux')).toEqual(refused);
    // One that fails for another reason: its words, and no word of user namespaces.
    fs.writeFileSync(
      path.join(bin, 'bwrap'),
      '#!/bin/sh\necho "bwrap: execvp true: Too many levels of symbolic links" >&2\nexit 1\n',
    );
    const other = {
      ok: false,
      problem:
        'bubblewrap cannot create a sandbox here: bwrap: execvp true: Too many levels of symbolic links',
      fix: expect.not.stringContaining('namespaces'),
    };
    expect(probeSandbox(env, 'linux')).toEqual(other);
    expect(await probeSandboxAsync(env, 'linux')).toEqual(other);
  });
});

describe('the private area', () => {
  it('is closed to others, holds secrets 0600, and is gone after dispose (a second dispose is harmless)', () => {
    const base = path.join(temp('agentbox-priv-'), 'agentbox-0');
    const area = createPrivateArea(base, 'run-a');
    const file = area.writeSecret('settings.json', '{"token":"x"}');
    expect(fs.statSync(base).mode & 0o777).toBe(0o700);
    expect(fs.statSync(area.secretsDir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(path.dirname(area.secretsDir)).toBe(area.secretsRoot);
    let cleaned = 0;
    area.onDispose(() => cleaned++);
    area.dispose();
    area.dispose();
    expect(fs.existsSync(area.secretsDir)).toBe(false);
    expect(fs.existsSync(area.workDir)).toBe(false);
    expect(cleaned).toBe(1);
  });

  it('drops the secrets and sockets a crashed run of the same name left behind, keeps its work', () => {
    const base = path.join(temp('agentbox-priv-'), 'agentbox-0');
    const first = createPrivateArea(base, 'run-b');
    first.writeSecret('hook.json', '{}');
    fs.mkdirSync(path.join(first.sockDir, 'claude-0'));
    fs.writeFileSync(path.join(first.workDir, 'kept'), '');
    // Another area whose name begins with the run's (merge's check of its patch) is not the run's.
    const verify = createPrivateArea(base, 'run-b-verify');
    const second = createPrivateArea(base, 'run-b');
    expect(fs.existsSync(first.secretsDir)).toBe(false);
    expect(fs.readdirSync(second.secretsRoot).sort()).toEqual(
      [path.basename(second.secretsDir), path.basename(verify.secretsDir)].sort(),
    );
    // One socket folder of the run's, empty again (the one left behind was not kept beside it).
    expect(fs.readdirSync(path.join(base, 's')).sort()).toEqual(
      [path.basename(second.sockDir), path.basename(verify.sockDir)].sort(),
    );
    expect(fs.readdirSync(second.sockDir)).toEqual([]);
    expect(fs.existsSync(path.join(second.workDir, 'kept'))).toBe(true);
    // Another run's is its own.
    expect(createPrivateArea(base, 'run-c').sockDir).not.toBe(second.sockDir);
  });

  it('removes a run’s whole area by its name, and nothing for a name that is not one plain component', () => {
    const base = path.join(temp('agentbox-priv-'), 'agentbox-0');
    const area = createPrivateArea(base, 'run-d');
    for (const name of ['..', '.', '', 'run-d/..', '../agentbox-0', 'run-*']) removeRunArea(base, name);
    for (const dir of [area.secretsDir, area.workDir, area.sockDir]) expect(fs.existsSync(dir)).toBe(true);
    removeRunArea(base, 'run-d');
    for (const dir of [area.secretsDir, area.workDir, area.sockDir]) expect(fs.existsSync(dir)).toBe(false);
    expect(fs.readdirSync(base).sort()).toEqual(['s', 'secrets', 'work']);
  });

  it('sweeps the secrets (and sockets) whose process is gone: a server killed with its standby; a live one’s and an unowned one stay', () => {
    const base = path.join(temp('agentbox-priv-'), 'agentbox-0');
    const live = createPrivateArea(base, 'run-live');
    const dead = createPrivateArea(base, 'run-dead');
    const unowned = createPrivateArea(base, 'run-unowned');
    expect(fs.readFileSync(path.join(live.secretsDir, 'owner'), 'utf8')).toMatch(
      new RegExp(`^${process.pid} \\S+\n$`),
    );
    // A process that has ended (its pid and start time named, as a killed server leaves them).
    const gone = spawnSync(process.execPath, ['-e', '0']).pid!;
    fs.writeFileSync(path.join(dead.secretsDir, 'owner'), `${gone} 12345\n`);
    fs.rmSync(path.join(unowned.secretsDir, 'owner'));
    // The same pid with another start time is another process: also gone.
    const reused = createPrivateArea(base, 'run-reused');
    fs.writeFileSync(path.join(reused.secretsDir, 'owner'), `${process.pid} 1\n`);
    expect(sweepOrphanedSecrets(base).sort()).toEqual(
      [path.basename(dead.secretsDir), path.basename(reused.secretsDir)].sort(),
    );
    for (const dir of [dead.secretsDir, dead.sockDir, reused.secretsDir])
      expect(fs.existsSync(dir)).toBe(false);
    for (const dir of [live.secretsDir, live.sockDir, unowned.secretsDir, dead.workDir])
      expect(fs.existsSync(dir)).toBe(true);
    expect(sweepOrphanedSecrets(base)).toEqual([]);
  });
});

describe('the agent’s private git', () => {
  it('commits on the run branch in its own repository; the main repository’s refs and objects stay as they were', async () => {
    const repo = gitRepo({ files: { 'a.txt': 'a\n' } });
    dirs.push(repo.dir);
    const wt = path.join(temp('agentbox-wt-'), 'wt');
    repo.git('worktree', 'add', '-q', '-b', 'agentbox/run-c', wt);
    const gitDir = path.join(temp('agentbox-pgit-'), 'git');
    await createPrivateGit({ worktree: wt, gitDir, branch: 'agentbox/run-c' });
    const refsBefore = repo.git('for-each-ref');
    const objectsBefore = repo.git('count-objects', '-v');
    const env = { ...process.env, ...GIT_ENV, GIT_DIR: gitDir, GIT_WORK_TREE: wt };
    const git = (...args: string[]) => execFileSync('git', args, { cwd: wt, env, encoding: 'utf8' });
    expect(git('status', '--porcelain')).toBe('');
    fs.writeFileSync(path.join(wt, 'a.txt'), 'changed\n');
    git('add', 'a.txt');
    git('commit', '-qm', 'by the agent');
    expect(git('log', '--format=%s', '-1')).toBe('by the agent\n');
    expect(git('rev-list', '--count', 'HEAD').trim()).toBe('2');
    expect(git('rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe('agentbox/run-c');
    // The main branches are visible (read-only copies), so `git diff main` works.
    expect(git('diff', '--stat', 'main').trim()).toContain('a.txt');
    expect(repo.git('for-each-ref')).toBe(refsBefore);
    expect(repo.git('count-objects', '-v')).toBe(objectsBefore);
  });
});

describe('sandbox leftovers', () => {
  it('removes only what was absent before and is empty now', () => {
    const dir = temp('agentbox-left-');
    const candidates = ['a', 'b', 'c', 'd'].map((n) => path.join(dir, n));
    fs.mkdirSync(candidates[0]!);
    const absent = absentBefore(candidates);
    expect(absent).toEqual(candidates.slice(1));
    fs.mkdirSync(candidates[1]!);
    fs.writeFileSync(candidates[2]!, '');
    fs.mkdirSync(candidates[3]!);
    fs.writeFileSync(path.join(candidates[3]!, 'kept'), 'x');
    removeEmpty(absent);
    expect(candidates.map((c) => fs.existsSync(c))).toEqual([true, false, false, true]);
  });

  it('a run ending while another of the repository runs hands its leftovers over; the last one out removes them all', () => {
    const dir = temp('agentbox-left-');
    const file = path.join(dir, 'ledger', 'cache', 'sandbox-leftovers');
    const mine = [path.join(dir, 'glab-cli')];
    const theirs = [path.join(dir, '.cc-writes')];
    for (const p of [...mine, ...theirs]) fs.mkdirSync(p);
    let running = true;
    const share = { file, othersRunning: () => running };
    // The first attempt of a group ends: its sibling's sandbox still binds the mount point.
    releaseLeftovers(mine, share);
    expect(fs.existsSync(mine[0]!)).toBe(true);
    expect(fs.readFileSync(file, 'utf8')).toBe(`${mine[0]}\n`);
    running = false;
    releaseLeftovers(theirs, share);
    expect([...mine, ...theirs].map((p) => fs.existsSync(p))).toEqual([false, false]);
    expect(fs.existsSync(file)).toBe(false);
    // Without a share (no ledger to hand over to), a run removes its own at once.
    fs.mkdirSync(mine[0]!);
    releaseLeftovers(mine);
    expect(fs.existsSync(mine[0]!)).toBe(false);
  });
});

describe('privateBase', () => {
  it.each([
    [{ TMPDIR: '/var/tmp' }, '/var/tmp/agentbox-1000'],
    [{}, '/tmp/agentbox-1000'],
    // A path a permission rule cannot hold falls back to /tmp.
    [{ TMPDIR: '/tmp/my dir (1)' }, '/tmp/agentbox-1000'],
    [{ TMPDIR: 'relative' }, '/tmp/agentbox-1000'],
  ])('%o → %s', (env, expected) => {
    expect(privateBase(env, 1000)).toBe(expected);
  });
});
