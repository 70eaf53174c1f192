import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { admit, inheritedDifference, refusal } from '../../src/resident/admit.js';
import { privateDirProblem, socketPath } from '../../src/resident/place.js';
import {
  lineReader,
  MAX_LINE,
  ownNamespaces,
  parseClientMessage,
  parseRequest,
  parseServerMessage,
  parseStopRequest,
  type ServeRequest,
  socketName,
  textMessages,
  usesTerminal,
} from '../../src/resident/protocol.js';
import { invokedCommand } from '../../src/util/argv.js';

const request = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  v: 1,
  argv: ['scout', 'why?'],
  cwd: '/repo',
  env: { HOME: '/home/p' },
  pid: 4242,
  tty: { in: false, out: true, err: true },
  umask: 0o022,
  ...over,
});

describe('the resident wire', () => {
  it('reads messages split anywhere across chunks, and refuses a line past the bound', () => {
    const read = lineReader();
    expect(read('{"out":"a')).toEqual([]);
    expect(read('b"}\n{"exit":0}\n\n{"err"')).toEqual([{ out: 'ab' }, { exit: 0 }]);
    expect(read(':"c"}\n')).toEqual([{ err: 'c' }]);
    const long = lineReader();
    expect(() => long('x'.repeat(MAX_LINE + 1))).toThrow(/more than/);
    expect(() => lineReader()('not json\n')).toThrow();
  });

  it('sends long text in bounded pieces that join back to the text', () => {
    const text = `é${'x'.repeat(600_000)}\n`;
    const lines = textMessages('out', text).trim().split('\n');
    expect(lines.length).toBe(3);
    expect(lines.map((l) => (JSON.parse(l) as { out: string }).out).join('')).toBe(text);
    expect(textMessages('err', '')).toBe('');
  });

  it('takes a well-formed request and names what is wrong with any other', () => {
    expect(parseRequest(request())).toEqual(request());
    const wrong: [Record<string, unknown>, RegExp][] = [
      [request({ v: 2 }), /protocol version 2/],
      [request({ argv: 'scout' }), /argv/],
      [request({ argv: ['scout', 3] }), /argv/],
      [request({ cwd: 'relative' }), /absolute/],
      [request({ env: { A: 1 } }), /env/],
      [request({ env: ['A=1'] }), /env/],
      [request({ pid: 1 }), /pid/],
      [request({ pid: '42' }), /pid/],
      [request({ tty: { in: true } }), /tty/],
      [request({ columns: 0 }), /columns/],
      [request({ umask: 0o1000 }), /umask/],
      [request({ umask: undefined }), /umask/],
      [request({ ns: 4 }), /ns is not a string/],
      [request({ groups: [0, 'wheel'] }), /groups/],
      [request({ groups: 0 }), /groups/],
    ];
    for (const [value, why] of wrong) expect(parseRequest(value)).toMatch(why);
    expect(parseRequest(null)).toBe('not an object');
  });

  it('keeps only the messages each side may send', () => {
    expect(parseClientMessage({ signal: 'SIGINT' })).toEqual({ signal: 'SIGINT' });
    expect(parseClientMessage({ signal: 'SIGKILL' })).toBeNull();
    expect(parseClientMessage({ answer: 'y' })).toEqual({ answer: 'y' });
    expect(parseClientMessage({ exit: 0 })).toBeNull();
    expect(parseServerMessage({ exit: 3 })).toEqual({ exit: 3 });
    expect(parseServerMessage({ exit: 1.5 })).toBeNull();
    expect(parseServerMessage({ ask: 'sure?' })).toEqual({ ask: 'sure?' });
    expect(parseServerMessage({ signal: 'SIGINT' })).toBeNull();
    expect(parseServerMessage({ local: 'umask' })).toEqual({ local: 'umask' });
    expect(parseServerMessage({ stopping: 42, running: 1 })).toEqual({ stopping: 42, running: 1 });
    expect(parseServerMessage({ stopping: 42 })).toBeNull();
  });

  it('takes a stop request only whole: version, pid and environment', () => {
    const stop = { v: 1, stop: true, pid: 4242, env: { HOME: '/home/p' } };
    expect(parseStopRequest(stop)).toEqual(stop);
    for (const wrong of [
      { ...stop, v: 2 },
      { ...stop, stop: 'yes' },
      { ...stop, pid: 1 },
      { ...stop, env: ['A=1'] },
      request(),
      null,
    ])
      expect(parseStopRequest(wrong)).toBeNull();
  });

  it('leaves to the client what uses its terminal: an editor, the help', () => {
    expect(usesTerminal(['revise', 'r1', '--edit'])).toBe(true);
    expect(usesTerminal(['scout', '--help'])).toBe(true);
    expect(usesTerminal(['fix', '-h'])).toBe(true);
    expect(usesTerminal(['revise', 'r1', 'rename x'])).toBe(false);
  });

  it('finds the command past the global -C option', () => {
    expect(invokedCommand(['-C', 'sub', 'fix', 'x'])).toBe('fix');
    expect(invokedCommand(['--cwd=sub', 'scout'])).toBe('scout');
    expect(invokedCommand(['-Csub', 'plan'])).toBe('plan');
    expect(invokedCommand(['--help'])).toBeUndefined();
  });
});

