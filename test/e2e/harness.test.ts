import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import pty from '@lydell/node-pty';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bash,
  hang,
  helpers,
  type ModelServer,
  scriptByTurn,
  startModelServer,
  text,
} from '../fixtures/model-server/index.js';
import {
  CLAUDE_BIN,
  type ClaudeHome,
  claudeEnv,
  claudeHome,
  prepareInteractiveConfig,
  runClaude,
  TEST_API_KEY,
} from '../helpers/claude.js';
import { gitRepo, type TestRepo } from '../helpers/git-repo.js';
import { expectNoProcessesLeft, killTagged, newTestTag, processesWithTag } from '../helpers/processes.js';

// The harness itself, checked against the real Claude Code CLI: if these fail, every other e2e
// test's evidence is suspect.
describe('scripted model server + real claude', () => {
  const tag = newTestTag();
  let server: ModelServer;
  let home: ClaudeHome;
  let repo: TestRepo;

  beforeAll(async () => {
    server = await startModelServer([]);
    home = claudeHome();
    repo = gitRepo();
  });

  afterAll(async () => {
    killTagged(tag);
    await server?.close();
  });

  const env = () => claudeEnv({ home, modelUrl: server.url, extra: { AGENTBOX_TEST_TAG: tag } });
  const headless = (prompt: string, ...more: string[]) => [
    '-p',
    prompt,
    '--output-format',
    'stream-json',
    '--verbose',
    '--allowedTools',
    'Bash',
    ...more,
  ];
  const requestsSince = (start: number) => server.requests.slice(start);

  it('runs a scripted Bash call and sends its output back to the model', async () => {
    const seenDuringRun: string[] = [];
    server.setRules([
      ...scriptByTurn([bash('echo hello-from-tool')]),
      {
        name: 'final',
        when: { turn: 1 },
        reply: () => {
          // claude is alive and waiting for this answer: the tag must find it, or the
          // "nothing left behind" check below would prove nothing.
          seenDuringRun.push(...processesWithTag(tag).map((p) => p.cmdline));
          return text('all done');
        },
      },
    ]);
    const start = server.requests.length;
    const result = await runClaude(headless('say hello'), { cwd: repo.dir, env: env() });

    expect(result.code, result.stderr).toBe(0);
    const [first, second, ...rest] = requestsSince(start);
    expect(rest).toEqual([]);
    expect([first?.rule, second?.rule]).toEqual(['turn 0', 'final']);
    const toolUseId = (first!.reply.blocks![0] as { id: string }).id;
    expect(second!.view.toolResults).toEqual([{ toolUseId, content: 'hello-from-tool', isError: false }]);
    expect(helpers.findToolResult(second!.view, toolUseId)?.content).toBe('hello-from-tool');
    expect(first!.view.lastUserText).toContain('say hello');
    expect(first!.view.tools).toContain('Bash');
    expect(result.events[0]).toMatchObject({ type: 'system', subtype: 'init' });
    expect(result.events.at(-1)).toMatchObject({
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: 'all done',
    });

    expect(seenDuringRun).toContainEqual(expect.stringContaining(CLAUDE_BIN));
    await expectNoProcessesLeft(tag);
  });

  it('tells the server the working directory and the session id, and resumes a session', async () => {
    const sessionId = randomUUID();
    server.setRules([
      { name: 'first', when: { lastUserText: 'first prompt' }, reply: text('noted: pelican') },
      { name: 'second', when: { lastUserText: 'second prompt' }, reply: text('resumed') },
    ]);
    const start = server.requests.length;
    const first = await runClaude(headless('first prompt', '--session-id', sessionId), {
      cwd: repo.dir,
      env: env(),
    });
    expect(first.code, first.stderr).toBe(0);
    expect(first.events[0]).toMatchObject({ type: 'system', session_id: sessionId });

    const second = await runClaude(headless('second prompt', '--resume', sessionId), {
      cwd: repo.dir,
      env: env(),
    });
    expect(second.code, second.stderr).toBe(0);
    expect(second.events.at(-1)).toMatchObject({ type: 'result', result: 'resumed' });

    const requests = requestsSince(start);
    expect(requests.map((r) => r.rule)).toEqual(['first', 'second']);
    expect(requests.map((r) => r.view.sessionId)).toEqual([sessionId, sessionId]);
    expect(requests.map((r) => r.view.workingDirectory)).toEqual([repo.dir, repo.dir]);
    const resumed = requests[1]!.view;
    expect(resumed.turn).toBeGreaterThanOrEqual(1);
    expect(resumed.allText).toContain('first prompt');
    expect(resumed.allText).toContain('noted: pelican');
    await expectNoProcessesLeft(tag);
  });

  it('reaps what a Bash command left running after claude exits', async () => {
    // A backgrounded command outlives claude and escapes its process group: runClaude must reap it.
    let during: string[] = [];
    server.setRules([
      // The command returns once the sleeper runs (a fork not yet exec'd is still `bash`: on a
      // loaded machine the next turn came before it was `sleep 30`).
      ...scriptByTurn([
        bash(
          '(sleep 30 &); for i in $(seq 100); do grep -qsx sleep /proc/[0-9]*/comm && break; sleep 0.1; done; echo started',
        ),
      ]),
      {
        when: { turn: 1 },
        reply: () => {
          during = processesWithTag(tag).map((p) => p.cmdline);
          return text('left one behind');
        },
      },
    ]);
    const result = await runClaude(headless('start a sleeper'), { cwd: repo.dir, env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(during).toContain('sleep 30');
    await expectNoProcessesLeft(tag);
  });

  it('kills claude and rejects when a run times out', async () => {
    server.setRules([{ name: 'hang', reply: hang() }]);
    const before = server.requests.length;
    const started = Date.now();
    // Long enough for claude to reach the model on a loaded machine (it starts in ~0.5 s idle,
    // several seconds at a load of 20), where it then waits forever.
    await expect(
      runClaude(headless('wait forever'), { cwd: repo.dir, env: env(), timeoutMs: 6000 }),
    ).rejects.toThrow(/timed out after 6000 ms/);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(server.requests.slice(before).map((r) => r.rule)).toContain('hang');
    await expectNoProcessesLeft(tag);
  });
});

describe('interactive claude in a pty', () => {
  it('answers a typed prompt once prepareInteractiveConfig has skipped onboarding and trust', async () => {
    const tag = newTestTag();
    const server = await startModelServer([
      { name: 'ping', when: { lastUserText: 'ping' }, reply: text('pong-from-model') },
    ]);
    const home = claudeHome();
    const repo = gitRepo();
    prepareInteractiveConfig({ configDir: home.configDir, projectDirs: [repo.dir], apiKey: TEST_API_KEY });
    const env = claudeEnv({ home, modelUrl: server.url, extra: { AGENTBOX_TEST_TAG: tag } });
    const term = pty.spawn(CLAUDE_BIN, [], { cwd: repo.dir, env, cols: 120, rows: 40 });
    let screen = '';
    term.onData((data) => {
      screen += data;
    });
    const exited = new Promise((resolve) => term.onExit(resolve));
    try {
      // Without the config it stops at onboarding and never shows the input prompt.
      await expect.poll(() => screen, { timeout: 15_000 }).toContain('❯');
      term.write('ping');
      // Text and Enter in one write can be taken as a paste, which swallows the Enter.
      await new Promise((resolve) => setTimeout(resolve, 60));
      term.write('\r');
      await expect.poll(() => server.requests.map((r) => r.rule), { timeout: 15_000 }).toEqual(['ping']);
      expect(server.requests[0]!.view.workingDirectory).toBe(repo.dir);
      await expect.poll(() => screen, { timeout: 15_000 }).toContain('pong-from-model');
    } finally {
      term.kill('SIGKILL');
      await exited;
      killTagged(tag);
      await server.close();
    }
    await expectNoProcessesLeft(tag);
  });
});

describe('process tags', () => {
  it('finds a tagged process and names it when it outlives the wait', async () => {
    const tag = newTestTag();
    const child = spawn('sleep', ['30'], { env: { PATH: process.env.PATH ?? '', AGENTBOX_TEST_TAG: tag } });
    try {
      await expect.poll(() => processesWithTag(tag).map((p) => p.pid)).toEqual([child.pid]);
      expect(processesWithTag(newTestTag())).toEqual([]);
      await expect(expectNoProcessesLeft(tag, 200)).rejects.toThrow(/still running.*\n.*sleep 30/);
      killTagged(tag);
      await expectNoProcessesLeft(tag);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
