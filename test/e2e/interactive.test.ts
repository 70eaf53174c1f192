import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findTranscript } from '../../src/claude/transcript.js';
import { ipcRequest } from '../../src/interactive/ipc.js';
import { text, tool } from '../fixtures/model-server/index.js';
import { prepareInteractiveConfig, TEST_API_KEY } from '../helpers/claude.js';
import { expectNoProcessesLeft, processesWithTag } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { fakeClaude, type PtySession, sleep, startPty, waitFor } from '../helpers/pty.js';

/** The session log's lines for one event, as key=value maps. */
function logEvents(p: Project, name: string, event: string): Record<string, string>[] {
  const file = path.join(p.runDir(name), 'supervisor.log');
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.split(' ')[2] === event)
    .map((line) => Object.fromEntries([...line.matchAll(/(\w+)=("[^"]*"|\S+)/g)].map((m) => [m[1], m[2]])));
}

describe('agentbox start: an interactive Claude Code behind a pty', () => {
  let p: Project;
  let session: PtySession | undefined;
  const config = (yaml: string) => fs.writeFileSync(path.join(p.repo.dir, 'agentbox.yaml'), yaml);
  const start = (args: string[] = [], env: Record<string, string> = {}, cols = 100, rows = 30) => {
    session = startPty(['start', ...args], { cwd: p.repo.dir, env: { ...p.env, ...env }, cols, rows });
    return session;
  };
  const context = () => `--- terminal ---\n${session?.output().slice(-3000)}`;
  const newRun = async (before: number) => {
    await waitFor(() => p.runs().length > before, 'the session run to be created', { context });
    return p.newest();
  };
  /** `agentbox start <args>` in a pty, once its run exists and claude has been spawned. */
  const openSession = async (args: string[] = [], env: Record<string, string> = {}) => {
    const before = p.runs().length;
    const s = start(args, env);
    const name = await newRun(before);
    await spawned(name);
    return { s, name };
  };
  /**
   * Until the session counts claude as idle at its prompt, ready for typed input, and its screen
   * has then been quiet for a second: right after its first prompt Claude Code queries the terminal
   * (`ESC[>0q`, `ESC[?u`, `ESC[c`), which a test pty never answers, and keys typed while it waits
   * for the answers can be lost on a loaded machine (seen once in CI: the Enter of a typed line).
   */
  const idle = async (name: string) => {
    await waitFor(async () => (await stateOf(name)).idle === true, 'claude to be idle', { context });
    let seen = -1;
    await waitFor(
      async () => {
        const now = session?.output().length ?? 0;
        const quiet = now === seen;
        seen = now;
        if (!quiet) await sleep(1000);
        return quiet;
      },
      'a quiet screen',
      { context },
    );
  };
  const spawned = (name: string, count = 1) =>
    waitFor(() => logEvents(p, name, 'claude_spawn').length >= count, `claude spawn #${count}`, {
      context,
    });

  beforeAll(async () => {
    p = await project();
    prepareInteractiveConfig({
      configDir: p.home.configDir,
      projectDirs: [p.repo.dir],
      apiKey: TEST_API_KEY,
    });
  });
  afterEach(async () => {
    // A failed test must not leave its session running into the next one.
    if (session) {
      const left = await Promise.race([session.exited.then(() => false), sleep(100).then(() => true)]);
      if (left) session.kill();
    }
    session = undefined;
    config('');
  });
  afterAll(async () => p?.cleanup());

  it('typed input and agentbox inject both reach the model as user turns; state shows the session; stop ends everything', async () => {
    p.server.setRules([
      { when: { lastUserText: 'hello from the keyboard' }, reply: text('REPLY-TO-KEYBOARD') },
      { when: { lastUserText: 'a note from agentbox inject' }, reply: text('REPLY-TO-INJECT') },
    ]);
    const { s, name } = await openSession();
    // Typing before claude draws its prompt would be lost: wait until the session calls it idle.
    await idle(name);
    // The session said which run it is and how to reach it from another terminal.
    const id = name.slice(-6);
    expect(s.output()).toContain(`agentbox: session ${name}`);
    expect(s.output()).toContain(
      `agentbox state ${id} · agentbox inject ${id} "<text>" · agentbox stop ${id}`,
    );
    await s.type('hello from the keyboard');
    await waitFor(() => s.output().includes('REPLY-TO-KEYBOARD'), 'the reply on screen', { context });
    expect(p.server.requests.some((r) => r.view.lastUserText.includes('hello from the keyboard'))).toBe(true);

    const injected = await p.agentbox(['inject', name, 'a note from agentbox inject']);
    expect(injected.stderr).toBe('');
    expect(injected.code).toBe(0);
    await waitFor(() => s.output().includes('REPLY-TO-INJECT'), 'the injected turn answered', { context });
    const injectedRequest = p.server.requests.find((r) =>
      r.view.lastUserText.includes('a note from agentbox inject'),
    );
    // A user turn of the same conversation: the earlier exchange comes with it.
    expect(injectedRequest?.view.allText).toContain('hello from the keyboard');

    const state = await stateOf(name);
    const ledger = p.state(name);
    expect(state).toMatchObject({
      run: name,
      running: true,
      cwd: p.repo.dir,
      cwd_source: 'repo_root',
      session_id: ledger.session_id,
      restart_count: 0,
      last_exit: null,
      policy_state: 'healthy',
    });
    expect(state.pid).toBe(ledger.claude_pid);
    // The endpoint's token is in claude's private settings file (0600), never in its environment.
    const environ = fs.readFileSync(`/proc/${state.pid}/environ`, 'latin1');
    expect(environ).not.toContain('AGENTBOX_TOKEN');
    expect(environ).not.toContain('AGENTBOX_URL');
    const settingsArg = fs
      .readFileSync(`/proc/${state.pid}/cmdline`, 'latin1')
      .split('\0')
      .find((a) => a.startsWith('--settings='))!;
    expect(fs.statSync(settingsArg.slice('--settings='.length)).mode & 0o777).toBe(0o600);
    expect(fs.statSync(ledger.socket_path).mode & 0o777).toBe(0o600);
    // The socket's own protocol, as any client would speak it.
    expect(await ipcRequest(ledger.socket_path, 'pid')).toEqual({ pid: state.pid });
    const pid = await p.agentbox(['state', name]);
    expect(pid.stdout).toContain(`pid        ${state.pid}`);

    // While it runs, its transcript is read from Claude Code's own file (issue 30).
    await waitFor(
      async () => (await p.agentbox(['show', id, '--transcript'])).stdout.includes('REPLY-TO-INJECT'),
      'the live transcript',
      { context },
    );
    const stopped = await p.agentbox(['stop', name]);
    expect(stopped.code).toBe(0);
    expect(await s.exited).toBe(0);
    await expectNoProcessesLeft(p.tag);
    const after = p.state(name);
    expect(after.status).toBe('DONE');
    expect(after.claude_pid).toBeNull();
    expect(fs.existsSync(ledger.socket_path)).toBe(false);
    expect(p.read(name, 'meta.yaml')).toContain('type: interactive');
    // The log: one line per event, `[<epoch>] [supervisor] <event> key=value`.
    const log = p.read(name, 'supervisor.log');
    expect(log).toMatch(/^\[\d{10}\] \[supervisor\] claude_spawn pid=\d+ mode=fresh session=[0-9a-f-]{36}$/m);
    expect(log).toMatch(/^\[\d{10}\] \[supervisor\] ipc method=stop$/m);
    // The session's slash commands are gone with it, and the folders made for them.
    expect(fs.existsSync(path.join(p.repo.dir, '.claude/commands'))).toBe(false);

    const gone = await p.agentbox(['state', name]);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain('not running');

    // Claude Code's own transcript of the session is kept in the run, and is its transcript (issue 30).
    expect(fs.statSync(path.join(p.runDir(name), 'raw', 'transcript.jsonl')).isFile()).toBe(true);
    const shown = await p.agentbox(['show', id, '--transcript', '--json']);
    expect(shown.code, shown.stderr).toBe(0);
    const entries = shown.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    const said = entries
      .filter((e) => e.kind === 'user' || e.kind === 'text')
      .map((e) => `${e.kind}:${e.text}`);
    expect(said).toEqual([
      'user:hello from the keyboard',
      'text:REPLY-TO-KEYBOARD',
      expect.stringMatching(/^user:.*a note from agentbox inject/),
      'text:REPLY-TO-INJECT',
    ]);
    expect(entries.every((e) => e.id.startsWith('t') || e.id.startsWith('e'))).toBe(true);
  }, 90_000);

  it("a task given to start is claude's first message; injected text waits until that turn is over", async () => {
    p.server.setRules([
      { when: { lastUserText: 'the first task' }, reply: { text: 'FIRST-TASK-DONE', delayMs: 1500 } },
      { when: { lastUserText: 'queued while busy' }, reply: text('QUEUED-ANSWER') },
    ]);
    // The first task is composed like a headless run's: the built-in global template, the project's
    // (interactive.input.md), then the task.
    const templates = path.join(p.repo.dir, '.agentbox', 'templates');
    fs.mkdirSync(templates, { recursive: true });
    fs.writeFileSync(
      path.join(templates, 'interactive.input.md'),
      'INTERACTIVE-PROJECT-RULE for {{run_id}}\n',
    );
    const before = p.runs().length;
    const s = start(['the first task']);
    const name = await newRun(before);
    await waitFor(
      () => p.server.requests.some((r) => r.view.lastUserText.includes('the first task')),
      'the task',
      {
        context,
      },
    );
    // Claude is busy with the task: the message is queued, not typed into its turn.
    const injected = await p.agentbox(['inject', name, 'queued while busy', '--json']);
    expect(JSON.parse(injected.stdout)).toMatchObject({ queued: 1, delivered: false });
    await waitFor(() => s.output().includes('QUEUED-ANSWER'), 'the queued message answered', { context });
    const order = p.server.requests.map((r) => r.view.lastUserText);
    expect(order.findIndex((t) => t.includes('queued while busy'))).toBeGreaterThan(
      order.findIndex((t) => t.includes('the first task')),
    );
    expect(p.read(name, 'meta.yaml')).toContain('task: the first task');
    const first = p.server.requests.find((r) => r.view.lastUserText.includes('the first task'))!.view
      .lastUserText;
    const at = (t: string) => first.indexOf(t);
    expect(at('You work for a careful engineer')).toBeGreaterThanOrEqual(0);
    expect(at(`INTERACTIVE-PROJECT-RULE for ${name.slice(-6)}`)).toBeGreaterThan(
      at('You work for a careful engineer'),
    );
    expect(at('the first task')).toBeGreaterThan(at('INTERACTIVE-PROJECT-RULE'));
    expect(p.read(name, 'prompt/task.md')).toBe('the first task');
    fs.rmSync(path.join(p.repo.dir, '.agentbox'), { recursive: true, force: true });
    await p.agentbox(['stop', name]);
    expect(await s.exited).toBe(0);
    await expectNoProcessesLeft(p.tag);
  }, 60_000);

  it('the supervisor and hooks work as in headless runs: [CONTINUE] is the next turn, the ledger stays sealed', async () => {
    const SUPERVISOR = 'You supervise a Claude Code agent';
    p.server.setRules([
      {
        name: 'supervisor',
        when: { anyText: SUPERVISOR },
        reply: (req) =>
          req.allText.includes('PARSER-WRITTEN')
            ? text('[CONTINUE] now add a test for it')
            : text('[COMPLETE] done as asked'),
      },
      { when: { lastUserText: 'write the parser please' }, reply: text('PARSER-WRITTEN') },
      { when: { lastUserText: 'now add a test for it' }, reply: text('ALSO-TESTED') },
      {
        when: { lastUserText: 'read the ledger' },
        reply: tool('Read', { file_path: path.join(p.repo.dir, '.agents/INDEX.md') }),
      },
      { when: { predicate: (r) => r.toolResults.length > 0 }, reply: text('READ-REFUSED') },
    ]);
    const { s, name } = await openSession(['--supervisor', 'claude']);
    await idle(name);
    await s.type('write the parser please');
    await waitFor(() => s.output().includes('ALSO-TESTED'), 'the continued turn', { context });
    await waitFor(
      () => p.events(name).some((e) => e.event === 'Stop' && e.decision === 'complete'),
      'the supervisor to complete',
    );
    const decisions = p.events(name).filter((e) => e.event === 'Stop');
    expect(decisions.map((e) => [e.decision, e.source])).toEqual([
      ['continue', 'claude'],
      ['complete', 'claude'],
    ]);
    // "complete" ends the turn, not the session: the person goes on.
    await waitFor(async () => (await stateOf(name)).idle === true, 'claude idle again', { context });
    await s.type('read the ledger');
    await waitFor(() => s.output().includes('READ-REFUSED'), 'the refused read answered', { context });
    const refused = p.server.requests.find((r) => r.view.toolResults.length > 0)!;
    expect(refused.view.toolResults[0]!.isError).toBe(true);
    expect(p.state(name).status).toBe('ACTIVE');
    await p.agentbox(['stop', name]);
    expect(await s.exited).toBe(0);
    await expectNoProcessesLeft(p.tag);
  }, 90_000);

  it("a stop while the supervisor's model call is under way ends that call too: no process is left", async () => {
    const SUPERVISOR = 'You supervise a Claude Code agent';
    p.server.setRules([
      {
        name: 'supervisor',
        when: { anyText: SUPERVISOR },
        reply: () => ({ text: '[COMPLETE] too late', delayMs: 120_000 }),
      },
      { when: { lastUserText: 'judge me slowly' }, reply: text('JUDGE-ME') },
    ]);
    const userConfig = path.join(p.home.home, '.config', 'agentbox', 'config.yaml');
    fs.mkdirSync(path.dirname(userConfig), { recursive: true });
    fs.writeFileSync(userConfig, 'supervisor:\n  timeout: 60s\n');
    const { s, name } = await openSession(['--supervisor', 'claude']);
    await idle(name);
    const before = p.server.requests.length;
    await s.type('judge me slowly');
    await waitFor(
      () => p.server.requests.slice(before).some((r) => r.view.allText.includes(SUPERVISOR)),
      "the supervisor's call",
      { context },
    );
    const stopped = Date.now();
    await p.agentbox(['stop', name]);
    expect(await s.exited).toBe(0);
    // Not after the supervisor's timeout (60 s here): the call was ended with the session.
    expect(Date.now() - stopped).toBeLessThan(30_000);
    await expectNoProcessesLeft(p.tag, 5_000);
    fs.rmSync(userConfig);
  }, 90_000);

  it('[ABORT] from the supervisor clears the conversation and ends the session ABORTED, keeping the id to resume', async () => {
    p.server.setRules([
      {
        name: 'supervisor',
        when: { anyText: 'You supervise a Claude Code agent' },
        reply: text('[ABORT] off the rails'),
      },
      { when: { lastUserText: 'do something risky' }, reply: text('RISKY-ANSWER') },
    ]);
    const { s, name } = await openSession(['--supervisor', 'claude']);
    await idle(name);
    const id = p.state(name).session_id;
    await s.type('do something risky');
    expect(await s.exited).toBe(1);
    expect(s.output()).toContain('the supervisor aborted the session: off the rails');
    expect(p.state(name)).toMatchObject({
      status: 'ABORTED',
      session_id: id,
      failure: { kind: 'agent_abort', message: 'off the rails' },
    });
    // The clear agentbox typed started a new id, which it did not adopt.
    const clear = p.events(name).find((e) => e.event === 'SessionStart' && e.source === 'clear');
    expect(clear?.session_id).toBeTruthy();
    expect(clear?.session_id).not.toBe(id);
    expect(logEvents(p, name, 'session_id')).toEqual([]);
    expect(logEvents(p, name, 'supervisor_abort')).toEqual([{ reason: '"off the rails"' }]);
    // claude ended by itself when /exit was typed (seed 001): exit code 0, no signal.
    expect(logEvents(p, name, 'claude_exit_requested')).toEqual([{ by: '/exit' }]);
    expect(logEvents(p, name, 'claude_exit_forced')).toEqual([]);
    expect(logEvents(p, name, 'claude_exit')).toEqual([{ code: '0', signal: 'null' }]);
    await expectNoProcessesLeft(p.tag);
  }, 60_000);

  it('kill -9 of claude restarts it resuming the exact session: the conversation goes on', async () => {
    config('interactive:\n  restart_delay: 100ms\n');
    p.server.setRules([
      { when: { lastUserText: 'remember the word PELICAN' }, reply: text('NOTED-PELICAN') },
      { when: { lastUserText: 'which word was it' }, reply: text('ANSWER-AFTER-RESTART') },
    ]);
    const { s, name } = await openSession();
    await idle(name);
    await s.type('remember the word PELICAN');
    await waitFor(() => s.output().includes('NOTED-PELICAN'), 'the first answer', { context });
    const { session_id: sessionId, claude_pid: firstPid } = p.state(name);
    // Claude Code writes its transcript a moment after the screen shows the answer; a crash before
    // that loses the turn (and the session starts afresh, a case of its own below).
    await waitFor(() => {
      const file = findTranscript(p.home.configDir, sessionId);
      return file && fs.readFileSync(file, 'utf8').includes('NOTED-PELICAN');
    }, 'the answer in the transcript');

    process.kill(firstPid, 'SIGKILL');
    await spawned(name, 2);
    const spawns = logEvents(p, name, 'claude_spawn');
    expect(spawns[1]).toMatchObject({ mode: 'resume', session: sessionId });
    expect(logEvents(p, name, 'claude_exit')[0]).toMatchObject({ signal: '9' });
    expect(logEvents(p, name, 'policy')[0]).toMatchObject({ state: 'transient', delay_ms: '100' });

    await waitFor(async () => (await stateOf(name)).idle === true, 'the new claude to be idle', { context });
    const state = await stateOf(name);
    expect(state.session_id).toBe(sessionId);
    expect(state.pid).not.toBe(firstPid);
    expect(state.restart_count).toBe(1);
    expect(state.policy_state).toBe('transient');
    expect(state.last_exit).toMatchObject({ code: null, signal: '9' });

    await s.type('which word was it');
    await waitFor(() => s.output().includes('ANSWER-AFTER-RESTART'), 'the answer after the restart', {
      context,
    });
    // The resumed claude sent the conversation from before the crash.
    const resumed = p.server.requests.find((r) => r.view.lastUserText.includes('which word was it'));
    expect(resumed?.view.allText).toContain('remember the word PELICAN');
    expect(resumed?.view.allText).toContain('NOTED-PELICAN');

    await p.agentbox(['stop', name]);
    expect(await s.exited).toBe(0);
    await expectNoProcessesLeft(p.tag);
  }, 90_000);

  it('/clear starts a new session id; agentbox follows it, so a crash resumes the conversation after the clear', async () => {
    config('interactive:\n  restart_delay: 50ms\n');
    p.server.setRules([
      { when: { lastUserText: 'before the clear' }, reply: text('OLD-CONVERSATION') },
      { when: { lastUserText: 'after the clear' }, reply: text('NEW-CONVERSATION') },
      { when: { lastUserText: 'still there?' }, reply: text('RESUMED-AFTER-CLEAR') },
    ]);
    const { s, name } = await openSession();
    await idle(name);
    await s.type('before the clear');
    await waitFor(() => s.output().includes('OLD-CONVERSATION'), 'the first answer', { context });
    const first = p.state(name).session_id;
    await idle(name);
    await s.type('/clear');
    await waitFor(() => logEvents(p, name, 'session_id').length > 0, 'the new session id', { context });
    const cleared = logEvents(p, name, 'session_id')[0]!;
    expect(cleared.source).toBe('clear');
    expect(cleared.id).not.toBe(first);
    await waitFor(() => p.state(name).session_id === cleared.id, 'the ledger to follow');
    await idle(name);
    await s.type('after the clear');
    await waitFor(() => s.output().includes('NEW-CONVERSATION'), 'the answer after the clear', { context });
    await waitFor(() => {
      const file = findTranscript(p.home.configDir, cleared.id!);
      return file && fs.readFileSync(file, 'utf8').includes('NEW-CONVERSATION');
    }, 'the new conversation in its transcript');

    process.kill(p.state(name).claude_pid, 'SIGKILL');
    await spawned(name, 2);
    expect(logEvents(p, name, 'claude_spawn')[1]).toMatchObject({ mode: 'resume', session: cleared.id });
    await idle(name);
    await s.type('still there?');
    await waitFor(() => s.output().includes('RESUMED-AFTER-CLEAR'), 'the answer after the restart', {
      context,
    });
    const resumed = p.server.requests.find((r) => r.view.lastUserText.includes('still there?'))!;
    expect(resumed.view.allText).toContain('after the clear');
    expect(resumed.view.allText).not.toContain('before the clear');
    await p.agentbox(['stop', name]);
    expect(await s.exited).toBe(0);
    await expectNoProcessesLeft(p.tag);
  }, 90_000);

  it('agentbox restart resumes the same session; --fresh starts a new one; neither counts as a crash', async () => {
    p.server.setRules([{ when: { lastUserText: 'keep this in mind' }, reply: text('KEPT') }]);
    const { s, name } = await openSession();
    await idle(name);
    await s.type('keep this in mind');
    await waitFor(() => s.output().includes('KEPT'), 'the answer', { context });
    const first = p.state(name).session_id;
    await waitFor(() => {
      const file = findTranscript(p.home.configDir, first);
      return file && fs.readFileSync(file, 'utf8').includes('KEPT');
    }, 'the answer in the transcript');

    const restarted = await p.agentbox(['restart', name]);
    expect(restarted.stdout).toContain('resuming its session');
    await spawned(name, 2);
    expect(logEvents(p, name, 'claude_spawn')[1]).toMatchObject({ mode: 'resume', session: first });
    await idle(name);
    await p.agentbox(['restart', name, '--fresh']);
    await spawned(name, 3);
    const fresh = logEvents(p, name, 'claude_spawn')[2]!;
    expect(fresh.mode).toBe('fresh');
    expect(fresh.session).not.toBe(first);
    await idle(name);
    expect(await stateOf(name)).toMatchObject({
      restart_count: 2,
      policy_state: 'healthy',
      session_id: fresh.session,
    });
    expect(logEvents(p, name, 'policy')).toEqual([]);
    await p.agentbox(['stop', name]);
    expect(await s.exited).toBe(0);
    await expectNoProcessesLeft(p.tag);
  }, 90_000);

  it('a claude killed before its first message starts afresh under a new id (there is nothing to resume)', async () => {
    config('interactive:\n  restart_delay: 50ms\n');
    const { s, name } = await openSession();
    await idle(name);
    const { session_id: first, claude_pid: pid } = p.state(name);
    process.kill(pid, 'SIGKILL');
    await spawned(name, 2);
    expect(logEvents(p, name, 'resume_unavailable')).toEqual([{ session: first }]);
    const second = logEvents(p, name, 'claude_spawn')[1]!;
    expect(second.mode).toBe('fresh');
    expect(second.session).not.toBe(first);
    await waitFor(async () => (await stateOf(name)).idle === true, 'the new claude to be idle', { context });
    expect((await stateOf(name)).session_id).toBe(second.session);
    await p.agentbox(['stop', name]);
    expect(await s.exited).toBe(0);
    await expectNoProcessesLeft(p.tag);
  }, 60_000);

  it('a claude that always fails goes transient → flapping → halted, visible in state, and says how to resume', async () => {
    const fake = fakeClaude('process.stderr.write("cannot start\\n"); process.exit(3);');
    config(
      'interactive:\n  restart_delay: 50ms\n  flapping_delay: 1500ms\n  flap_window: 60s\n  flap_threshold: 3\n  halt_after: 5\n',
    );
    const before = p.runs().length;
    const s = start([], { AGENTBOX_CLAUDE_BIN: fake.bin });
    const name = await newRun(before);
    await waitFor(
      () => logEvents(p, name, 'policy').some((e) => e.state === 'flapping'),
      'the policy to flap',
      { context },
    );
    const flapping = await stateOf(name);
    expect(flapping.policy_state).toBe('flapping');
    expect(flapping.last_exit).toMatchObject({ code: 3 });
    const code = await s.exited;
    expect(code).toBe(1);

    const policy = logEvents(p, name, 'policy');
    expect(policy.map((e) => e.state)).toEqual(['transient', 'transient', 'flapping', 'flapping', 'halted']);
    expect(policy.map((e) => e.delay_ms)).toEqual(['50', '50', '1500', '1500', undefined]);
    expect(logEvents(p, name, 'claude_spawn')).toHaveLength(5);
    expect(s.output()).toContain('claude failed 5 times in a row');
    expect(s.output()).toContain(`agentbox start --resume ${name.slice(-6)}`);
    const state = p.state(name);
    expect(state.status).toBe('CRASHED');
    expect(state.failure.message).toContain('failed 5 times');
    await expectNoProcessesLeft(p.tag);
  }, 60_000);

  it('a resize of the terminal reaches claude inside the pty; the environment is the whitelist; --workdir sets where claude runs', async () => {
    const envFile = path.join(p.home.home, 'fake-env.json');
    const fake = fakeClaude(`
const fs = require('node:fs');
fs.writeFileSync(${JSON.stringify(envFile)}, JSON.stringify({ env: process.env, cwd: process.cwd() }));
const show = () => process.stdout.write('SIZE ' + process.stdout.columns + 'x' + process.stdout.rows + '\\r\\n');
show();
process.on('SIGWINCH', show);
process.on('SIGTERM', () => process.exit(143));
setInterval(() => {}, 1000);`);
    const sub = path.join(p.repo.dir, 'packages/app');
    fs.mkdirSync(sub, { recursive: true });
    const before = p.runs().length;
    const s = start(['--workdir', 'packages/app'], {
      AGENTBOX_CLAUDE_BIN: fake.bin,
      AWS_SECRET_ACCESS_KEY: 'leak-me-not',
      GITHUB_TOKEN: 'ghp_leak',
      SOME_RANDOM_VAR: 'nope',
    });
    const name = await newRun(before);
    await waitFor(() => s.output().includes('SIZE 100x30'), 'the first size', { context });
    s.resize(132, 41);
    await waitFor(() => s.output().includes('SIZE 132x41'), 'the new size inside the pty', { context });
    expect(logEvents(p, name, 'resize').at(-1)).toMatchObject({ cols: '132', rows: '41' });

    const seen = JSON.parse(fs.readFileSync(envFile, 'utf8')) as {
      env: Record<string, string>;
      cwd: string;
    };
    expect(seen.env.AWS_SECRET_ACCESS_KEY).toBeUndefined();
    expect(seen.env.GITHUB_TOKEN).toBeUndefined();
    expect(seen.env.SOME_RANDOM_VAR).toBeUndefined();
    expect(seen.env.PWD).toBe(sub);
    expect(seen.cwd).toBe(sub);
    expect(logEvents(p, name, 'cwd_resolved')).toEqual([{ path: sub, source: 'cli_flag' }]);
    expect(seen.env.HOME).toBe(p.env.HOME);
    expect(seen.env.AGENTBOX_RUN).toBe(name);
    expect(seen.env.AGENTBOX_TOKEN).toBeUndefined();
    expect(seen.env.CLAUDE_CONFIG_DIR).toBe(p.env.CLAUDE_CONFIG_DIR);

    await p.agentbox(['stop', name]);
    expect(await s.exited).toBe(0);
    await expectNoProcessesLeft(p.tag);
  }, 60_000);

  it('a clean exit asks: [r] restarts (resuming), [q] ends the session', async () => {
    const fake = fakeClaude('process.stdout.write("bye\\r\\n"); process.exit(0);');
    const before = p.runs().length;
    const s = start([], { AGENTBOX_CLAUDE_BIN: fake.bin });
    const name = await newRun(before);
    await waitFor(() => s.output().includes('Restart it?'), 'the question', { context });
    s.write('r');
    await spawned(name, 2);
    await waitFor(() => s.output().split('Restart it?').length === 3, 'the question again', { context });
    s.write('q');
    expect(await s.exited).toBe(0);
    // agentbox's way back in is the last thing shown (the bell after it shows nothing).
    const shown = s.output().replace(/\u001b\]9;[^\u0007]*\u0007|\u0007/g, '');
    expect(shown.trimEnd().split('\n').at(-1)?.trim()).toBe(
      `→ take it up again with: agentbox start --resume ${name.slice(-6)}`,
    );
    expect(logEvents(p, name, 'user_action').map((e) => e.action)).toEqual(['restart', 'quit']);
    expect(p.state(name).status).toBe('DONE');
    await expectNoProcessesLeft(p.tag);
  }, 60_000);

  it('a socket left by a supervisor that died is detected: clients say so, the watchdog removes it, start --resume takes over', async () => {
    const fake = fakeClaude('setInterval(() => {}, 1000);');
    const before = p.runs().length;
    const s = start([], { AGENTBOX_CLAUDE_BIN: fake.bin });
    const name = await newRun(before);
    await spawned(name);
    const socket = await waitFor(() => p.state(name).socket_path as string, 'the socket in state.json');
    await waitFor(() => fs.existsSync(socket), 'the socket file');
    process.kill(s.pid, 'SIGKILL');
    await s.exited;
    // The supervisor is gone; claude lost its terminal with it.
    await expectNoProcessesLeft(p.tag);
    expect(fs.existsSync(socket)).toBe(true);

    // The client alone (watchdog off) finds nobody answering on the socket.
    const state = await p.agentbox(['state', name], { env: { AGENTBOX_WATCHDOG: '0' } });
    expect(state.code).toBe(2);
    expect(state.stderr).toContain(`cannot reach the run's supervisor at ${socket} (ECONNREFUSED)`);
    expect(state.stderr).toContain('the session is not running');
    expect(fs.existsSync(socket)).toBe(true);
    // The watchdog, before any command, marks the session CRASHED and removes its socket.
    const watched = await p.agentbox(['state', name]);
    expect(watched.code).toBe(2);
    expect(watched.stderr).toContain(
      `agentbox: watchdog: run ${name} is CRASHED: the supervisor (pid ${s.pid}) is gone`,
    );
    expect(watched.stderr).toContain(`session ${name} is not running (CRASHED: the supervisor`);
    expect(watched.stderr).toContain(`agentbox start --resume ${name.slice(-6)}`);
    expect(fs.existsSync(socket)).toBe(false);
    expect(p.state(name)).toMatchObject({ status: 'CRASHED', socket_path: null });

    const again = start(['--resume', name], { AGENTBOX_CLAUDE_BIN: fake.bin });
    await spawned(name, 2);
    const resumed = await stateOf(name);
    expect(resumed.running).toBe(true);
    expect(p.state(name)).toMatchObject({ status: 'ACTIVE', socket_path: socket });
    await p.agentbox(['stop', name]);
    expect(await again.exited).toBe(0);
    expect(fs.existsSync(socket)).toBe(false);
    await expectNoProcessesLeft(p.tag);
  }, 60_000);

  it('closing the terminal (SIGHUP) ends the session cleanly: claude stopped, the run DONE, the terminal restored', async () => {
    const fake = fakeClaude(
      "process.on('SIGTERM', () => process.exit(143)); process.stdout.write('READY\\r\\n'); setInterval(() => {}, 1000);",
    );
    const before = p.runs().length;
    const s = start([], { AGENTBOX_CLAUDE_BIN: fake.bin });
    const name = await newRun(before);
    await waitFor(() => s.output().includes('READY'), 'the fake claude', { context });
    process.kill(s.pid, 'SIGHUP');
    expect(await s.exited).toBe(0);
    expect(p.state(name)).toMatchObject({ status: 'DONE', claude_pid: null });
    const index = fs.readFileSync(path.join(p.repo.dir, '.agents/INDEX.jsonl'), 'utf8');
    expect(index).toContain('stopped by the terminal closing (SIGHUP)');
    // Whatever claude switched on (alternate screen, mouse, bracketed paste) is switched off.
    expect(s.output()).toContain('\x1b[?1049l');
    expect(s.output()).toContain('\x1b[?2004l');
    await expectNoProcessesLeft(p.tag);
  }, 60_000);

  it('a bad --workdir or interactive.cwd is an error naming its source, and no run is created', async () => {
    const before = p.runs().length;
    const s = start(['--workdir', 'no/such/dir']);
    expect(await s.exited).toBe(2);
    expect(s.output()).toContain('--workdir flag: path does not exist');
    expect(s.output()).toContain(path.join(p.repo.dir, 'no/such/dir'));

    config('interactive:\n  cwd: README.md\n');
    const t = start();
    expect(await t.exited).toBe(2);
    expect(t.output()).toContain('config interactive.cwd: path is not a directory');
    expect(p.runs()).toHaveLength(before);
    expect(processesWithTag(p.tag)).toEqual([]);
  }, 30_000);

  it('without a terminal, start refuses and says what to use instead', async () => {
    const result = await p.agentbox(['start']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('needs a terminal');
    expect(result.stderr).toContain('agentbox scout|plan|fix');
  });

  async function stateOf(name: string): Promise<Record<string, any>> {
    const result = await p.agentbox(['state', name, '--json']);
    if (result.code !== 0) return {};
    return JSON.parse(result.stdout);
  }
});
