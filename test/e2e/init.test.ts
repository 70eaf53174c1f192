import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bash,
  helpers,
  type ModelServer,
  type Reply,
  startModelServer,
  text,
  tool,
} from '../fixtures/model-server/index.js';
import { runAgentbox } from '../helpers/bin.js';
import { CLAUDE_BIN, type ClaudeHome, claudeEnv, claudeHome, runClaude } from '../helpers/claude.js';
import { gitRepo, type TestRepo } from '../helpers/git-repo.js';
import { expectNoProcessesLeft, killTagged, newTestTag } from '../helpers/processes.js';

type Event = Record<string, any>;

/**
 * After `agentbox init`, a plain `claude -p` session in the repository (no agentbox run) must:
 * load the settings with no entry skipped, fire the installed hook, and be refused the ledger and
 * the human gate — while the hook stays silent for ordinary commands.
 */
describe('agentbox init, seen by the real Claude Code', () => {
  const tag = newTestTag();
  let server: ModelServer;
  let home: ClaudeHome;
  let repo: TestRepo;
  const env = () => claudeEnv({ home, modelUrl: server.url, extra: { AGENTBOX_TEST_TAG: tag } });

  beforeAll(async () => {
    server = await startModelServer([]);
    home = claudeHome();
    repo = gitRepo({ files: { 'src/app.ts': 'export const x = 1;\n' } });
    const init = await runAgentbox(['init'], { cwd: repo.dir, env: env() });
    expect(init.stderr).toBe('');
    expect(init.code).toBe(0);
    fs.writeFileSync(path.join(repo.dir, '.agents/INDEX.md'), '# SECRET-LEDGER-CONTENT\n');
  });

  afterAll(async () => {
    killTagged(tag);
    await server?.close();
  });

  /** Runs one scripted session; the replies are given per turn, keyed by a unique prompt. */
  async function session(prompt: string, replies: ((dir: string) => Reply)[]) {
    server.setRules(
      replies.map((reply, turn) => ({
        name: `${prompt} turn ${turn}`,
        when: { turn, anyText: prompt },
        reply: (req) => reply(req.workingDirectory ?? repo.dir),
      })),
    );
    const first = server.requests.length;
    const result = await runClaude(
      [
        '-p',
        prompt,
        '--output-format',
        'stream-json',
        '--verbose',
        '--include-hook-events',
        '--allowedTools',
        'Bash,Read',
        '--debug-file',
        path.join(home.home, `${prompt}.debug.log`),
      ],
      { cwd: repo.dir, env: env() },
    );
    return { result, requests: server.requests.slice(first), events: result.events as Event[] };
  }

  it('loads the installed settings with no entry skipped (read from --debug-file)', async () => {
    const debugFile = path.join(home.home, 'settings.debug.log');
    server.setRules([{ when: { anyText: 'probe-settings' }, reply: text('ok') }]);
    const result = await runClaude(['-p', 'probe-settings', '--debug-file', debugFile], {
      cwd: repo.dir,
      env: env(),
    });
    expect(result.code).toBe(0);
    const log = fs.readFileSync(debugFile, 'utf8');
    expect(log).not.toContain('Invalid setting skipped');
    expect(log).toContain("Adding 5 deny rule(s) to destination 'projectSettings'");
    expect(log).toContain('"Read(./.agents/**)"');
  });

  it('fires the hook, and refuses the agent the ledger and the human gate', async () => {
    const prompt = 'hostile-session-7f3a';
    const { result, requests, events } = await session(prompt, [
      (dir) => tool('Read', { file_path: path.join(dir, '.agents/INDEX.md') }),
      () => bash('cat .agents/INDEX.md'),
      () => bash('bash -c "cat .agents/INDEX.md"'),
      () => bash('python3 -c "print(open(\'.agents/runs/../INDEX.md\').read())"'),
      () => bash('agentbox merge latest --yes'),
      () => bash('echo fine-outside-the-ledger'),
      () => text('done'),
    ]);
    expect(result.code).toBe(0);
    // Each tool call's result arrives at the model on the next turn.
    const resultOf = (turn: number) => {
      const callId = helpers.toolUses(requests.find((r) => r.view.turn === turn + 1)!.view).at(-1)!.id;
      return helpers.findToolResult(requests.find((r) => r.view.turn === turn + 1)!.view, callId)!;
    };
    for (const turn of [0, 1, 2, 3, 4]) {
      const r = resultOf(turn);
      expect(r.isError, `turn ${turn}: ${r.content}`).toBe(true);
      expect(r.content).not.toContain('SECRET-LEDGER-CONTENT');
    }
    // The Bash forms Claude Code's own rule parsing misses are stopped by agentbox's guard hook.
    expect(resultOf(2).content).toContain('agentbox: the .agents/ run ledger');
    expect(resultOf(3).content).toContain('agentbox: the .agents/ run ledger');
    expect(resultOf(5)).toMatchObject({ isError: false, content: 'fine-outside-the-ledger' });

    const hookResponses = events.filter((e) => e.type === 'system' && e.subtype === 'hook_response');
    expect(hookResponses.filter((e) => e.hook_event === 'PreToolUse').length).toBeGreaterThanOrEqual(4);
    const final = events.find((e) => e.type === 'result')!;
    expect(final.permission_denials.length).toBe(5);
    expect(JSON.stringify(events)).not.toContain('SECRET-LEDGER-CONTENT');
  });

  it('costs nothing outside the ledger: the guard does not even start for ordinary commands', async () => {
    const prompt = 'ordinary-session-c41d';
    const { result, requests, events } = await session(prompt, [
      () => bash('echo one'),
      () => bash('ls src'),
      () => text('all good'),
    ]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(requests.find((r) => r.view.turn === 1)!.view.toolResults[0]).toMatchObject({
      isError: false,
      content: 'one',
    });
    // No hook process ran: Claude Code checked the guard's `if` conditions and skipped it.
    expect(events.filter((e) => e.type === 'system' && e.subtype === 'hook_started')).toEqual([]);
    const log = fs.readFileSync(path.join(home.home, `${prompt}.debug.log`), 'utf8');
    expect(log.match(/Skipping hook due to if condition "Bash\(\*\.agents\*\)" not matching/g)).toHaveLength(
      2,
    );
    const final = events.find((e) => e.type === 'result')!;
    expect(final.is_error).toBe(false);
    expect(final.permission_denials).toEqual([]);
    expect(final.result).toBe('all good');
  });

  it('doctor passes against the real Claude Code, and fails with a fix when a settings entry is invalid', async () => {
    const doctorEnv = { ...env(), AGENTBOX_CLAUDE_BIN: CLAUDE_BIN };
    const ok = await runAgentbox(['doctor'], { cwd: repo.dir, env: doctorEnv });
    expect(ok.stdout).toContain('✓ hooks accepted');
    expect(ok.stdout).toContain('All checks passed.');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(
      /✓ claude login +Claude Code has credentials \(api_key from ANTHROPIC_API_KEY\)/,
    );
    expect(ok.stdout).toMatch(
      new RegExp(
        `✓ model reachable +Claude Code can reach a model: ${server.url} answered HTTP 200 in \\d+ ms`,
      ),
    );

    // Nothing listens at the base URL (a port bound, then closed): said, with the URL (issue 29).
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const deadUrl = `http://127.0.0.1:${(probe.address() as net.AddressInfo).port}`;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const dead = await runAgentbox(['doctor'], {
      cwd: repo.dir,
      env: { ...doctorEnv, ANTHROPIC_BASE_URL: deadUrl },
    });
    expect(dead.code).toBe(1);
    expect(dead.stdout).toContain(
      `✗ model reachable  connection refused at ${deadUrl}: nothing listens there`,
    );
    expect(dead.stdout).not.toContain('can reach a model');

    // Not logged in and no key: doctor says so, with the fix, without a model call.
    const before = server.requests.length;
    const noKey = { ...doctorEnv };
    delete (noKey as Record<string, string>).ANTHROPIC_API_KEY;
    const out = await runAgentbox(['doctor'], { cwd: repo.dir, env: noKey });
    expect(out.code).toBe(1);
    expect(out.stdout).toMatch(/✗ claude login +Claude Code is not logged in and has no API key/);
    expect(out.stdout).toContain('fix: set ANTHROPIC_API_KEY');
    expect(out.stdout).toContain('claude auth login');
    expect(server.requests.length).toBe(before);

    // runs.setup: npm ci, and no lockfile committed: doctor fails before a fix run would (issue 29).
    const configFile = path.join(repo.dir, 'agentbox.yaml');
    const config = fs.readFileSync(configFile, 'utf8');
    fs.writeFileSync(configFile, config.replace(/^ {2}setup:.*$/m, '  setup: npm ci'));
    try {
      expect((await runAgentbox(['trust', '--yes'], { cwd: repo.dir, env: doctorEnv })).code).toBe(0);
      const setup = await runAgentbox(['doctor'], { cwd: repo.dir, env: doctorEnv });
      expect(setup.code).toBe(1);
      expect(setup.stdout).toMatch(
        /✗ setup +runs\.setup "npm ci": npm ci needs package-lock\.json or npm-shrinkwrap\.json committed, and HEAD has none/,
      );
      expect(setup.stdout).toContain('cp -a --reflink=auto "$AGENTBOX_REPO_ROOT/node_modules" .');
      expect(setup.stdout).toContain('1 check(s) failed.');
    } finally {
      fs.writeFileSync(configFile, config);
    }

    const file = path.join(repo.dir, '.claude/settings.json');
    const original = fs.readFileSync(file, 'utf8');
    const broken = JSON.parse(original);
    broken.hooks.Stop = [{ hooks: [{ type: 'command', command: 'true', timeout: '2' }] }];
    fs.writeFileSync(file, JSON.stringify(broken, null, 2));
    try {
      const bad = await runAgentbox(['doctor'], { cwd: repo.dir, env: doctorEnv });
      expect(bad.code).toBe(1);
      expect(bad.stdout).toContain('✗ hooks installed');
      expect(bad.stdout).toContain(
        'hooks.Stop[0].hooks[0].timeout must be a positive number of seconds, got "2"',
      );
      expect(bad.stdout).toContain('fix:');
    } finally {
      fs.writeFileSync(file, original);
    }
  });

  it('leaves no process behind', async () => {
    await expectNoProcessesLeft(tag);
  });
});
