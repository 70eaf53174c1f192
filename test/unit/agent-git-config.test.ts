import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentGitConfig, withoutCredentials } from '../../src/git/agent-config.js';
import { gitConfigs } from '../../src/sandbox/fence.js';
import { tempDir } from '../helpers/git-repo.js';

const git = (args: string[], cwd: string) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } });

/** A repository whose config holds what a clone, actions/checkout and a person leave in it. */
function hostileRepo(objectFormat = 'sha1'): string {
  const dir = tempDir('agentbox-agent-config-');
  git(['init', '-q', `--object-format=${objectFormat}`], dir);
  const set = (key: string, value: string) => git(['config', key, value], dir);
  set('remote.origin.url', 'https://x-access-token:TOKEN-in-url@github.com/o/r.git');
  set('remote.my.fork.url', 'git@github.com:me/r.git');
  set('http.https://github.com/.extraheader', 'AUTHORIZATION: basic TOKEN-in-header');
  set('credential.helper', 'store --file /root/TOKEN-store');
  set('core.fsmonitor', 'sh -c "touch /tmp/pwned"');
  set('core.hooksPath', '.husky');
  set('core.sshCommand', 'ssh -i /root/.ssh/TOKEN-key');
  set('url.https://TOKEN-insteadof@github.com/.insteadOf', 'https://github.com/');
  set('filter.lfs.smudge', 'git-lfs smudge -- %f');
  set('user.name', 'Ada "the" Lovelace\\');
  set('user.email', 'ada@example.com');
  set('core.autocrlf', 'input');
  set('include.path', '/root/TOKEN-include');
  return dir;
}

describe("a run's private git config: what it carries of the repository's", () => {
  it('keeps identity, checkout settings and remote URLs without their password; drops every token and command', () => {
    const repo = hostileRepo();
    const written = agentGitConfig(git(['config', '--local', '--list', '-z'], repo));
    expect(written).not.toContain('TOKEN');
    const file = path.join(repo, 'agent-config');
    fs.writeFileSync(file, written);
    // Read back by git itself: quoting and subsections survive.
    const back = git(['config', '--file', file, '--list'], repo).trim().split('\n').sort();
    expect(back).toEqual(
      [
        'core.autocrlf=input',
        'core.bare=false',
        'core.filemode=true',
        'core.logallrefupdates=true',
        'core.repositoryformatversion=0',
        'remote.my.fork.url=git@github.com:me/r.git',
        'remote.origin.url=https://github.com/o/r.git',
        'user.email=ada@example.com',
        'user.name=Ada "the" Lovelace\\',
      ].sort(),
    );
  });

  it("carries a SHA-256 repository's object format, so the borrowed objects read", () => {
    const repo = hostileRepo('sha256');
    const written = agentGitConfig(git(['config', '--local', '--list', '-z'], repo));
    const file = path.join(repo, 'agent-config');
    fs.writeFileSync(file, written);
    expect(git(['config', '--file', file, 'extensions.objectformat'], repo).trim()).toBe('sha256');
    expect(git(['config', '--file', file, 'core.repositoryformatversion'], repo).trim()).toBe('1');
  });

  it.each([
    ['https://user:pass@host/x.git', 'https://host/x.git'],
    ['HTTPS://tok@host:8443/x', 'HTTPS://host:8443/x'],
    ['ssh://git@host/x', 'ssh://host/x'],
    ['git@host:o/r.git', 'git@host:o/r.git'],
    ['/srv/mirror.git', '/srv/mirror.git'],
  ])('%s → %s', (url, shown) => {
    expect(withoutCredentials(url)).toBe(shown);
  });
});

describe('the git configs a run may not read', () => {
  it("are the repository's and every submodule's, nested ones too", () => {
    const gitDir = path.join(tempDir('agentbox-git-configs-'), '.git');
    const module = (rel: string) => {
      fs.mkdirSync(path.join(gitDir, rel), { recursive: true });
      fs.writeFileSync(path.join(gitDir, rel, 'HEAD'), 'ref: refs/heads/main\n');
      fs.writeFileSync(path.join(gitDir, rel, 'config'), '[core]\n');
    };
    module('.');
    module('modules/lib');
    module('modules/vendor/deep/name');
    module('modules/lib/modules/inner');
    expect(gitConfigs(gitDir).sort()).toEqual(
      [
        'config',
        'modules/lib/config',
        'modules/lib/modules/inner/config',
        'modules/vendor/deep/name/config',
      ].map((rel) => path.join(gitDir, rel)),
    );
  });
});
