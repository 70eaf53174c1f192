import fs from 'node:fs';
import net from 'node:net';
import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { VERSION } from '../version.js';
import { privateDirProblem, socketPath } from './place.js';
import { encode, lineReader, parseServerMessage } from './protocol.js';

/*
 * `agentbox serve --stop`: asks the resident agentbox of this build to stop as on Ctrl-C (the runs
 * it serves stop cleanly first), over its socket — the one door that proves the asker is the
 * person, outside any run — and waits for its process to end.
 */

/** How long `--stop` waits for the server's process to end before it says it is still stopping. */
const WAIT_MS = 60_000;

export async function stopResident(ctx: CommandContext, packageRoot: string): Promise<number> {
  const place = socketPath(ctx.env, packageRoot, VERSION);
  if (!place)
    throw new AgentboxError(
      'USAGE',
      'agentbox serve --stop needs the built agentbox and a short state folder path',
      {
        hint: 'run it from an installed agentbox (or `npm run build` first)',
      },
    );
  const none = () => {
    ctx.io.out('agentbox serve --stop: no resident agentbox of this build is running\n');
    return 0;
  };
  if (privateDirProblem(place.dir) !== null) return none();
  const answer = await ask(place.file, ctx);
  if (answer === null) return none();
  if ('refused' in answer) {
    ctx.io.err(answer.refused);
    return 1;
  }
  const { pid, running } = answer;
  ctx.io.out(
    `agentbox serve --stop: the resident agentbox (pid ${pid}) is stopping${running > 0 ? `; the ${running} command(s) it runs stop cleanly first` : ''}\n`,
  );
  if (await ended(pid, WAIT_MS)) {
    ctx.io.out('  stopped\n');
    return 0;
  }
  ctx.io.out(
    `  still stopping after ${WAIT_MS / 1000}s: it ends once its runs have (agentbox status shows them)\n`,
  );
  return 0;
}

type Answer = { pid: number; running: number } | { refused: string };

/** The server's answer to a stop request; null when nothing answers on `file`. */
function ask(file: string, ctx: CommandContext): Promise<Answer | null> {
  return new Promise((resolve) => {
    const socket = net.connect(file);
    const read = lineReader();
    let answer: Answer | null = null;
    let refused = '';
    socket.setEncoding('utf8');
    socket.once('error', () => resolve(null));
    socket.once('connect', () =>
      socket.write(encode({ v: 1, stop: true, pid: process.pid, env: ctx.env as Record<string, string> })),
    );
    socket.on('data', (chunk: string) => {
      let values: unknown[];
      try {
        values = read(chunk);
      } catch {
        socket.destroy();
        return;
      }
      for (const value of values) {
        const message = parseServerMessage(value);
        if (message && 'stopping' in message) answer = { pid: message.stopping, running: message.running };
        else if (message && 'err' in message) refused += message.err;
      }
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
