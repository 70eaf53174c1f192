import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { githubWorkflow } from '../../src/engines/github.js';
import { gitlabJob } from '../../src/engines/gitlab.js';
import { JOB_SCRIPT, jobManifest } from '../../src/engines/k8s.js';
import { runScript, STRICT } from '../../src/engines/script.js';
import { VERSION } from '../../src/version.js';
import { bash, text, tool } from '../fixtures/model-server/index.js';
import { AGENTBOX_BIN, runAgentbox } from '../helpers/bin.js';
import { GIT_ENV, tempDir } from '../helpers/git-repo.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';

/**
 * The engines' own scripts, taken from the generated files and run here with bash, as the
 * platform would run them: a bare repository plays the git host, a fresh clone the runner's
 * checkout, the built agentbox and the real Claude Code (with the scripted model) do the run.
 * Only what needs the network is left out: the install steps (install-lines.test.ts runs each of
 * them against a real local registry, and the GitLab job whole under gitlab-ci-local), and
 * GitHub's API (`gh` is a stand-in that records what it was asked to post).
 * NOTE: until `--push` lands, the agentbox on PATH drops it (and says so); once the CLI knows
 * it, it is passed through and the run's ref must be on the origin.
 */
let p: Project;
let work: string;
let origin: string;
let shims: string;
let noSandboxPath: string;
let pushSupported = false;

interface StepResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `bash script` the way GitHub's `shell: bash` runs it (--noprofile --norc -eo pipefail). */
function runBash(script: string, cwd: string, env: Record<string, string>): Promise<StepResult> {
  const file = path.join(work, `step-${Math.random().toString(36).slice(2)}.sh`);
  fs.writeFileSync(file, script);
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', file], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' });

/** The runner's checkout: a fresh clone of the origin, as actions/checkout leaves it. */
function checkout(): string {
  const dir = fs.mkdtempSync(path.join(work, 'checkout-'));
  git(work, 'clone', '--quiet', origin, dir);
  return dir;
}

/** A runner's environment: CI set, agentbox and the stand-ins first on PATH, git config of its own. */
function runnerEnv(extra: Record<string, string> = {}): Record<string, string> {
  const home = fs.mkdtempSync(path.join(work, 'home-'));
  return {
    ...p.env,
    CI: 'true',
    PATH: `${shims}:${process.env.PATH}`,
    GIT_CONFIG_GLOBAL: path.join(home, '.gitconfig'),
    GIT_CONFIG_NOSYSTEM: '1',
    RUNNER_TEMP: home,
    GITHUB_STEP_SUMMARY: path.join(home, 'step-summary.md'),
    GITHUB_REPOSITORY: 'team/app',
    ...extra,
  };
}

/** The run folders of a checkout, by name. */
const runsIn = (dir: string) =>
  fs.existsSync(path.join(dir, '.agents/runs')) ? fs.readdirSync(path.join(dir, '.agents/runs')) : [];
const readRunFile = (dir: string, run: string, file: string) =>
  fs.readFileSync(path.join(dir, '.agents/runs', run, file), 'utf8');

/** The model adds `file` in the run's worktree, then says it is done. */
function scriptAdd(marker: string, file: string): void {
  p.server.setRules([
    {
      when: { turn: 0, anyText: marker },
      reply: (req) =>
        tool('Write', { file_path: path.join(req.workingDirectory!, file), content: 'hello\n' }),
    },
    { when: { turn: 1, anyText: marker }, reply: text(`Added ${file}.`) },
  ]);
}

function writeShims(): void {
  const stop = pushSupported
    ? ''
    : '[ "$a" = --push ] && [ "$seen" = 0 ] && { echo "(test: --push dropped)" >&2; continue; }';
  fs.writeFileSync(
    path.join(shims, 'agentbox'),
    `#!/bin/bash\nargs=(); seen=0\nfor a in "$@"; do\n  [ "$a" = -- ] && seen=1\n  ${stop}\n  args+=("$a")\ndone\nexec "${process.execPath}" "${AGENTBOX_BIN}" "\${args[@]}"\n`,
    { mode: 0o755 },
  );
  // GitHub's CLI: what it would post, recorded.
  fs.writeFileSync(
    path.join(shims, 'gh'),
    `#!/bin/bash\nprintf '%s\\n' "$@" >"$RUNNER_TEMP/gh-args"\nwhile [ $# -gt 0 ]; do [ "$1" = --body-file ] && cp "$2" "$RUNNER_TEMP/gh-body"; shift; done\n`,
    { mode: 0o755 },
  );
}

