import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { agentboxStateDir } from '../util/state-dir.js';
import { answers, privateDirProblem } from './place.js';
import { encode, onServerMessages, residentDir } from './protocol.js';

/*
 * `agentbox serve --stop`: asks each resident agentbox of the person's (this build's, and one an
 * upgrade left) to stop as on Ctrl-C (the runs it serves stop cleanly first), over its socket — the
 * one door that proves the asker is the person, outside any run — and waits for its process to end.
 */

/** How long `--stop` waits for a server's process to end before it says it is still stopping. */
const WAIT_MS = 60_000;
/** How long a server has to answer the request (a stopped or hung one does not). */
const ANSWER_MS = 5_000;

export async function stopResident(ctx: CommandContext): Promise<number> {
  const dir = residentDir(agentboxStateDir(ctx.env));
  const problem = privateDirProblem(dir);
  if (problem !== null && !problem.endsWith('does not exist'))
    throw new AgentboxError('USAGE', `agentbox serve --stop refuses the socket folder: ${problem}`, {
      hint: `make it yours alone (chmod 700 ${dir}), then run agentbox serve --stop again`,
    });
  const names = problem !== null ? [] : fs.readdirSync(dir);
  const sockets = new Set(names.filter((name) => name.endsWith('.sock')).map((name) => path.join(dir, name)));
  // A server a command started a moment ago may not listen yet: its socket once it does.
  for (const name of names.filter((n) => n.endsWith('.starting'))) {
    const socket = await startedSocket(path.join(dir, name));
    if (socket) sockets.add(socket);
  }
  let stopped = 0;
  let code = 0;
  for (const file of sockets) {
    const answer = await ask(file, ctx);
    if (answer === null) continue;
    if ('refused' in answer) {
      ctx.io.err(answer.refused);
      code = 1;
      continue;
    }
    stopped++;
    await report(ctx, answer);
  }
  if (stopped === 0 && code === 0) ctx.io.out('agentbox serve --stop: no resident agentbox is running\n');
  return code;
}

/** Says that a server stops, waits for its end; whether it ended in time. */
async function report(
  ctx: CommandContext,
  { pid, running }: { pid: number; running: number },
): Promise<boolean> {
  ctx.io.out(
    `agentbox serve --stop: the resident agentbox (pid ${pid}) is stopping${running > 0 ? `; the ${running} command(s) it runs stop cleanly first` : ''}\n`,
  );
  if (await ended(pid, WAIT_MS)) {
    ctx.io.out('  stopped\n');
    return true;
  }
  ctx.io.out(
    `  still stopping after ${WAIT_MS / 1000}s: it ends once its runs have (agentbox status shows them)\n`,
  );
  return false;
}

/** How long `--stop` waits for a server that is starting to listen. */
const STARTING_MS = 10_000;

/**
 * The socket of the server that `marker` (src/resident/autostart.ts `startingMarker`) says is
 * starting, once it listens; null when that process is gone or is no agentbox serve (its marker is
 * removed) or has not listened within STARTING_MS.
 */
async function startedSocket(marker: string): Promise<string | null> {
  const socket = marker.replace(/\.starting$/, '.sock');
  const pid = Number((readText(marker) ?? '').trim());
  const deadline = Date.now() + STARTING_MS;
  while (Number.isInteger(pid) && pid > 0 && !gone(pid) && isServe(pid)) {
    if (await answers(socket)) return socket;
    if (Date.now() > deadline) return null;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  fs.rmSync(marker, { force: true });
  return null;
}

/** Whether process `pid` runs `agentbox serve` (a marker's pid may have been reused since). */
function isServe(pid: number): boolean {
  const args = (readText(`/proc/${pid}/cmdline`) ?? '').split('\0');
  return args.includes('serve') && args.some((arg) => arg.endsWith('agentbox.cjs'));
}

function readText(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

type Answer = { pid: number; running: number } | { refused: string };

/** The server's answer to a stop request; null when nothing answers on `file`. */
function ask(file: string, ctx: CommandContext): Promise<Answer | null> {
  return new Promise((resolve) => {
    const socket = net.connect(file);
    let answer: Answer | null = null;
    let refused = '';
    socket.once('error', () => resolve(null));
    socket.setTimeout(ANSWER_MS, () => {
      refused ||= `agentbox serve --stop: the resident agentbox on ${file} does not answer (stopped with Ctrl-Z or SIGSTOP?)\n`;
      socket.destroy();
    });
    socket.once('connect', () =>
      socket.write(encode({ v: 1, stop: true, pid: process.pid, env: ctx.env as Record<string, string> })),
    );
    onServerMessages(socket, (message) => {
      if ('stopping' in message) answer = { pid: message.stopping, running: message.running };
      else if ('err' in message) refused += message.err;
      return false;
    });
    socket.once('close', () => resolve(answer ?? (refused ? { refused } : null)));
  });
}

/** Whether process `pid` is gone, or only its exit status is left for a parent to collect. */
function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    // (a zombie: a server started by itself is reparented, and its new parent may reap it late)
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

/** Whether process `pid` ended within `ms`. */
async function ended(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (gone(pid)) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
