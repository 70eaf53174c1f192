import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { githubWorkflow } from '../../src/engines/github.js';
import { gitlabJob } from '../../src/engines/gitlab.js';
import { installScript } from '../../src/engines/script.js';
import { checkSource, recordedSource, shellWord, sourcePath } from '../../src/engines/source.js';
import { AgentboxError } from '../../src/errors.js';
import { tempDir } from '../helpers/git-repo.js';

describe('--agentbox-from: what kind of source', () => {
  it.each([
    ['agentbox@0.1.0', 'npm'],
    ['agentbox', 'npm'],
    ['@team/agentbox@^0.1', 'npm'],
    ['agentbox@next', 'npm'],
    ['https://files.example/agentbox-0.1.0.tgz', 'tarball'],
    ['http://127.0.0.1:4873/agentbox/-/agentbox-0.1.0.tgz', 'tarball'],
    ['git+https://github.com/team/agentbox.git#0123abc', 'git'],
    ['git+ssh://git@github.com/team/agentbox.git#v0.1.0', 'git'],
    ['git+file:///srv/agentbox.git#main', 'git'],
    ['github:team/agentbox#0123abc', 'git'],
    ['/srv/agentbox-0.1.0.tgz', 'path'],
    ['/srv/agentbox/', 'path'],
    ['/home/me/src/agentbox', 'path'],
    ['file:///srv/agentbox-0.1.0.tgz', 'path'],
    ['file:/srv/agentbox-0.1.0.tgz', 'path'],
    ['FILE:///srv/agentbox-0.1.0.tar.gz', 'path'],
  ])('%s is %s', (value, kind) => {
    expect(checkSource(value)).toBe(kind);
  });

  it.each([
    ['/srv/agentbox-0.1.0.tgz', '/srv/agentbox-0.1.0.tgz'],
    ['file:///srv/agentbox-0.1.0.tgz', '/srv/agentbox-0.1.0.tgz'],
    ['file:/srv/agentbox/', '/srv/agentbox/'],
    ['https://files.example/agentbox-0.1.0.tgz', undefined],
    ['agentbox@0.1.0', undefined],
    ['./agentbox-0.1.0.tgz', undefined],
  ])('the path on disk of %s is %s', (value, file) => {
    expect(sourcePath(value)).toBe(file);
  });

  /** What npm would read otherwise (npm-package-arg) is in the comment: each is refused, saying why. */
  it.each([
    // npm: relative to the folder it runs in on the runner (the checkout, the pod's /work).
    ['./agentbox-0.1.0.tgz', 'a relative path', '/home/me/app/agentbox-0.1.0.tgz'],
    ['../agentbox', 'a relative path', '/home/me/agentbox'],
    ['agentbox-0.1.0.tgz', 'a relative path', '/home/me/app/agentbox-0.1.0.tgz'],
    ['file:agentbox-0.1.0.tgz', 'a relative path', '/home/me/app/agentbox-0.1.0.tgz'],
    ['file:../agentbox', 'a relative path', '/home/me/agentbox'],
    // npm: the home of whoever runs it.
    ['~/agentbox-0.1.0.tgz', 'a relative path', 'pass an absolute path'],
    ['/~/agentbox-0.1.0.tgz', 'home folder', 'pass one of'],
    ['file:///~/agentbox-0.1.0.tgz', 'home folder', 'pass one of'],
    // npm: the GitHub repository vendor/agentbox.tgz.
    ['vendor/agentbox-0.1.0.tgz', 'a relative path', '/home/me/app/vendor/agentbox-0.1.0.tgz'],
    ['team/agentbox#0123abc', 'as a GitHub repository', 'github:team/agentbox#0123abc'],
    // npm: the path /srv/agentbox-0.1.0.tgz, not the host srv.
    ['file://srv/agentbox-0.1.0.tgz', 'file://<name>/', 'three slashes'],
    ['file://localhost/srv/agentbox-0.1.0.tgz', 'file://<name>/', 'three slashes'],
    // npm: /a.tgz, and file:/../x relative.
    ['/srv/../agentbox-0.1.0.tgz', 'without "."', 'pass one of'],
    ['file:///../agentbox-0.1.0.tgz', 'without "."', 'pass one of'],
    ['//srv/agentbox-0.1.0.tgz', '"//"', 'pass one of'],
    ['/', 'the root folder', 'pass one of'],
    // npm: a folder named agentbox-0.1.0.tgz#x; %20 is not decoded.
    ['/srv/agentbox-0.1.0.tgz#x', 'letters, digits', 'pass one of'],
    ['file:///srv/agentbox%200.1.0.tgz', 'letters, digits', 'pass one of'],
    ["/srv/a'b.tgz", 'letters, digits', 'pass one of'],
    ['/srv/$HOME.tgz', 'letters, digits', 'pass one of'],
  ])('%s is refused: %s', (value, why, hint) => {
    let error: unknown;
    try {
      checkSource(value, '/home/me/app');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AgentboxError);
    expect((error as AgentboxError).message).toContain(`invalid --agentbox-from ${JSON.stringify(value)}`);
    expect((error as AgentboxError).message).toContain(why);
    expect((error as AgentboxError).hint).toContain(hint);
  });

  it('a recorded source is read back only when it is valid (a hand-edited file cannot smuggle one)', () => {
    expect(recordedSource('# Installs agentbox from: agentbox@0.1.0 (kept …)\nx: 1\n')).toBe(
      'agentbox@0.1.0',
    );
    expect(recordedSource('# Installs agentbox from: agentbox@$(id) (kept …)\n')).toBeUndefined();
    expect(recordedSource('name: mine\n')).toBeUndefined();
  });
});

