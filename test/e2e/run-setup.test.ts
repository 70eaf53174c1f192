import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, type RequestView, text, tool } from '../fixtures/model-server/index.js';
import { AGENTBOX_BIN, REPO_ROOT } from '../helpers/bin.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project, trustAsIs } from '../helpers/project.js';
import { sleep, waitFor } from '../helpers/pty.js';

/**
 * Issue 14, item 5 on the real Claude Code: a fix run's worktree has no ignored files (no
 * node_modules), so `runs.setup` prepares it — in the run's sandbox, before claude starts — and a
 * tool call that fails is never hidden under a green tick.
 */
const FILES = {
  '.gitignore': 'deps/\n',
  'src/app.ts': 'export const x = 1;\n',
};
/** A fix run's script: `command`, then set x to 2, then end with `answer`. */
const script = (task: string, command: string, answer: string) =>
  [
    () => bash(command),
    (r: RequestView) =>
      tool('Edit', {
        file_path: path.join(r.workingDirectory!, 'src/app.ts'),
        old_string: 'export const x = 1;',
        new_string: 'export const x = 2;',
      }),
    () => text(answer),
  ].map((reply, turn) => ({ when: { turn, anyText: task }, reply }));

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' });

describe('runs.setup and failed tool calls', () => {
  let p: Project;
  let root: string;
  const config = (yaml: string) => fs.writeFileSync(path.join(p.repo.dir, 'agentbox.yaml'), yaml);
  beforeAll(async () => {
    p = await project({ files: FILES });
    root = fs.realpathSync(p.repo.dir);
    // An ignored dependency folder in the main tree: a new worktree does not have it.
    fs.mkdirSync(path.join(root, 'deps'));
    fs.writeFileSync(path.join(root, 'deps', 'lib.js'), "module.exports = 'the shared lib';\n");
  });
  afterAll(async () => p?.cleanup());

  it('runs.setup prepares the worktree in the run’s sandbox before claude starts; the agent uses what it made', async () => {
    config(
      [
        'runs:',
        '  setup: >-',
        '    mkdir -p deps && cp "$AGENTBOX_REPO_ROOT/deps/lib.js" deps/ && echo "setup copied $(ls deps)";',
        '    echo escaped > "$AGENTBOX_REPO_ROOT/setup-escaped.txt" || echo "the main tree is read-only";',
        '    echo "setup sees $(env | grep -c SETUP-CRED) credentials"',
        // The project's code, which the agent may have rewritten, never runs with claude's credentials.
        '  verify: echo "verify sees $(env | grep -c SETUP-CRED) credentials"',
        '',
      ].join('\n'),
    );
    const task = 'TASK-SETUP-OK use the lib';
    p.server.setRules(script(task, `node -e "console.log(require('./deps/lib.js'))"`, 'Used the lib.'));
    const from = p.server.requests.length;
    const credentials = {
      CLAUDE_CODE_OAUTH_TOKEN: 'SETUP-CRED-login',
      ANTHROPIC_AUTH_TOKEN_UNUSED: 'SETUP-CRED-token',
      ANTHROPIC_FOUNDRY_API_KEY: 'SETUP-CRED-foundry',
      ANTHROPIC_CUSTOM_HEADERS: 'X-Key: SETUP-CRED-header',
    };
    const result = await p.agentbox(['fix', task], { env: credentials });
    expect(result.code, result.stderr).toBe(0);
    const name = p.newest();
    expect(result.stdout).toContain(`✓ ${name} — REVIEW\n`);
    expect(result.stdout).not.toContain('failed');

    // Its output is in the run folder; it ran in the sandbox (the main tree is read-only to it).
    const log = p.read(name, 'raw/setup.log');
    expect(log).toContain('setup copied lib.js');
    expect(log).toMatch(/Read-only file system/);
    expect(log).toContain('the main tree is read-only');
    expect(fs.existsSync(path.join(root, 'setup-escaped.txt'))).toBe(false);
    expect(log).toContain('setup sees 0 credentials');
    expect(p.read(name, 'raw/verify-1.log')).toContain('verify sees 0 credentials');

    // Events, then state: it finished (exit 0) before claude's first request.
    const events = p.events(name);
    const started = events.findIndex((e) => e.event === 'setup_started');
    const finished = events.findIndex((e) => e.event === 'setup_finished');
    expect(started).toBeGreaterThanOrEqual(0);
    expect(finished).toBeGreaterThan(started);
    expect(events[finished]).toMatchObject({ ok: true, exit_code: 0, log: 'raw/setup.log' });
    expect(events[finished].duration_ms).toBeGreaterThan(0);
    const index = fs
      .readFileSync(path.join(root, '.agents/INDEX.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const claudeStarted = index.find((e) => e.run === name && e.event === 'claude_started');
    expect(Date.parse(claudeStarted.ts)).toBeGreaterThanOrEqual(Date.parse(events[finished].ts));
    expect(p.state(name).setup).toMatchObject({ ok: true, exit_code: 0, command: expect.any(String) });

    // The agent's Bash found what the setup made.
    const results = p.server.requests.slice(from).flatMap((r) => r.view.toolResults);
    expect(results[0]).toMatchObject({ isError: false });
    expect(results[0]!.content).toContain('the shared lib');
    // What the setup made is ignored: not in the patch.
    const patch = p.read(name, 'changes.patch');
    expect(patch).toContain('export const x = 2;');
    expect(patch).not.toContain('deps/');
  });

  it('a failing runs.setup ends the run FAILED (setup) without starting claude; worktree and branch are gone', async () => {
    config('runs:\n  setup: echo preparing; echo "lockfile out of date" >&2; exit 3\n');
    const task = 'TASK-SETUP-FAILS anything';
    p.server.setRules(script(task, 'true', 'never asked'));
    const from = p.server.requests.length;
    const result = await p.agentbox(['fix', task]);
    expect(result.code).toBe(1);
    const name = p.newest();
    // No claude: the model got no request.
    expect(p.server.requests.length).toBe(from);

    const log = `.agents/runs/${name}/raw/setup.log`;
    expect(result.stdout).toContain(
      `✗ ${name} — FAILED (setup): runs.setup "echo preparing; echo "lockfile out of date" >&2; exit 3" failed with exit code 3; its output is in ${log}; claude was not started\n`,
    );
    expect(result.stdout).toContain(
      '  next          fix runs.setup in agentbox.yaml (try the command in your own tree first), then start the run again\n',
    );
    expect(result.stdout).toContain(`  raw/setup.log ${log}\n`);
    expect(p.read(name, 'raw/setup.log')).toBe('preparing\nlockfile out of date\n');

    const state = p.state(name);
    expect(state.status).toBe('FAILED');
    expect(state.failure.kind).toBe('setup');
    expect(state.claude_pid).toBeNull();
    expect(state.session_id).toBeNull();
    expect(state.setup).toMatchObject({ ok: false, exit_code: 3, timed_out: false });
    // Nothing is left behind, as after any start that failed: no worktree, no branch.
    expect(state.worktree_path).toBeNull();
    expect(state.branch).toBeNull();
    expect(git(root, 'branch', '--list', `agentbox/${name}`)).toBe('');
    expect(git(root, 'worktree', 'list', '--porcelain')).not.toContain(name);
    const base = path.join(p.home.home, '.local/share/agentbox/worktrees');
    expect(fs.readdirSync(base).flatMap((d) => fs.readdirSync(path.join(base, d)))).not.toContain(name);

    const events = p.events(name);
    expect(events.find((e) => e.event === 'setup_finished')).toMatchObject({ ok: false, exit_code: 3 });
    const report = p.read(name, 'report.md');
    expect(report).toContain('- status: **FAILED** — setup: runs.setup');
    expect(report).toContain('failed with exit code 3');
    expect(report).toContain('lockfile out of date');
    expect(report).toContain('Its worktree and branch were removed');

    const shown = await p.agentbox(['show', name]);
    expect(shown.stdout).toMatch(
      /setup\s+echo preparing.* — FAILED \(exit code 3\) in \d+\.\ds \(raw\/setup\.log\)/,
    );
    expect(shown.stdout).toContain(`next: fix runs.setup in agentbox.yaml (its output: ${log})`);
    // A FAILED run cannot be resumed: there is no session.
    const resumed = await p.agentbox(['resume', name]);
    expect(resumed.code).not.toBe(0);
    expect(resumed.stderr).toContain('is FAILED');
    config('');
  });

  it('a failed tool call shows in the summary, report.md and show --json, never under a green tick alone', async () => {
    config('');
    const task = 'TASK-TOOL-FAILS set x';
    p.server.setRules(script(task, `node -e "require('nope')"`, 'Set x to 2.'));
    const result = await p.agentbox(['fix', task]);
    expect(result.code, result.stderr).toBe(0);
    const name = p.newest();
    expect(p.state(name).status).toBe('REVIEW');
    const last = `Bash node -e "require('nope')": Error: Cannot find module 'nope'`;
    expect(result.stdout).toContain(`⚠ ${name} — REVIEW · 1 tool call failed (last: ${last})\n`);
    expect(result.stdout).not.toContain(`✓ ${name}`);
    // watch ends the same run as the foreground did.
    const watched = await p.agentbox(['watch', name]);
    expect(watched.stdout).toContain(`⚠ ${name} — REVIEW · 1 tool call failed (last: ${last}) · exit 0\n`);

    expect(p.read(name, 'report.md')).toContain(`- **failed tool calls: 1** — last: \`${last}\``);
    const shown = JSON.parse((await p.agentbox(['show', name, '--json'])).stdout);
    expect(shown.state.failed_tool_calls).toBe(1);
    expect(shown.state.last_tool_error).toBe(last);
    expect((await p.agentbox(['show', name])).stdout).toMatch(
      /tool calls\s+2 · 1 tool call failed \(last: Bash node -e/,
    );
  });

  it('--json carries the failed tool calls too', async () => {
    const task = 'TASK-TOOL-FAILS-JSON set x';
    p.server.setRules(script(task, 'ls /no/such/dir', 'Set x to 2.'));
    const result = await p.agentbox(['fix', task, '--json']);
    expect(result.code, result.stderr).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out.failed_tool_calls).toBe(1);
    expect(out.last_tool_error).toMatch(/^Bash ls \/no\/such\/dir: .*No such file or directory/);
  });

  it('a resumed run does not run the setup again; its failed tool calls keep counting', async () => {
    config('runs:\n  setup: mkdir -p deps && echo once >> deps/count\n');
    const task = 'TASK-SETUP-RESUME look around';
    p.server.setRules([
      { when: { anyText: 'please wrap up' }, reply: text('Wrapped up after the resume.') },
      { when: { turn: 0, anyText: task }, reply: bash('ls /no/such/place') },
      // The first attempt's turn 1 never answers: claude is killed while it waits.
      { when: { turn: 1, anyText: task }, reply: { text: 'never', delayMs: 120_000 } },
    ]);
    trustAsIs(p.repo.dir, p.env);
    const child = spawn(process.execPath, [AGENTBOX_BIN, 'fix', task], {
      cwd: p.repo.dir,
      env: p.env,
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    // Generous: a loaded machine takes long to get there; only a hang should fail here.
    const deadline = Date.now() + 120_000;
    while (!p.server.requests.some((r) => r.view.turn === 1 && r.view.allText.includes(task))) {
      if (Date.now() > deadline) throw new Error('timed out waiting for turn 1');
      await new Promise((r) => setTimeout(r, 100));
    }
    const name = p.newest();
    process.kill(p.state(name).claude_pid, 'SIGKILL');
    expect(await exited).toBe(1);
    expect(p.state(name)).toMatchObject({ status: 'CRASHED', failed_tool_calls: 1 });

    const resumed = await p.agentbox(['resume', name, 'please wrap up']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const state = p.state(name);
    expect(state.status).toBe('DONE');
    expect(p.events(name).filter((e) => e.event === 'setup_started')).toHaveLength(1);
    expect(fs.readFileSync(path.join(state.worktree_path, 'deps', 'count'), 'utf8')).toBe('once\n');
    expect(state.failed_tool_calls).toBe(1);
    expect(state.last_tool_error).toMatch(/^Bash ls \/no\/such\/place: .*No such file or directory/);
    expect(resumed.stdout).toContain(`⚠ ${name} — DONE · 1 tool call failed`);
    config('');
  }, 400_000);

  it('agentbox stop during the setup ends it and the run (ABORTED, setup) without claude', async () => {
    config('runs:\n  setup: echo begun; sleep 600\n');
    const task = 'TASK-SETUP-STOPPED anything';
    p.server.setRules(script(task, 'true', 'never asked'));
    const started = Date.now();
    trustAsIs(p.repo.dir, p.env);
    const child = spawn(process.execPath, [AGENTBOX_BIN, 'fix', task], {
      cwd: p.repo.dir,
      env: p.env,
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const deadline = Date.now() + 120_000;
    const begun = () => {
      const name = p.runs().find((n) => n.includes('task-setup-stopped'));
      return name && fs.existsSync(path.join(p.runDir(name), 'raw/setup.log'))
        ? fs.readFileSync(path.join(p.runDir(name), 'raw/setup.log'), 'utf8').includes('begun')
        : false;
    };
    while (!begun()) {
      if (Date.now() > deadline) throw new Error('timed out waiting for the setup to begin');
      await new Promise((r) => setTimeout(r, 100));
    }
    const name = p.newest();
    const stopped = await p.agentbox(['stop', name]);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(await exited).toBe(143);
    // The setup would sleep 10 minutes: the stop cut it short, however slow the machine.
    expect(Date.now() - started).toBeLessThan(300_000);
    // Counted by task: a straggler of an earlier test's claude may still reach the server.
    expect(p.server.requests.filter((r) => r.view.allText.includes(task))).toEqual([]);
    const state = p.state(name);
    expect(state).toMatchObject({ status: 'ABORTED', worktree_path: null, branch: null });
    expect(state.failure).toEqual({
      kind: 'setup',
      message: `runs.setup "echo begun; sleep 600" was stopped by agentbox stop; its output is in .agents/runs/${name}/raw/setup.log; claude was not started`,
    });
    expect(git(root, 'branch', '--list', `agentbox/${name}`)).toBe('');
    config('');
  }, 400_000);

  it('piped: runs.setup and runs.verify say when each starts and ends, as it happens; watch replays the run at its own times', async () => {
    // In the main git dir: runs.verify reads it (a fix run's fence hides the main tree itself).
    const flags = path.join(root, '.git', 'test-flags');
    fs.mkdirSync(flags, { recursive: true });
    const flag = (name: string) => path.join(flags, name);
    // Each step waits (at most 2 minutes) for a file the test makes only once it has seen the step's start.
    const waitOn = (file: string) =>
      `i=0; while [ ! -e ${file} ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done`;
    config(
      [
        'runs:',
        `  setup: echo preparing; ${waitOn(flag('setup-go'))}`,
        `  verify: ${waitOn(flag('verify-go'))}; grep -q "x = 2" src/app.ts || { echo "x is not 2"; exit 1; }`,
        '',
      ].join('\n'),
    );
    const task = 'TASK-STEPS-PIPED set x';
    p.server.setRules([
      { when: { anyText: task, turn: 0 }, reply: bash('echo first look') },
      // Ends without the change: the verification fails and the agent is sent back.
      { when: { anyText: task, turn: 1 }, reply: text('Done.') },
      {
        when: { anyText: task, turn: 2 },
        reply: (r: RequestView) =>
          tool('Edit', {
            file_path: path.join(r.workingDirectory!, 'src/app.ts'),
            old_string: 'export const x = 1;',
            new_string: 'export const x = 2;',
          }),
      },
      { when: { anyText: task }, reply: text('Set x to 2.') },
    ]);
    trustAsIs(p.repo.dir, p.env);
    const child = spawn(process.execPath, [AGENTBOX_BIN, 'fix', task], {
      cwd: p.repo.dir,
      env: p.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', () => {});
    let code: number | null | undefined;
    const exited = new Promise<number | null>((resolve) =>
      child.on('close', (c) => {
        code = c;
        resolve(c);
      }),
    );
    const seen = (re: RegExp) =>
      waitFor(() => re.test(out), `${re} in the output`, { timeoutMs: 120_000, context: () => out });
    const events = () => p.events(p.runs().find((n) => n.includes('task-steps-piped'))!);

    // The setup's start is printed while it runs: it cannot end before the test sees the line.
    await seen(/^\[[^\]]+\] setup started: echo preparing; i=0; while/m);
    expect(code).toBeUndefined();
    expect(events().some((e) => e.event === 'setup_finished')).toBe(false);
    fs.writeFileSync(flag('setup-go'), '');
    await seen(/^\[[^\]]+\] setup passed after \S+( \S+)?: echo preparing/m);
    // The same for the verification, at the agent's first Stop.
    await seen(/^\[[^\]]+\] verify started: i=0; while/m);
    expect(code).toBeUndefined();
    expect(events().some((e) => e.event === 'verify')).toBe(false);
    fs.writeFileSync(flag('verify-go'), '');
    expect(await exited).toBe(0);
    const name = p.newest();
    const shown = out.split('\n').filter((l) => /^\[[^\]]+\] /.test(l) || l.startsWith('✓'));
    expect(shown).toEqual([
      expect.stringMatching(/\] setup started: echo preparing/),
      expect.stringMatching(/\] setup passed after .*: echo preparing/),
      expect.stringMatching(/\] Bash echo first look$/),
      expect.stringMatching(/\] verify started: i=0/),
      expect.stringMatching(/\] verify FAILED \(exit code 1\) after .*: i=0/),
      expect.stringMatching(/\] Edit \S*src\/app\.ts$/),
      expect.stringMatching(/\] verify started: i=0/),
      expect.stringMatching(/\] verify passed after .*: i=0/),
      `✓ ${name} — REVIEW`,
    ]);

    // A replay, well after the end, shows each line at its own time since the start, in order.
    const state = p.state(name);
    const lasted = Date.parse(state.ended_at) - Date.parse(state.started_at);
    await sleep(Math.max(0, Date.parse(state.ended_at) + 3000 - Date.now()));
    const watched = await p.agentbox(['watch', name]);
    expect(watched.code, watched.stderr).toBe(0);
    const lines = watched.stdout
      .split('\n')
      .map((l) => /^\[([^\]]+)\] (.*)$/.exec(l))
      .filter((m) => m !== null)
      .map((m) => ({ ms: durationMs(m[1]!), text: m[2]! }));
    for (const line of lines) expect(line.ms, line.text).toBeLessThanOrEqual(lasted + 500);
    expect(lines.map((l) => l.ms)).toEqual([...lines.map((l) => l.ms)].sort((a, b) => a - b));
    expect(lines.map((l) => l.text)).toEqual([
      expect.stringMatching(/^setup started: echo preparing/),
      expect.stringMatching(/^setup passed after .*: echo preparing/),
      'Bash echo first look',
      expect.stringMatching(/^verify: FAILED — `i=0;/),
      expect.stringMatching(/^violation: verify_failed — .* \(correct\)$/),
      'supervisor: continue (rules) — correction',
      expect.stringMatching(/^Edit \S*src\/app\.ts$/),
      expect.stringMatching(/^verify: passed — `i=0;/),
      'supervisor: complete (rules) — the agent finished and no rule objects',
    ]);
    fs.rmSync(flag('setup-go'));
    fs.rmSync(flag('verify-go'));
    config('');
  }, 300_000);

  it('npm install, a dependency, no lockfile (issue 38): doctor names registry.npmjs.org and the line to write; the run the proxy refuses says so and names runs.setup_domains', async () => {
    fs.writeFileSync(
      path.join(root, 'package.json'),
      `${JSON.stringify({ name: 'app', version: '1.0.0', dependencies: { dequal: '^2.0.3' } })}\n`,
    );
    git(root, 'add', 'package.json');
    git(root, 'commit', '-q', '-m', 'a dependency, no lockfile');
    try {
      config('runs:\n  setup: npm install --no-audit --no-fund\n');
      const doctor = await p.agentbox(['doctor']);
      expect(doctor.code).toBe(1);
      expect(doctor.stdout).toMatch(
        /✗ setup +runs\.setup: npm install --no-audit --no-fund downloads from registry\.npmjs\.org \(package\.json, no lockfile committed\), and the sandbox's network allowlist lets the setup reach no host: the sandbox's proxy would refuse registry\.npmjs\.org \(E403\)\n/,
      );
      expect(doctor.stdout).toContain(
        'fix: in agentbox.yaml, under runs:, write  setup_domains: [registry.npmjs.org]  ',
      );
      expect(doctor.stdout).not.toContain('lockfiles committed');
      // docs/getting-started.md shows these two lines as doctor prints them.
      const printed = doctor.stdout.split('\n');
      const at = printed.findIndex((l) => l.startsWith('✗ setup'));
      const page = fs.readFileSync(path.join(REPO_ROOT, 'docs/getting-started.md'), 'utf8');
      expect(page).toContain(`${printed[at]}\n${printed[at + 1]}\n`);

      // The run: the sandbox's proxy refuses the registry (no network needed to see it).
      const task = 'TASK-SETUP-REFUSED anything';
      p.server.setRules(script(task, 'true', 'never asked'));
      const from = p.server.requests.length;
      const result = await p.agentbox(['fix', task]);
      expect(result.code).toBe(1);
      expect(p.server.requests.length).toBe(from);
      const name = p.newest();
      expect(p.read(name, 'raw/setup.log')).toContain('host is not on the allow list');
      expect(result.stdout).toContain(
        `FAILED (setup): runs.setup "npm install --no-audit --no-fund" failed with exit code 1: the sandbox's network allowlist refused registry.npmjs.org; its output is in`,
      );
      expect(result.stdout).toContain(
        'next          let the setup reach registry.npmjs.org: in agentbox.yaml, under runs:, write  setup_domains: [registry.npmjs.org]  (runs.setup_domains: only the setup reaches them, not the agent), then agentbox trust and start the run again\n',
      );
      expect(result.stdout).not.toContain('your own tree');
      expect((await p.agentbox(['show', name])).stdout).toContain(
        'next: let the setup reach registry.npmjs.org',
      );

      // With the line written, doctor's setup check passes and says what it checked.
      config('runs:\n  setup: npm install --no-audit --no-fund\n  setup_domains: [registry.npmjs.org]\n');
      const allowed = await p.agentbox(['doctor']);
      const passed =
        "runs.setup: programs found on the run's PATH; npm install --no-audit --no-fund reaches registry.npmjs.org (package.json, no lockfile committed), allowed (not run)";
      expect(allowed.stdout).toContain(`✓ setup            ${passed}\n`);
      expect(page.replace(/\s+/g, ' ')).toContain(passed);
    } finally {
      git(root, 'rm', '-q', 'package.json');
      git(root, 'commit', '-q', '-m', 'no package.json');
      config('');
    }
  });

  it('leaves no process behind', async () => {
    await expectNoProcessesLeft(p.tag);
  });
});

/** `formatDuration`'s text back to milliseconds: "600ms", "12s", "1m", "1m 47s". */
function durationMs(text: string): number {
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  return text.split(' ').reduce((sum, part) => {
    const m = /^(\d+)(ms|s|m|h)$/.exec(part);
    if (!m) throw new Error(`not a duration: ${text}`);
    return sum + Number(m[1]) * unit[m[2]!]!;
  }, 0);
}