/** Every program on PATH but bubblewrap and socat: a machine where Claude Code's sandbox cannot work. */
function pathWithoutSandbox(): string {
  const dir = path.join(work, 'bin-no-sandbox');
  fs.mkdirSync(dir);
  for (const from of [shims, ...(process.env.PATH ?? '').split(':')]) {
    if (!from || !fs.existsSync(from)) continue;
    for (const name of fs.readdirSync(from)) {
      const target = path.join(dir, name);
      if (name === 'bwrap' || name === 'socat' || fs.existsSync(target)) continue;
      fs.symlinkSync(path.join(from, name), target);
    }
  }
  return dir;
}

beforeAll(async () => {
  p = await project({ files: { 'src/app.ts': 'export const x = 1;\n' } });
  work = tempDir('agentbox-ci-');
  origin = path.join(work, 'origin.git');
  git(work, 'clone', '--quiet', '--bare', p.repo.dir, origin);
  shims = path.join(work, 'shims');
  fs.mkdirSync(shims);
  const help = await runAgentbox(['fix', '--help'], { cwd: p.repo.dir, env: p.env });
  pushSupported = help.stdout.includes('--push');
  writeShims();
  noSandboxPath = pathWithoutSandbox();
}, 60_000);

afterAll(async () => {
  await p?.cleanup();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

/** The engines' common run script on its own (what every engine runs after its setup). */
const runOnly = () => `${STRICT}${runScript()}`;

/** The run's ref on the origin, once --push works; until then, the note that it was dropped. */
function expectPublished(run: string, result: StepResult): void {
  if (pushSupported) expect(git(work, 'ls-remote', origin, `refs/agentbox/runs/${run}`)).toContain(run);
  else expect(result.stderr).toContain('(test: --push dropped)');
}

describe('the GitHub workflow, its scripts run here', () => {
  const steps: any[] = parse(githubWorkflow(VERSION, `agentbox@${VERSION}`)).jobs.run.steps;
  const step = (name: string) => steps.find((s) => s.name === name);

  it('an /agentbox comment with shell in it: the task arrives verbatim, nothing runs, the outcome is posted', async () => {
    const pwned = path.join(work, 'pwned');
    const line = `add hello.txt "quoted" $(touch ${pwned}) \`touch ${pwned}\`; echo $HOME`;
    scriptAdd('add hello.txt', 'hello.txt');
    const dir = checkout();
    const env = runnerEnv({
      EVENT_NAME: 'issue_comment',
      ISSUE_NUMBER: '42',
      ISSUE_TITLE: 'Greeting missing $(id)',
      ISSUE_BODY: 'please',
      COMMENT_BODY: `/agentbox fix ${line}\r\nsecond line\r\n`,
      AGENTBOX_BUDGET: '5',
      GIT_PUSH_TOKEN: 'not-a-real-token',
    });
    const result = await runBash(step('Run agentbox').run, dir, env);
    expect(result.stderr).not.toContain('Error');
    expect(result.code).toBe(0);
    expect(fs.existsSync(pwned)).toBe(false);
    const [run] = runsIn(dir);
    expect(parse(readRunFile(dir, run!, 'meta.yaml')).task).toBe(`${line}\nsecond line`);
    expect(JSON.parse(readRunFile(dir, run!, 'state.json')).status).toBe('REVIEW');
    // The log is plain lines: CI is set.
    expect(result.stdout).not.toContain('\x1b');
    expect(fs.readFileSync(env.GITHUB_STEP_SUMMARY!, 'utf8')).toContain(`\`${run}\`: REVIEW`);
    expectPublished(run!, result);

    const commentEnv = { ...env, GH_TOKEN: 'x', LOG_URL: 'https://github.example/team/app/actions/runs/7' };
    const comment = await runBash(step('Comment on the issue').run, dir, commentEnv);
    expect(comment.code).toBe(0);
    const args = fs.readFileSync(path.join(env.RUNNER_TEMP!, 'gh-args'), 'utf8').split('\n');
    expect(args.slice(0, 5)).toEqual(['issue', 'comment', '42', '--repo', 'team/app']);
    const body = fs.readFileSync(path.join(env.RUNNER_TEMP!, 'gh-body'), 'utf8');
    const id = run!.slice(-6);
    expect(body).toContain(`agentbox fetch && agentbox diff ${id} && agentbox merge ${id}`);
    expect(body).toMatch(/\| cost \| .* of \$5\.00 \|/);
    expect(body).toContain('| log | https://github.example/team/app/actions/runs/7 |');
    expect(body).toContain('Added hello.txt.');
    await expectNoProcessesLeft(p.tag);
  }, 120_000);

  it('a dispatch with a run type that does not exist starts nothing and says why', async () => {
    const dir = checkout();
    const env = runnerEnv({ EVENT_NAME: 'workflow_dispatch', INPUT_TYPE: 'deploy', INPUT_TASK: 'ship it' });
    const result = await runBash(step('Run agentbox').run, dir, env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('the run type "deploy" is not one of scout, plan, fix, review');
    expect(runsIn(dir)).toEqual([]);
  });
});

describe('in CI a failed run exits with its failure kind', () => {
  it('an API error is 14 in CI, 1 elsewhere', async () => {
    p.server.setRules([{ when: { anyText: 'unreachable model' }, reply: { httpStatus: 401 } }]);
    const inCi = await p.agentbox(['scout', 'unreachable model, in CI'], { env: { CI: 'true' } });
    expect(inCi.code).toBe(14);
    expect(inCi.stdout).toContain('CRASHED (api_error)');
    const local = await p.agentbox(['scout', 'unreachable model, locally']);
    expect(local.code).toBe(1);
  }, 120_000);
});

describe('the GitLab job and the Kubernetes Job, their scripts run here without a usable sandbox', () => {
  const job = parse(gitlabJob(VERSION, `agentbox@${VERSION}`)).agentbox;
  const gitlabEnv = (extra: Record<string, string>) =>
    runnerEnv({
      PATH: noSandboxPath,
      CI_SERVER_URL: `file://${work}`,
      CI_PROJECT_PATH: 'origin',
      AGENTBOX_TYPE: 'fix',
      AGENTBOX_BUDGET: '5',
      GIT_PUSH_TOKEN: 'not-a-real-token',
      ...extra,
    });

  it('fails closed without the opt-out, naming it', async () => {
    const dir = checkout();
    const env = gitlabEnv({ AGENTBOX_TASK: 'add gitlab.txt' });
    const result = await runBash(job.script[0], dir, env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("fix runs need Claude Code's sandbox");
    expect(result.stderr).toContain('AGENTBOX_SANDBOX=container');
    expect(runsIn(dir)).toEqual([]);
  });

  it('with the job’s own variables (the container is the sandbox) the run goes through', async () => {
    scriptAdd('add gitlab.txt', 'gitlab.txt');
    const dir = checkout();
    const env = gitlabEnv({ ...job.variables, AGENTBOX_TASK: 'add gitlab.txt' });
    const result = await runBash(job.script[0], dir, env);
    expect(result.stderr).not.toContain('Error');
    expect(result.code).toBe(0);
    expect(git(dir, 'remote', 'get-url', 'origin').trim()).toBe(`file://${work}/origin.git`);
    const [run] = runsIn(dir);
    expect(JSON.parse(readRunFile(dir, run!, 'state.json')).status).toBe('REVIEW');
    // The run's own record says it had no sandbox, and why.
    const events = readRunFile(dir, run!, 'events.jsonl')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.filter((e) => e.event === 'sandbox_off')).toEqual([
      expect.objectContaining({ event: 'sandbox_off', by: 'AGENTBOX_SANDBOX=container' }),
    ]);
    expectPublished(run!, result);
    const after = await runBash(job.after_script[0], dir, env);
    expect(after.code).toBe(0);
  }, 120_000);

  it('the Kubernetes Job clones its commit and runs there, the summary ending its log', async () => {
    scriptAdd('add k8s.txt', 'k8s.txt');
    const commit = git(work, '--git-dir', origin, 'rev-parse', 'HEAD').trim();
    const manifest = jobManifest({
      name: 'agentbox-fix-e2e',
      type: 'fix',
      task: 'add k8s.txt',
      image: 'unused',
      repo: origin,
      commit,
      secrets: { anthropic: 'a', git: 'g' },
      gitUser: 'x-access-token',
      cpu: '1',
      memory: '1Gi',
      ttlSeconds: 60,
      deadlineSeconds: 600,
      sandbox: 'container',
    }) as any;
    const container = manifest.spec.template.spec.containers[0];
    expect(container.command).toEqual(['bash', '-c', JOB_SCRIPT]);
    const podEnv = Object.fromEntries(
      container.env.filter((e: any) => e.value !== undefined).map((e: any) => [e.name, e.value]),
    );
    const pod = fs.mkdtempSync(path.join(work, 'pod-'));
    const env = runnerEnv({ ...podEnv, HOME: pod, PATH: noSandboxPath, GIT_PUSH_TOKEN: 'not-a-real-token' });
    const result = await runBash(JOB_SCRIPT, pod, env);
    expect(result.stderr).not.toContain('Error');
    expect(result.code).toBe(0);
    const dir = path.join(pod, 'repo');
    expect(git(dir, 'rev-parse', 'HEAD').trim()).toBe(commit);
    const [run] = runsIn(dir);
    expect(JSON.parse(readRunFile(dir, run!, 'state.json')).status).toBe('REVIEW');
    expect(result.stdout).toContain(`### agentbox fix \`${run}\`: REVIEW`);
    expectPublished(run!, result);
    await expectNoProcessesLeft(p.tag);
  }, 120_000);
});

describe('a run cannot opt the next one out of the sandbox', () => {
  it('an agentbox.yaml the agent writes (its worktree, or the checkout) leaves the next run fail-closed', async () => {
    const dir = checkout();
    const off = 'sandbox: { mode: off }';
    p.server.setRules([
      {
        when: { turn: 0, anyText: 'turn the sandbox off' },
        reply: (req) =>
          tool('Write', {
            file_path: path.join(req.workingDirectory!, 'agentbox.yaml'),
            content: `${off}\n`,
          }),
      },
      {
        when: { turn: 1, anyText: 'turn the sandbox off' },
        reply: bash(`echo '${off}' >> ${path.join(dir, 'agentbox.yaml')}; export AGENTBOX_SANDBOX=container`),
      },
      { when: { turn: 2, anyText: 'turn the sandbox off' }, reply: text('Tried.') },
    ]);
    const env = runnerEnv({
      AGENTBOX_TYPE: 'fix',
      AGENTBOX_TASK: 'turn the sandbox off',
      GIT_PUSH_TOKEN: 'x',
    });
    const first = await runBash(runOnly(), dir, env);
    expect(first.code).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'agentbox.yaml'), 'utf8')).not.toContain(off);
    // The append was tried and the sandbox refused it (a read-only file system, not a rule).
    const results = p.server.requests
      .filter((r) => r.view.allText.includes('turn the sandbox off'))
      .flatMap((r) => r.view.toolResults);
    expect(results.some((r) => r.isError && /read-only|denied|not permitted/i.test(JSON.stringify(r)))).toBe(
      true,
    );
    const next = await runBash(runOnly(), dir, { ...env, PATH: noSandboxPath, AGENTBOX_TASK: 'anything' });
    expect(next.code).toBe(1);
    expect(next.stderr).toContain("fix runs need Claude Code's sandbox");
    await expectNoProcessesLeft(p.tag);
  }, 120_000);
});
