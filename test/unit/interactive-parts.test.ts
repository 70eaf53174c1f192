import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findTranscript, transcriptHasMessages } from '../../src/claude/transcript.js';
import { resolveCwd } from '../../src/interactive/cwd.js';
import { clearStaleSocket, ipcRequest, startIpcServer } from '../../src/interactive/ipc.js';
import { formatFields, logLine, SessionLog } from '../../src/interactive/log.js';
import { socketPathFor } from '../../src/interactive/session.js';
import { tempDir } from '../helpers/git-repo.js';

let dir: string;
beforeEach(() => {
  dir = tempDir('agentbox-interactive-');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the working directory of a session', () => {
  const base = () => ({ flag: undefined, config: null, repoRoot: dir, invocationCwd: dir });

  it('is the flag, then the config, then the repository root: each named as the source', () => {
    fs.mkdirSync(path.join(dir, 'a/b'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'c'));
    expect(resolveCwd(base())).toEqual({ path: dir, source: 'repo_root' });
    expect(resolveCwd({ ...base(), config: 'c' })).toEqual({ path: path.join(dir, 'c'), source: 'config' });
    expect(resolveCwd({ ...base(), config: 'c', flag: 'b', invocationCwd: path.join(dir, 'a') })).toEqual({
      path: path.join(dir, 'a/b'),
      source: 'cli_flag',
    });
  });

  it('a bad value is an error naming its source, never a fallback to the next one', () => {
    fs.writeFileSync(path.join(dir, 'file'), '');
    expect(() => resolveCwd({ ...base(), flag: 'nope', config: '.' })).toThrow(
      `--workdir flag: path does not exist: ${path.join(dir, 'nope')}`,
    );
    expect(() => resolveCwd({ ...base(), config: 'file' })).toThrow(
      `config interactive.cwd: path is not a directory: ${path.join(dir, 'file')}`,
    );
  });

  it("the config's folder lies inside the repository (a cloned repository's value applies untrusted); --workdir anywhere", () => {
    const outside = tempDir('agentbox-outside-');
    fs.mkdirSync(path.join(dir, 'sub'));
    fs.symlinkSync(outside, path.join(dir, 'out'));
    for (const config of ['..', outside, 'out', 'sub/../..'])
      expect(() => resolveCwd({ ...base(), config }), config).toThrow(
        /config interactive.cwd: .* is not inside the repository/,
      );
    expect(resolveCwd({ ...base(), config: 'sub' }).path).toBe(path.join(dir, 'sub'));
    expect(resolveCwd({ ...base(), config: '.' }).path).toBe(dir);
    expect(resolveCwd({ ...base(), flag: outside }).path).toBe(outside);
  });

  it('resolves symlinks once, so PWD and the real path agree', () => {
    fs.mkdirSync(path.join(dir, 'real'));
    fs.symlinkSync(path.join(dir, 'real'), path.join(dir, 'link'));
    expect(resolveCwd({ ...base(), flag: 'link' }).path).toBe(path.join(dir, 'real'));
  });
});

describe('the session log', () => {
  it('writes `[<epoch>] [supervisor] <event> key=value`, quoting values with spaces', () => {
    expect(logLine(1_795_280_798_123, 'claude_spawn', { pid: 42, mode: 'resume' })).toBe(
      '[1795280798] [supervisor] claude_spawn pid=42 mode=resume\n',
    );
    expect(formatFields({ reason: 'a b', n: null, skip: undefined, obj: { a: 1 } })).toBe(
      'reason="a b" n=null obj="{\\"a\\":1}"',
    );
  });

  it('appends whole lines and never throws when the file cannot be written', () => {
    const log = new SessionLog(path.join(dir, 'supervisor.log'), () => 5000);
    log.write('one');
    log.write('two', { x: 1 });
    expect(fs.readFileSync(path.join(dir, 'supervisor.log'), 'utf8')).toBe(
      '[5] [supervisor] one\n[5] [supervisor] two x=1\n',
    );
    expect(() => new SessionLog(path.join(dir, 'missing/dir/log')).write('x')).not.toThrow();
  });
});

