import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { editConfigText } from '../../src/config/edit.js';
import { bash, text } from '../fixtures/model-server/index.js';
import { prepareInteractiveConfig, TEST_API_KEY } from '../helpers/claude.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project, trustAsIs } from '../helpers/project.js';
import { type PtySession, sleep, startPty, waitFor } from '../helpers/pty.js';

/**
 * Issue 14 item 10: a person hears when they are needed. When a run ends (foreground or detached)
 * or an interactive session waits, the terminal that started it rings (BEL; OSC 9 where the
 * terminal shows it) and `runs.notify` gets the outcome as JSON on its standard input; a failing
 * or hanging command is recorded and changes nothing about the run.
 */
describe('notifications: the bell and runs.notify', () => {
  let p: Project;
  let out: string;
  let session: PtySession | undefined;
  const yaml = () => path.join(p.repo.dir, 'agentbox.yaml');
  let pristine: string;
  const configure = (runs: Record<string, unknown>) =>
    fs.writeFileSync(
      yaml(),
      editConfigText(
        pristine,
        Object.entries(runs).map(([key, value]) => ({ section: 'runs', key, value })),
      ),
    );
  const received = () =>
    fs.existsSync(out)
      ? fs
          .readFileSync(out, 'utf8')
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line))
      : [];

  beforeAll(async () => {
    p = await project({ files: { 'src/app.js': 'module.exports = 1;\n' } });
    prepareInteractiveConfig({
      configDir: p.home.configDir,
      projectDirs: [p.repo.dir],
      apiKey: TEST_API_KEY,
    });
    pristine = fs.readFileSync(path.join(p.repo.dir, 'agentbox.yaml'), 'utf8');
    out = path.join(p.repo.dir, '..', `notify-${path.basename(p.repo.dir)}.jsonl`);
  });
  afterEach(() => {
    if (session) session.kill();
    session = undefined;
    fs.writeFileSync(yaml(), pristine);
    fs.rmSync(out, { force: true });
  });
  afterAll(async () => p?.cleanup());

  const fixRules = (task: string) =>
    p.server.setRules([
      { when: { anyText: task, turn: 0 }, reply: bash("printf 'module.exports = 2;\\n' > src/app.js") },
      { when: { anyText: task }, reply: text('app.js returns 2.') },
    ]);

  it('a foreground fix run: runs.notify gets the outcome as JSON on its stdin', async () => {
    configure({ notify: `cat >> ${out}` });
    const task = 'TASK-NOTIFY foreground';
    fixRules(task);
    const r = await p.agentbox(['fix', task]);
    expect(r.code, r.stderr).toBe(0);
    const name = p.newest();
    const id = name.slice(-6);
    expect(received()).toEqual([
      {
        event: 'ended',
        run: name,
        id,
        type: 'fix',
        status: 'REVIEW',
        failure: null,
        task,
        duration_ms: expect.any(Number),
        cost_usd: expect.any(Number),
        tool_calls: 1,
        changes: 1,
        report: path.join(p.runDir(name), 'report.md'),
        next: `agentbox diff ${id}, then agentbox merge ${id}`,
      },
    ]);
    expect(p.events(name).some((e) => e.event === 'notified' && e.for === 'ended')).toBe(true);
    // Piped output gets no bell.
    expect(r.stdout).not.toContain('\u0007');
  });

  it('a detached run notifies too (no terminal: no bell, the command still runs)', async () => {
    configure({ notify: `cat >> ${out}` });
    const task = 'TASK-NOTIFY detached';
    fixRules(task);
    const started = await p.agentbox(['fix', task, '--detach', '--json']);
    const name = JSON.parse(started.stdout).run as string;
    await waitFor(() => received().length === 1, 'the notification', { timeoutMs: 90_000 });
    expect(received()[0]).toMatchObject({ event: 'ended', run: name, status: 'REVIEW' });
    expect(p.read(name, 'raw/agentbox.log')).not.toContain('\u0007');
  });

  it('a failing command is recorded and said; the run and its exit code are unchanged', async () => {
    configure({ notify: 'echo boom >&2; exit 3' });
    const task = 'TASK-NOTIFY failing';
    p.server.setRules([{ when: { anyText: task }, reply: text('answer') }]);
    const r = await p.agentbox(['scout', task]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('agentbox: runs.notify failed (exit code 3): boom');
    const name = p.newest();
    expect(p.state(name).status).toBe('DONE');
    expect(p.events(name).find((e) => e.event === 'notify_failed')).toMatchObject({
      for: 'ended',
      exit_code: 3,
      timed_out: false,
      stderr: 'boom',
    });
  });

  it('a command that hangs is killed at runs.notify_timeout, children included', async () => {
    configure({ notify: `sleep 60 & echo started-$$ >> ${out}.pids; sleep 60`, notify_timeout: '1s' });
    const task = 'TASK-NOTIFY hanging';
    p.server.setRules([{ when: { anyText: task }, reply: text('answer') }]);
    const startedAt = Date.now();
    const r = await p.agentbox(['scout', task]);
    expect(r.code).toBe(0);
    // Under the 60 s the command would take, however slow the machine.
    expect(Date.now() - startedAt).toBeLessThan(55_000);
    expect(r.stderr).toContain('agentbox: runs.notify failed (stopped after 1 s)');
    expect(p.events(p.newest()).find((e) => e.event === 'notify_failed')).toMatchObject({
      timed_out: true,
      exit_code: null,
    });
    await expectNoProcessesLeft(p.tag);
    fs.rmSync(`${out}.pids`, { force: true });
  });

  it('what the command leaves running, even in a session of its own, is stopped; the run does not wait for it', async () => {
    // Before notify used the one child owner, the escaped sleep held the command's stderr open
    // and agentbox waited for it (60 s here, past the timeout's group kill, which cannot reach it).
    configure({ notify: `setsid sleep 60 & cat >> ${out}` });
    const task = 'TASK-NOTIFY leaves a process';
    p.server.setRules([{ when: { anyText: task }, reply: text('answer') }]);
    const startedAt = Date.now();
    const r = await p.agentbox(['scout', task]);
    expect(r.code, r.stderr).toBe(0);
    expect(Date.now() - startedAt).toBeLessThan(55_000);
    expect(received()).toMatchObject([{ event: 'ended', status: 'DONE', task }]);
    expect(p.events(p.newest()).some((e) => e.event === 'notified')).toBe(true);
    await expectNoProcessesLeft(p.tag);
  });

  it('in a terminal the run rings it: BEL, and OSC 9 (OSC 99 in kitty) where the terminal shows notifications', async () => {
    const task = 'TASK-NOTIFY bell';
    p.server.setRules([{ when: { anyText: task }, reply: text('answer') }]);
    const plain = startPty(['scout', task], { cwd: p.repo.dir, env: { ...p.env, TERM_PROGRAM: '' } });
    expect(await plain.exited).toBe(0);
    expect(plain.output()).toContain('\u0007');
    expect(plain.output()).not.toContain('\u001b]9;');
    const iterm = startPty(['scout', task], {
      cwd: p.repo.dir,
      env: { ...p.env, TERM_PROGRAM: 'iTerm.app' },
    });
    expect(await iterm.exited).toBe(0);
    const id = p.newest().slice(-6);
    expect(iterm.output()).toContain(`\u001b]9;agentbox: ${id} DONE — ${task}\u0007`);
    // kitty says who it is in TERM, and shows its own OSC 99 instead.
    const kitty = startPty(['scout', task], {
      cwd: p.repo.dir,
      env: { ...p.env, TERM_PROGRAM: '', TERM: 'xterm-kitty' },
    });
    expect(await kitty.exited).toBe(0);
    const kittyId = p.newest().slice(-6);
    expect(kitty.output()).toContain(`\u001b]99;;agentbox: ${kittyId} DONE — ${task}\u001b\\\u0007`);
    expect(kitty.output()).not.toContain('\u001b]9;');
    configure({ notify_bell: false });
    const quiet = startPty(['scout', task], {
      cwd: p.repo.dir,
      env: { ...p.env, TERM_PROGRAM: 'iTerm.app' },
    });
    expect(await quiet.exited).toBe(0);
    expect(quiet.output()).not.toContain('\u0007');
  });

  it('an interactive session notifies when claude waits for the person, and when it ends', async () => {
    configure({ notify: `cat >> ${out}` });
    p.server.setRules([
      { when: { lastUserText: 'TASK-NOTIFY interactive' }, reply: text('done, your turn') },
    ]);
    const before = p.runs().length;
    trustAsIs(p.repo.dir, p.env);
    session = startPty(['start', 'TASK-NOTIFY interactive'], {
      cwd: p.repo.dir,
      env: { ...p.env, TERM_PROGRAM: 'iTerm.app' },
    });
    await waitFor(() => p.runs().length > before, 'the session run');
    const name = p.newest();
    await waitFor(() => received().some((n) => n.event === 'waiting'), 'the waiting notification', {
      timeoutMs: 60_000,
      context: () => session!.output().slice(-2000),
    });
    expect(received().find((n) => n.event === 'waiting')).toMatchObject({
      event: 'waiting',
      run: name,
      type: 'interactive',
      status: 'ACTIVE',
      next: `answer it in its terminal, or: agentbox inject ${name.slice(-6)} "<text>"`,
    });
    const alert = `\u001b]9;agentbox: ${name.slice(-6)} waits for you — TASK-NOTIFY interactive\u0007\u0007`;
    expect(session.output()).toContain(alert);
    // Rung once claude has redrawn its prompt, not in the middle of its frames (a pty read can
    // split one, and a bell inside an escape sequence would cut it): what comes before it ends no
    // sequence half-way, and whatever claude draws after it (a title redraw on a slow machine)
    // starts a sequence of its own.
    await sleep(1000);
    const [ahead, after] = session.output().split(alert) as [string, string];
    expect(ahead).not.toMatch(/\u001b(\[[0-9;?]*|\][^\u0007\u001b]*)?$/);
    expect(after === '' || after.startsWith('\u001b')).toBe(true);
    expect((await p.agentbox(['stop', name.slice(-6)])).code).toBe(0);
    await session.exited;
    await waitFor(() => received().some((n) => n.event === 'ended'), 'the ended notification');
    expect(received().find((n) => n.event === 'ended')).toMatchObject({
      run: name,
      next: `agentbox start --resume ${name.slice(-6)}`,
    });
    await sleep(100);
    await expectNoProcessesLeft(p.tag);
  }, 120_000);
});
