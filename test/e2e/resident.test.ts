import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { answers } from '../../src/resident/place.js';
import { commandDirName } from '../../src/slash/render.js';
import { bash, text } from '../fixtures/model-server/index.js';
import { AGENTBOX_BIN, runAgentbox } from '../helpers/bin.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { startPty } from '../helpers/pty.js';
import { startServe } from '../helpers/serve.js';

/**
 * The resident agentbox (`agentbox serve`, docs/resident.md): the person's scout, fix and the rest
 * run in one warm process, handed over a Unix socket; the client relays output, signals and the exit
 * code. Real Claude Code, its sandbox, the scripted model.
 */
describe('agentbox serve (real Claude Code and sandbox)', () => {
  let p: Project;
  let server: ChildProcess;
  let log = '';
  let socket = '';
  const served = () => log.split('\n').filter((line) => / for pid \d+ in /.test(line));

  const startClient = (args: string[], env: Record<string, string> = {}) => {
    const child = spawn(process.execPath, [AGENTBOX_BIN, ...args], {
      cwd: p.repo.dir,
      env: { ...p.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    return { child, exited, output: () => out };
  };
  /** Another `agentbox serve` in the repository; its standard output so far. */
  const startServer = () => startServe(p);
  const waitFor = async (what: () => boolean, ms = 30_000) => {
    const deadline = Date.now() + ms;
    while (!what() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(what()).toBe(true);
  };
  /** A fix whose model answers its first turn with `first`, then never: it waits until stopped. */
  const waitingFix = async (task: string, env: Record<string, string> = {}) => {
    p.server.setRules([
      { when: { anyText: task, turn: 0 }, reply: bash('echo started > started.txt') },
      { when: { anyText: task, turn: 1 }, reply: { text: 'never arrives', delayMs: 120_000 } },
    ]);
    const client = startClient(['fix', task], env);
    await waitFor(() => p.server.requests.some((r) => r.view.turn === 1 && r.view.allText.includes(task)));
    return client;
  };

  beforeAll(async () => {
    p = await project({ files: { 'src/greet.js': 'module.exports = (n) => "hello " + n;\n' } });
    server = startServe(p, (d) => {
      log += d;
    }).child;
    await waitFor(() => log.includes('agentbox serve: ready'));
    socket = /socket {2}(\S+)/.exec(log)![1]!;
  });
  afterAll(async () => {
    if (server && server.exitCode === null) server.kill('SIGKILL');
    const tag = p?.tag;
    await p?.cleanup();
    if (tag) await expectNoProcessesLeft(tag);
  });

  it('runs a scout for its client: the same output and exit code, the client as the run’s process', async () => {
    p.server.setRules([{ when: { anyText: 'TASK-SERVED' }, reply: text('`greet(n)` returns hello n.') }]);
    const result = await p.agentbox(['scout', 'TASK-SERVED what does greet return?']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/✓ \S+ — DONE/);
    expect(result.stdout).toContain('`greet(n)` returns hello n.');
    expect(served()).toHaveLength(1);
    const pid = Number(/ for pid (\d+) in /.exec(served()[0]!)![1]);
    const name = p.newest();
    expect(p.state(name).pid).toBe(pid);
    expect(pid).not.toBe(server.pid);
    expect(served()[0]).toContain(`scout for pid ${pid} in ${p.repo.dir}: exit 0`);
    // Its release comes after the exit code was sent, and still happens: the run's slash commands
    // and private area are gone.
    const meta = parse(fs.readFileSync(path.join(p.runDir(name), 'meta.yaml'), 'utf8'));
    const commands = path.join(p.repo.dir, '.claude', 'commands', commandDirName(String(meta.run_id)));
    await waitFor(() => !fs.existsSync(commands));
    expect(p.events(name).some((e) => e.event === 'release_failed')).toBe(false);
    // INDEX.md, the people's view, is rendered after the reply too.
    const index = path.join(p.repo.dir, '.agents', 'INDEX.md');
    await waitFor(() => fs.readFileSync(index, 'utf8').includes(`[${name}](runs/${name}/) | scout | DONE |`));

    // AGENTBOX_RESIDENT=0: the command runs itself.
    const local = await p.agentbox(['scout', 'TASK-SERVED again'], { env: { AGENTBOX_RESIDENT: '0' } });
    expect(local.code, local.stderr).toBe(0);
    expect(served()).toHaveLength(1);

    // A relative AGENTBOX_CONFIG names a file in the client's folder, not the server's (it was
    // "AGENTBOX_CONFIG names abconf.yaml, which does not exist", or another file of that name).
    const sub = path.join(p.repo.dir, '..', `client-folder-${process.pid}`);
    fs.mkdirSync(sub);
    fs.writeFileSync(path.join(sub, 'abconf.yaml'), "# the person's own settings\n");
    try {
      const relative = await runAgentbox(['-C', p.repo.dir, 'scout', 'TASK-SERVED relative config'], {
        cwd: sub,
        env: { ...p.env, AGENTBOX_CONFIG: 'abconf.yaml' },
      });
      expect(relative.code, relative.stderr).toBe(0);
      expect(served()).toHaveLength(2);
    } finally {
      fs.rmSync(sub, { recursive: true, force: true });
    }
  });

  it("a read-only run ends at claude's result: its client is answered while claude shuts down, which the release awaits", async () => {
    // The person's own SessionEnd hook makes claude's shutdown (after its result line) last a second,
    // then records what the run's state said meanwhile; the second time it also kills claude outright.
    const settings = path.join(p.env.CLAUDE_CONFIG_DIR!, 'settings.json');
    const seen = path.join(p.repo.dir, '..', `session-end-${process.pid}`);
    const hook = (kill: boolean) =>
      `sleep 1; grep -o '"status": *"[A-Z]*"' "$AGENTBOX_RUN_DIR/state.json" > '${seen}'${kill ? '; kill -9 $PPID' : ''}`;
    const withHook = (kill: boolean) =>
      fs.writeFileSync(
        settings,
        JSON.stringify({ hooks: { SessionEnd: [{ hooks: [{ type: 'command', command: hook(kill) }] }] } }),
      );
    p.server.setRules([{ when: { anyText: 'TASK-RESULT-END' }, reply: text('The answer.') }]);
    try {
      // Served: the client has its exit code before the hook has run; the run is DONE by then.
      withHook(true);
      const client = startClient(['scout', 'TASK-RESULT-END served']);
      expect(await client.exited, client.output()).toBe(0);
      expect(fs.existsSync(seen)).toBe(false);
      const name = p.newest();
      expect(p.state(name).status).toBe('DONE');
      await waitFor(() => fs.existsSync(seen) && fs.readFileSync(seen, 'utf8').includes('DONE'));
      // claude killed after the run's end: the run stays DONE, and it is logged.
      await waitFor(() => p.events(name).some((e) => e.event === 'claude_exit_after_end'));
      expect(p.events(name).find((e) => e.event === 'claude_exit_after_end')).toMatchObject({
        code: null,
        signal: 'SIGKILL',
      });
      expect(p.state(name).status).toBe('DONE');
      const meta = parse(fs.readFileSync(path.join(p.runDir(name), 'meta.yaml'), 'utf8'));
      await waitFor(
        () =>
          !fs.existsSync(path.join(p.repo.dir, '.claude', 'commands', commandDirName(String(meta.run_id)))),
      );

      // Run here: the command returns once claude has exited (its release), the run recorded before.
      fs.rmSync(seen);
      withHook(false);
      const local = await p.agentbox(['scout', 'TASK-RESULT-END here'], { env: { AGENTBOX_RESIDENT: '0' } });
      expect(local.code, local.stderr).toBe(0);
      expect(fs.readFileSync(seen, 'utf8')).toMatch(/"status": *"DONE"/);
      expect(p.events(p.newest()).some((e) => e.event === 'claude_exit_after_end')).toBe(false);
    } finally {
      fs.rmSync(settings, { force: true });
      fs.rmSync(seen, { force: true });
    }
  });

  it("serves a fix run, whose agent cannot reach the socket by any route (the sandbox hides agentbox's state)", async () => {
    const task = 'TASK-SERVED-FIX reach the resident agentbox';
    // The path is made at run time, as an agent that knows where agentbox keeps it would: a path
    // written out in the command is refused before it runs by Claude Code's own permission rules
    // (agentbox denies its state folder there too), and the kernel is what this test is about.
    const sock = path.basename(socket);
    const dir = "require('path').join(require('os').homedir(),'.local','state','agent'+'box','resident')";
    const report = (route: string) =>
      `.on('connect',()=>console.log('CONNECTED-${route}')).on('error',(e)=>console.log('refused',e.code))`;
    const attempts = [
      `node -e "const net=require('net'); net.connect(require('path').join(${dir},'${sock}'))${report('NODE')}"`,
      `node -e "try { console.log('LISTED', require('fs').readdirSync(${dir})) } catch (e) { console.log('refused', e.code) }"`,
      `python3 -c "import os,socket
p=os.path.join(os.path.expanduser('~'),'.local','state','agent'+'box','resident','${sock}')
try:
  s=socket.socket(socket.AF_UNIX); s.connect(p); print('CONNECTED-PY')
except OSError as e:
  print('refused', e)"`,
      `node -e "require('fs').symlinkSync(${dir},'r'); require('net').connect('r/${sock}')${report('LINK')}"; rm -f r`,
      'echo fixed > fixed.txt',
    ].join('; ');
    p.server.setRules([
      { when: { anyText: task, turn: 0 }, reply: bash(attempts) },
      { when: { anyText: task }, reply: text('done') },
    ]);
    const before = served().length;
    const result = await p.agentbox(['fix', task]);
    expect(result.code, result.stderr).toBe(0);
    expect(served()).toHaveLength(before + 1);
    expect(served()[before]).toMatch(/fix for pid \d+ in .*: exit 0/);
    const name = p.newest();
    expect(p.state(name).status).toBe('REVIEW');
    expect(p.read(name, 'changes.patch')).toContain('+fixed');
    // What the agent saw: every route refused by the kernel — Claude Code's sandbox makes no Unix
    // socket at all (EPERM) and hides agentbox's state folder (ENOENT) — and the refusal logged.
    const answer = p.server.requests.find((r) => r.view.turn === 1 && r.view.allText.includes(task))!;
    const seen = answer.view.lastUserText;
    expect(seen.match(/refused (EPERM|ENOENT)/g)).toHaveLength(3);
    if (spawnSync('python3', ['--version']).status === 0) expect(seen).toContain('refused [Errno 1]');
    expect(seen).not.toMatch(/CONNECTED-(NODE|PY|LINK)|LISTED/);
    expect(p.events(name).some((e) => e.event === 'refused' && e.rule === 'read-fence')).toBe(true);
    // Nothing reached the server but the fix itself.
    expect(log).not.toContain('refused');
  });

  it('Ctrl-C in the client stops the served run cleanly (130), and the server serves on', async () => {
    const { child, exited, output } = await waitingFix('TASK-SERVED-CTRL-C wait');
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    const state = p.state(p.newest());
    expect(state.status).toBe('ABORTED');
    expect(state.failure).toMatchObject({ kind: 'killed', message: 'stopped by Ctrl-C' });
    expect(output()).toContain('ABORTED');
    expect(server.exitCode).toBeNull();
    // The server's log says the code the client exited with (it said the command's own, 1).
    await waitFor(() => / fix for pid \d+ in .*: exit 130 \(/.test(log));
  });

  it('agentbox stop reaches a served run through its client', async () => {
    const { exited } = await waitingFix('TASK-SERVED-STOP wait');
    const name = p.newest();
    const stop = await p.agentbox(['stop', name]);
    expect(stop.code, stop.stderr).toBe(0);
    expect(await exited).toBe(143);
    expect(p.state(name)).toMatchObject({
      status: 'ABORTED',
      failure: { message: 'stopped by agentbox stop' },
    });
  });

  it('a client killed outright: the resident agentbox stops its run', async () => {
    const { child, exited } = await waitingFix('TASK-SERVED-KILLED wait');
    const name = p.newest();
    child.kill('SIGKILL');
    await exited;
    await waitFor(() => p.state(name).status !== 'ACTIVE');
    expect(p.state(name).status).toBe('ABORTED');
    expect(p.state(name).failure.message).toContain('its agentbox process ending');
  });

  it('a stopped server (SIGSTOP) hangs no client: a waiting one says so and Ctrl-C gives up with nothing run; a second Ctrl-C exits at once; continued, it serves on', async () => {
    // Mid-command: the first Ctrl-C goes to the stopped server, the second ends the client.
    const mid = await waitingFix('TASK-FROZEN-MID wait');
    const name = p.newest();
    server.kill('SIGSTOP');
    try {
      const late = startClient(['scout', 'TASK-FROZEN-LATE what is here?']);
      await waitFor(() => late.output().includes('has not taken the command after 3s'), 15_000);
      expect(late.output()).toContain('Ctrl-C gives up, with nothing run');
      late.child.kill('SIGINT');
      expect(await late.exited).toBe(130);
      expect(late.output()).toContain(
        'agentbox: Ctrl-C before the resident agentbox took the command: nothing was run',
      );
      mid.child.kill('SIGINT');
      await new Promise((r) => setTimeout(r, 300));
      mid.child.kill('SIGINT');
      expect(await mid.exited).toBe(130);
      expect(mid.output()).toContain(
        'agentbox: Ctrl-C again: exiting at once; the resident agentbox goes on stopping',
      );
    } finally {
      server.kill('SIGCONT');
    }
    // Continued: the run it served stops cleanly; the command whose client gave up is not run.
    await waitFor(() => p.state(name).status !== 'ACTIVE');
    expect(p.state(name)).toMatchObject({ status: 'ABORTED', failure: { message: 'stopped by Ctrl-C' } });
    await waitFor(() => log.includes('left before its command was taken: not run'));
    // (the served fix's own line, once its clean stop ended: the next test counts the served lines)
    await waitFor(() => served().some((line) => line.includes(`fix for pid ${mid.child.pid} in `)));
    expect(p.server.requests.some((r) => r.view.allText.includes('TASK-FROZEN-LATE'))).toBe(false);
    expect(
      fs.readdirSync(path.join(p.repo.dir, '.agents', 'runs')).some((n) => n.includes('frozen-late')),
    ).toBe(false);
    p.server.setRules([{ when: { anyText: 'TASK-FROZEN-AFTER' }, reply: text('served again') }]);
    const after = await p.agentbox(['scout', 'TASK-FROZEN-AFTER x']);
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout).toContain('served again');
    expect(served().at(-1)).toMatch(/scout for pid \d+ in .*: exit 0/);
  });

  it('refuses, and logs: a request from inside a run, a malformed one, a second server', async () => {
    // A client in a Claude Code session (or a run) runs its command itself, as with no server (it
    // failed whenever a resident was up); the server refuses such a request sent anyway.
    p.server.setRules([{ when: { anyText: 'TASK-SERVED-INSIDE' }, reply: text('ran here') }]);
    const servedFirst = served().length;
    const inside = await p.agentbox(['scout', 'TASK-SERVED-INSIDE x'], { env: { CLAUDECODE: '1' } });
    expect(inside.code, inside.stderr).toBe(0);
    expect(inside.stdout).toContain('ran here');
    expect(served()).toHaveLength(servedFirst);
    const forged = net.connect(socket);
    let forgedReply = '';
    forged.setEncoding('utf8').on('data', (d: string) => {
      forgedReply += d;
    });
    const forgedClosed = new Promise((resolve) => forged.once('close', resolve));
    forged.write(
      `${JSON.stringify({ v: 1, argv: ['scout', 'TASK-SERVED-INSIDE forged'], cwd: p.repo.dir, env: { ...p.env, AGENTBOX_RUN: 'some-run' }, pid: process.pid, tty: { in: false, out: false, err: false }, umask: process.umask() })}\n`,
    );
    await forgedClosed;
    expect(forgedReply).toContain('the resident agentbox refused this command');
    expect(log).toMatch(/refused: the request came from inside agentbox run some-run/);

    // A malformed request, then a good one on the same connection: the first ends it, the second
    // is never run.
    const servedBefore = served().length;
    // (half-open: this end goes on writing after the server has ended its own)
    const raw = net.connect({ path: socket, allowHalfOpen: true });
    raw.on('error', () => {});
    const closed = new Promise((resolve) => raw.once('close', resolve));
    await new Promise((resolve) => raw.once('connect', resolve));
    raw.resume();
    raw.write('{"v":1,"argv":"scout"}\n');
    await waitFor(() => log.includes('a malformed request (argv is not a list of strings)'));
    const smuggled = {
      v: 1,
      argv: ['scout', 'TASK-SERVED-SMUGGLED x'],
      cwd: p.repo.dir,
      env: p.env,
      pid: process.pid,
      tty: { in: false, out: false, err: false },
      umask: process.umask(),
    };
    raw.end(`${JSON.stringify(smuggled)}\n`);
    await closed;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(served()).toHaveLength(servedBefore);
    expect(p.server.requests.some((r) => r.view.allText.includes('TASK-SERVED-SMUGGLED'))).toBe(false);

    // `revise --edit` opens an editor on the client's terminal: handed back, never run here.
    const editing = net.connect(socket);
    let reply = '';
    editing.setEncoding('utf8').on('data', (d: string) => {
      reply += d;
    });
    const editClosed = new Promise((resolve) => editing.once('close', resolve));
    editing.write(`${JSON.stringify({ ...smuggled, argv: ['revise', p.newest(), '--edit'] })}\n`);
    await editClosed;
    expect(reply).toBe('{"local":"terminal"}\n');
    expect(log).toMatch(/handed back to pid \d+: the command uses its terminal/);

    // A client whose umask is not the server's: handed back, and run where its files get its mode.
    p.server.setRules([{ when: { anyText: 'TASK-SERVED-UMASK' }, reply: text('here') }]);
    const before = served().length;
    // (not spawnSync: the scripted model answers from this process)
    const umask = spawn(
      'sh',
      ['-c', `umask 077 && exec "${process.execPath}" "${AGENTBOX_BIN}" scout "TASK-SERVED-UMASK x"`],
      { cwd: p.repo.dir, env: p.env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let said = '';
    umask.stdout.on('data', (d) => {
      said += d;
    });
    umask.stderr.on('data', (d) => {
      said += d;
    });
    expect(await new Promise((resolve) => umask.on('close', resolve)), said).toBe(0);
    expect(said).toContain('here');
    expect(served()).toHaveLength(before);
    expect(log).toMatch(/handed back to pid \d+: its umask 77 is not this process's/);
    expect((fs.statSync(path.join(p.runDir(p.newest()), 'report.md')).mode & 0o077).toString(8)).toBe('0');

    const second = await p.agentbox(['serve']);
    expect(second.code).not.toBe(0);
    expect(second.stderr).toContain('a resident agentbox of this build already serves');
  });

  it('a socket folder open to others is not used, nor served from', async () => {
    const dir = path.dirname(socket);
    fs.chmodSync(dir, 0o755);
    try {
      p.server.setRules([{ when: { anyText: 'TASK-SERVED-OPEN' }, reply: text('local') }]);
      const before = served().length;
      const result = await p.agentbox(['scout', 'TASK-SERVED-OPEN x']);
      expect(result.code, result.stderr).toBe(0);
      expect(served()).toHaveLength(before);
      const second = await p.agentbox(['serve']);
      expect(second.stderr).toContain('refuses its socket folder');
      expect(second.stderr).toContain('it must be 700');
    } finally {
      fs.chmodSync(dir, 0o700);
    }
  });

  it('stops on Ctrl-C (130), its socket removed, no process left', async () => {
    // A client that connected and asked nothing does not hold the server up (it waits 10 s for one).
    const idle = net.connect(socket);
    idle.on('error', () => {});
    await new Promise((resolve) => idle.once('connect', resolve));
    const exited = new Promise<number | null>((resolve) => server.once('close', (code) => resolve(code)));
    const asked = Date.now();
    server.kill('SIGINT');
    // 128 + SIGINT, as any command stopped by Ctrl-C.
    expect(await exited).toBe(130);
    expect(Date.now() - asked).toBeLessThan(5_000);
    expect(fs.existsSync(socket)).toBe(false);
  });

  it('a server killed outright: its client says so (1), and the next command finds the run crashed', async () => {
    const again = startServer();
    server = again.child;
    await waitFor(() => again.output().includes('agentbox serve: ready'));
    const { exited, output } = await waitingFix('TASK-SERVED-SERVER-KILLED wait');
    const name = p.newest();
    server.kill('SIGKILL');
    expect(await exited).toBe(1);
    expect(output()).toContain('the resident agentbox ended before the command did');
    // The watchdog of the next command: the run's process (its client) is gone.
    const status = await p.agentbox(['status']);
    expect(status.stderr).toContain(`watchdog: run ${name} is CRASHED`);
    expect(p.state(name).status).toBe('CRASHED');
    await expectNoProcessesLeft(p.tag);
  });

  it('starts by itself: a command that finds none (the killed one’s socket left) starts one as it exits; --stop stops it', async () => {
    p.server.setRules([{ when: { anyText: 'TASK-AUTO' }, reply: text('auto answer') }]);
    const found = () => fs.readdirSync(path.dirname(socket));
    // From a script (no terminal), by default: none started.
    const scripted = await p.agentbox(['scout', 'TASK-AUTO from a script']);
    expect(scripted.code, scripted.stderr).toBe(0);
    expect(scripted.stderr).not.toContain('resident agentbox');
    expect(await answers(socket)).toBe(false);

    const auto = { env: { AGENTBOX_RESIDENT: '1', AGENTBOX_RESIDENT_IDLE: '5m' } };
    // The first command has a pipe of its starter's open past its standard three (a shell's
    // `2>&1 | cat`): the server it starts does not keep it, so the pipe ends with the command (the
    // pipeline waited the server's whole idle time).
    // (bash's redirection, as a person's shell makes one: node and dash hand theirs over close-on-exec)
    const starter = spawn(
      'bash',
      ['-c', 'exec "$0" "$1" scout "TASK-AUTO first" 200>&3', process.execPath, AGENTBOX_BIN],
      {
        cwd: p.repo.dir,
        env: { ...p.env, ...auto.env },
        stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      },
    );
    const first = { code: null as number | null, stdout: '', stderr: '' };
    starter.stdout!.on('data', (d) => {
      first.stdout += d;
    });
    starter.stderr!.on('data', (d) => {
      first.stderr += d;
    });
    const extra = starter.stdio[3] as net.Socket;
    const extraEnded = new Promise<boolean>((resolve) => {
      extra.on('data', () => {});
      extra.once('close', () => resolve(true));
      setTimeout(() => resolve(false), 15_000);
    });
    first.code = await new Promise((resolve) => starter.on('exit', (code) => resolve(code)));
    expect(first.code, first.stderr).toBe(0);
    expect(await extraEnded).toBe(true);
    expect(first.stdout).toContain('auto answer');
    const pid = Number(/started a resident agentbox \(pid (\d+)\)/.exec(first.stderr)?.[1]);
    expect(first.stderr).toContain('it stops after 5m unused');
    expect(first.stderr).toContain('agentbox serve --stop stops it');
    const logFile = socket.replace(/\.sock$/, '.log');
    await waitFor(() => fs.existsSync(logFile) && fs.readFileSync(logFile, 'utf8').includes('ready'));
    expect(found()).toContain(path.basename(socket));
    // (listening, it took down the mark its starter left for a --stop typed before it listened)
    expect(found()).not.toContain(path.basename(socket).replace(/\.sock$/, '.starting'));
    // Its own session, and none of its starter's secrets (each request brings the client's).
    const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    expect(environ.some((v) => v.startsWith('ANTHROPIC_API_KEY='))).toBe(false);
    expect(environ).toContain(`HOME=${p.env.HOME}`);
    expect(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[3]).toBe(String(pid));

    const second = await p.agentbox(['scout', 'TASK-AUTO second'], auto);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('auto answer');
    expect(second.stderr).not.toContain('started a resident agentbox');
    expect(fs.readFileSync(logFile, 'utf8')).toMatch(/scout for pid \d+ in .*: exit 0/);

    const stop = await p.agentbox(['serve', '--stop']);
    expect(stop.code, stop.stderr).toBe(0);
    expect(stop.stdout).toContain(`the resident agentbox (pid ${pid}) is stopping`);
    expect(stop.stdout).toContain('stopped');
    expect(alive(pid)).toBe(false);
    expect(found()).not.toContain(path.basename(socket));
    expect(fs.readFileSync(logFile, 'utf8')).toMatch(
      /stopping \(agentbox serve --stop from pid \d+\): 0 command/,
    );
    const again = await p.agentbox(['serve', '--stop']);
    expect(again.stdout).toContain('no resident agentbox is running');

    // A person's terminal, nothing set: started too.
    const term = startPty(['scout', 'TASK-AUTO in a terminal'], {
      cwd: p.repo.dir,
      env: { ...p.env, AGENTBOX_RESIDENT: '' },
    });
    // --stop at the notice: it comes as the server is spawned, before it listens; --stop waits for it.
    const notice = /started a resident agentbox \(pid (\d+)\)/;
    for (const deadline = Date.now() + 30_000; !notice.test(term.output()) && Date.now() < deadline; )
      await new Promise((r) => setTimeout(r, 5));
    const termPid = Number(notice.exec(term.output())?.[1]);
    // (held before it listens, as a slow machine's is: node and agentbox's modules take ~100 ms)
    process.kill(termPid, 'SIGSTOP');
    const stopping = p.agentbox(['serve', '--stop']);
    await new Promise((r) => setTimeout(r, 1_000));
    process.kill(termPid, 'SIGCONT');
    const last = await stopping;
    expect(await term.exited).toBe(0);
    expect(term.output()).toContain('auto answer');
    expect(term.output()).toContain('stops after 15m unused');
    expect(last.stdout).toContain(`the resident agentbox (pid ${termPid}) is stopping`);
    expect(last.stdout).toContain('stopped');
    expect(alive(termPid)).toBe(false);
    expect(found().filter((n) => n.endsWith('.starting') || n.endsWith('.sock'))).toEqual([]);
    await expectNoProcessesLeft(p.tag);
  });

  it('a server whose socket is gone stops by itself (two started at once: the later one took the name); --stop says what is wrong with the folder', async () => {
    const { child: orphan, output } = startServer();
    const exited = new Promise<number | null>((resolve) => orphan.once('close', (code) => resolve(code)));
    await waitFor(() => output().includes('agentbox serve: ready'));
    fs.rmSync(socket);
    expect(await exited).toBe(0);
    expect(output()).toContain('stopping (its socket was removed or taken by another server)');
    const dir = path.dirname(socket);
    fs.chmodSync(dir, 0o755);
    try {
      const refused = await p.agentbox(['serve', '--stop']);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('agentbox serve --stop refuses the socket folder');
      expect(refused.stderr).toContain('it must be 700');
    } finally {
      fs.chmodSync(dir, 0o700);
    }
  });

  it('--idle: stops by itself once unused that long; a wrong duration is refused', async () => {
    const started = Date.now();
    const idle = await p.agentbox(['serve', '--idle', '1s']);
    expect(idle.code, idle.stderr).toBe(0);
    expect(idle.stdout).toContain('stop    by itself after 1s unused');
    expect(idle.stdout).toMatch(/stopping \(unused for 1s\): 0 command\(s\) running/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(fs.existsSync(socket)).toBe(false);
    for (const wrong of ['0s', 'soon', '30d']) {
      const refused = await p.agentbox(['serve', '--idle', wrong]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`--idle must be a duration longer than 0 and at most 24d`);
      expect(refused.stderr).toContain(JSON.stringify(wrong));
    }
  });
});

/** Whether `pid` runs (a zombie, whose parent has not reaped it yet, does not). */
function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}
