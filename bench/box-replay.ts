/**
 * Claude Code with a run's box and nothing of agentbox around it: how much of a run's overhead is
 * Claude Code's own work for the box (its sandbox, the run's settings and hooks), which no change
 * in agentbox can take away. One run starts claude through `captureWrapper`, which keeps claude's
 * arguments, environment, standard input and the run's private folders (settings, private git,
 * temp and socket folders, the run's slash commands) as they were at the spawn; `replayer` then
 * starts claude exactly so again, the folders put back, its hooks answered by a stub (`{}`, as the
 * supervisor's rules answer a turn that ends). Used by bench/scout-overhead.bench.ts.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { CLAUDE_BIN } from '../test/helpers/claude.js';

/** A shell script to give agentbox as its claude (AGENTBOX_CLAUDE_BIN) for one run. */
export function captureWrapper(dir: string): string {
  const wrapper = path.join(dir, 'claude-capture');
  const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  fs.writeFileSync(
    wrapper,
    [
      '#!/bin/sh',
      `d=${q(dir)}`,
      'printf "%s\\0" "$@" > "$d/argv"',
      'env -0 > "$d/env"',
      'cat > "$d/stdin"',
      'for a in "$@"; do case "$a" in --settings=*) s=$(printf %s "$a" | cut -c12-); echo "$(dirname "$s")" > "$d/secrets.path"; cp -a "$(dirname "$s")" "$d/secrets";; esac; done',
      'echo "$(dirname "$GIT_DIR")" > "$d/work.path"; cp -a "$(dirname "$GIT_DIR")" "$d/work"',
      'echo "$TMPDIR" > "$d/socks.path"; cp -a "$TMPDIR" "$d/socks"',
      'if [ -d .claude/commands ]; then echo "$PWD/.claude/commands" > "$d/commands.path"; cp -a .claude/commands "$d/commands"; fi',
      `exec ${q(CLAUDE_BIN)} "$@" < "$d/stdin"`,
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  return wrapper;
}

export interface Replayer {
  /**
   * claude as the captured run started it (a new session id each time; a resumed one's session
   * given as `resumeAs`, else its own); spawn to exit, in ms.
   */
  run(resumeAs?: string): Promise<number>;
  close(): Promise<void>;
}

/**
 * Replays what `captureWrapper` kept in `dir`. `time` times a process as the bench times the others.
 */
export async function replayer(
  dir: string,
  cwd: string,
  time: (
    cmd: string,
    argv: string[],
    cwd: string,
    env: Record<string, string>,
    input?: string,
  ) => Promise<number>,
): Promise<Replayer> {
  const argv = fs.readFileSync(path.join(dir, 'argv'), 'utf8').split('\0').slice(0, -1);
  const env = Object.fromEntries(
    fs
      .readFileSync(path.join(dir, 'env'), 'utf8')
      .split('\0')
      .filter((kv) => kv.includes('='))
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
  const stdin = fs.readFileSync(path.join(dir, 'stdin'), 'utf8');
  const stub = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
  const port = (stub.address() as AddressInfo).port;
  const parts = ['secrets', 'work', 'socks', 'commands']
    .filter((part) => fs.existsSync(path.join(dir, `${part}.path`)))
    .map((part) => ({
      from: path.join(dir, part),
      to: fs.readFileSync(path.join(dir, `${part}.path`), 'utf8').trim(),
    }));
  // The run's endpoint is gone: its hooks (and the sandbox's allowance for them) go to the stub.
  const settingsFile = argv.find((a) => a.startsWith('--settings='))!.slice('--settings='.length);
  const kept = path.join(dir, 'secrets', path.basename(settingsFile));
  const settings = fs.readFileSync(kept, 'utf8');
  const endpoint = /http:\/\/127\.0\.0\.1:(\d+)\/hook\//.exec(settings)?.[1];
  if (endpoint) {
    const moved = JSON.parse(settings.replaceAll(`127.0.0.1:${endpoint}`, `127.0.0.1:${port}`));
    // agentbox's own proxy (the endpoint's port, and its SOCKS port): the stub answers for both.
    const network = moved.sandbox?.network;
    if (network?.httpProxyPort !== undefined)
      Object.assign(network, { httpProxyPort: port, socksProxyPort: port });
    fs.writeFileSync(kept, `${JSON.stringify(moved)}\n`);
  }
  // The folders as they were at the spawn, before each start: a later agentbox run may reuse a path.
  const restore = () => {
    for (const { from, to } of parts) {
      fs.rmSync(to, { recursive: true, force: true });
      fs.cpSync(from, to, { recursive: true, verbatimSymlinks: true });
    }
  };
  return {
    run(resumeAs) {
      restore();
      const args = argv.map((a) =>
        a.startsWith('--session-id=')
          ? `--session-id=${randomUUID()}`
          : resumeAs && a.startsWith('--resume=')
            ? `--resume=${resumeAs}`
            : a,
      );
      return time(CLAUDE_BIN, args, cwd, env, stdin);
    },
    async close() {
      for (const { to } of parts) fs.rmSync(to, { recursive: true, force: true });
      await new Promise<void>((resolve) => stub.close(() => resolve()));
    },
  };
}