describe('what the resident agentbox runs', () => {
  it('only the commands that start or continue a run, and nothing sent from inside a run', () => {
    const ok = parseRequest(request()) as ServeRequest;
    expect(refusal(ok)).toBeNull();
    for (const argv of [['merge', 'x'], ['discard', 'x'], ['serve'], ['status'], ['--version'], []])
      expect(refusal({ ...ok, argv })).toMatch(/only scout, plan, review, fix, revise are run here/);
    expect(refusal({ ...ok, env: { AGENTBOX_RUN: 'r1' } })).toMatch(/from inside agentbox run r1/);
    expect(refusal({ ...ok, env: { AGENTBOX_PROCESS_MARK: 'abc' } })).toMatch(
      /from inside a process started by/,
    );
    expect(refusal({ ...ok, env: { CLAUDECODE: '1' } })).toMatch(/from inside/);
  });

  it('a stop request from inside a run stops nothing, and is refused and logged, by each mark', () => {
    const logged: string[] = [];
    let stops = 0;
    const stop = (env: Record<string, string>) =>
      admit(
        { v: 1, stop: true, pid: 4242, env },
        (l) => logged.push(l),
        () => ++stops,
      );
    const marks: Record<string, string>[] = [
      { AGENTBOX_RUN: 'r1' },
      { AGENTBOX_PROCESS_MARK: 'abc' },
      { CLAUDECODE: '1' },
    ];
    for (const env of marks)
      expect(stop(env)).toMatch(
        /"err":"agentbox: the resident agentbox refused: a stop request from inside .*"exit":1/s,
      );
    expect(stops).toBe(0);
    expect(logged).toHaveLength(3);
    for (const line of logged) expect(line).toMatch(/^refused: a stop request from inside /);
    // From the person: the server is stopped, and says so with its pid.
    expect(stop({ HOME: '/home/p' })).toBe(
      `${JSON.stringify({ stopping: process.pid, running: 1 })}\n${JSON.stringify({ exit: 0 })}\n`,
    );
    expect(stops).toBe(1);
  });

  it('hands back a client whose process a run could not stand for: umask, namespaces, groups', () => {
    const own = { ns: 'mnt:[1] pid:[2]', groups: '[0,27]' };
    const ok = parseRequest(request({ umask: process.umask(), ns: own.ns, groups: [0, 27] })) as ServeRequest;
    expect(inheritedDifference(ok, own)).toBeNull();
    // (a client without /proc, or an older field set, is compared on what it sent)
    expect(inheritedDifference({ ...ok, ns: undefined as unknown as string }, own)).toBeNull();
    expect(inheritedDifference({ ...ok, umask: process.umask() ^ 0o077 }, own)).toMatch(/umask/);
    expect(inheritedDifference({ ...ok, ns: 'mnt:[9] pid:[2]' }, own)).toMatch(/other namespaces/);
    expect(inheritedDifference({ ...ok, groups: [0] }, own)).toMatch(/groups/);
  });

  it("this process's namespaces as a request carries them; none where there is no /proc", () => {
    expect(ownNamespaces(fs.readlinkSync)).toMatch(/^mnt:\[\d+\] pid:\[\d+\]$/);
    expect(
      ownNamespaces(() => {
        throw new Error('ENOENT');
      }),
    ).toBeUndefined();
  });
});

describe('where the socket is', () => {
  const made: string[] = [];
  afterEach(() => {
    for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });
  const built = () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-resident-'));
    made.push(root);
    fs.mkdirSync(path.join(root, 'dist', 'cli'), { recursive: true });
    fs.writeFileSync(path.join(root, 'dist', 'cli', 'main.cjs'), '');
    return root;
  };

  it('one socket per build: another install, version or bundle gets another', () => {
    const a = socketName('/opt/agentbox', '1.0.0', 1000);
    expect(a).toMatch(/^[0-9a-f]{16}\.sock$/);
    expect(socketName('/opt/agentbox', '1.0.0', 1000)).toBe(a);
    for (const other of [
      socketName('/opt/agentbox2', '1.0.0', 1000),
      socketName('/opt/agentbox', '1.0.1', 1000),
      socketName('/opt/agentbox', '1.0.0', 1001),
    ])
      expect(other).not.toBe(a);
  });

  it("in agentbox's state folder; none for an unbuilt package or a path too long for a socket", () => {
    const root = built();
    const place = socketPath({ HOME: '/home/p' }, `${root}/`, '1.0.0')!;
    expect(place.dir).toBe('/home/p/.local/state/agentbox/resident');
    expect(socketPath({ HOME: '/home/p' }, root, '1.0.0')!.file).toBe(place.file);
    expect(socketPath({ XDG_STATE_HOME: '/s' }, root, '1.0.0')!.dir).toBe('/s/agentbox/resident');
    expect(socketPath({ HOME: `/${'h'.repeat(80)}` }, root, '1.0.0')).toBeNull();
    expect(socketPath({ HOME: '/home/p' }, path.join(root, 'none'), '1.0.0')).toBeNull();
  });

  it("the folder must be the person's alone: a real folder, theirs, 0700", () => {
    const root = built();
    const dir = path.join(root, 'resident');
    expect(privateDirProblem(dir)).toMatch(/does not exist/);
    fs.mkdirSync(dir, { mode: 0o700 });
    expect(privateDirProblem(dir)).toBeNull();
    fs.chmodSync(dir, 0o750);
    expect(privateDirProblem(dir)).toMatch(/open to others \(mode 750; it must be 700\)/);
    fs.chmodSync(dir, 0o700);
    expect(privateDirProblem(dir, (process.getuid?.() ?? 0) + 1)).toMatch(/not to you/);
    const link = path.join(root, 'link');
    fs.symlinkSync(dir, link);
    expect(privateDirProblem(link)).toMatch(/not a folder \(a link or a file\)/);
  });
});