/**
 * Values that pass the check but carry shell: the generated line, run by bash as the runner runs
 * it, hands each to npm as one argument and runs nothing. `npm` is a stand-in that writes out its
 * arguments (this test is about the shell, install-lines.test.ts about npm).
 */
describe('the install line runs no shell a source carries', () => {
  const dir = tempDir('agentbox-source-');
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'npm'), '#!/bin/bash\nprintf "%s\\n" "$@" >"$ARGS_FILE"\n', {
    mode: 0o755,
  });
  const pwned = path.join(dir, 'pwned');
  /** bash's field separator: a space without a space. */
  const IFS = '$' + '{IFS}';

  it.each([
    `https://x.example/a.tgz$(touch${IFS}${pwned})`,
    `https://x.example/\`touch${IFS}${pwned}\`.tgz`,
    `https://x.example/a.tgz';touch${IFS}${pwned};'`,
    `https://x.example/a.tgz;touch${IFS}${pwned}`,
    `git+https://x.example/a.git#$(touch${IFS}${pwned})`,
    'https://x.example/$HOME/"quoted"/a.tgz',
    '/srv/agentbox-0.1.0.tgz',
    'file:///srv/agentbox-0.1.0.tgz',
  ])('%s', (source) => {
    checkSource(source);
    const lines = [
      installScript(source),
      parse(githubWorkflow('0.1.0', source)).jobs.run.steps.find(
        (s: any) => s.name === 'Install agentbox and Claude Code',
      ).run,
      parse(gitlabJob('0.1.0', source)).agentbox.before_script[0],
    ];
    for (const line of lines) {
      const argsFile = path.join(dir, 'args');
      const result = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', line], {
        env: { PATH: `${bin}:/usr/bin:/bin`, ARGS_FILE: argsFile, HOME: dir },
        stdio: ['ignore', 'pipe', 'pipe'],
        encoding: 'utf8',
      });
      expect(result.status, result.stderr).toBe(0);
      expect(fs.readFileSync(argsFile, 'utf8').split('\n')).toContain(source);
      expect(fs.existsSync(pwned)).toBe(false);
    }
  });

  it('a single quote inside the value stays inside the word', () => {
    expect(shellWord("a'b")).toBe(`'a'\\''b'`);
  });
});