describe('the control socket', () => {
  it('is mode 0600 and answers requests; unknown methods and bad JSON get an error, not a crash', async () => {
    const socket = path.join(dir, 'supervisor.sock');
    const calls: string[] = [];
    const server = await startIpcServer(socket, (method, params) => {
      calls.push(method);
      if (method === 'inject' && !params.text) throw new Error('inject needs a non-empty "text"');
      return { method, params };
    });
    try {
      expect(fs.statSync(socket).mode & 0o777).toBe(0o600);
      expect(await ipcRequest(socket, 'state')).toEqual({ method: 'state', params: {} });
      await expect(ipcRequest(socket, 'inject', {})).rejects.toThrow(
        `the run's supervisor refused inject: inject needs a non-empty "text"`,
      );
      const raw = await rawExchange(socket, 'not json\n{"id":7,"method":"reboot"}\n', 2);
      expect(raw[0]).toMatchObject({ id: null, ok: false });
      expect(raw[1]).toEqual({ id: 7, ok: false, error: 'unknown method "reboot"' });
      expect(calls).toEqual(['state', 'inject']);
    } finally {
      await server.close();
    }
    expect(fs.existsSync(socket)).toBe(false);
  });

  it('a socket file nobody listens on (its supervisor died) is removed; a live one is refused', async () => {
    const socket = path.join(dir, 'supervisor.sock');
    // A supervisor in another process, killed without cleaning up.
    const child = spawn(
      process.execPath,
      ['-e', `require('node:net').createServer().listen(${JSON.stringify(socket)}, () => console.log('up'))`],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    await new Promise((resolve) => child.stdout.once('data', resolve));
    await expect(clearStaleSocket(socket)).rejects.toThrow(
      `another agentbox supervisor is listening on ${socket}`,
    );
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(fs.existsSync(socket)).toBe(true);
    await expect(ipcRequest(socket, 'state')).rejects.toThrow('ECONNREFUSED');
    expect(await clearStaleSocket(socket)).toBe(true);
    expect(fs.existsSync(socket)).toBe(false);
    expect(await clearStaleSocket(socket)).toBe(false);
  });

  it('goes to a short path when the run folder would overflow a Unix socket path', () => {
    expect(socketPathFor('/repo/.agents/runs/r', 'abc123', '/tmp')).toBe(
      '/repo/.agents/runs/r/supervisor.sock',
    );
    const deep = `/${'x'.repeat(120)}/.agents/runs/r`;
    expect(socketPathFor(deep, 'abc123', '/tmp')).toBe('/tmp/agentbox-abc123.sock');
  });
});

describe('resuming a session', () => {
  it('finds the transcript in any project folder and resumes only one that holds a message', () => {
    const projects = path.join(dir, 'projects/-some-project');
    fs.mkdirSync(projects, { recursive: true });
    const id = '363b6a28-3e0b-413f-ae83-582cc6237329';
    expect(findTranscript(dir, id)).toBeNull();
    const file = path.join(projects, `${id}.jsonl`);
    fs.writeFileSync(
      file,
      `${JSON.stringify({ type: 'mode', mode: 'normal', sessionId: id })}\n{"type":"last-prompt","lastPrompt":"\\"message\\" type user"}\n{"type":"user","mess`,
    );
    expect(findTranscript(dir, id)).toBe(file);
    // Metadata and a line cut short by the crash: nothing to resume.
    expect(transcriptHasMessages(file)).toBe(false);
    fs.appendFileSync(
      file,
      `\n${JSON.stringify({ type: 'user', message: { role: 'user', content: 'hi' } })}\n`,
    );
    expect(transcriptHasMessages(file)).toBe(true);
    expect(transcriptHasMessages(path.join(dir, 'missing.jsonl'))).toBe(false);
  });
});

/** Sends raw bytes to a socket and collects `count` answer lines. */
function rawExchange(socket: string, data: string, count: number): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const client = net.connect(socket);
    let buffer = '';
    client.setEncoding('utf8');
    client.on('connect', () => client.write(data));
    client.on('data', (chunk: string) => {
      buffer += chunk;
      const lines = buffer.split('\n').filter(Boolean);
      if (lines.length >= count) {
        client.end();
        resolve(lines.map((l) => JSON.parse(l)));
      }
    });
    client.on('error', reject);
  });
}
