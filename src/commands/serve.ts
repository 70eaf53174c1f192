import fs from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import type { CommandContext } from '../context.js';
import { AgentboxError, errnoCode } from '../errors.js';
import { serveConnection } from '../resident/connection.js';
import { privateDirProblem, socketPath } from '../resident/place.js';
import { SERVED_COMMANDS } from '../resident/protocol.js';
import { VERSION } from '../version.js';

/*
 * `agentbox serve`: the resident agentbox (docs/resident.md). One warm process of the person's runs
 * the scouts, plans, reviews, fixes and revisions their other agentbox commands hand it over a Unix
 * socket in agentbox's state folder, so each run skips node's start and the loading of agentbox's
 * modules (docs/benchmarks.md). It runs in the foreground until Ctrl-C; a command finds it or runs
 * itself as before.
 */

/** The package's folder: this module sits two below it (src/commands/, dist/cli/). */
const PACKAGE_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Whether something answers on `file`. */
function answers(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.connect(file);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

/** The socket's folder made or checked (the person's alone), and a socket left by a dead server removed. */
async function prepare(ctx: CommandContext): Promise<string> {
  const place = socketPath(ctx.env, PACKAGE_ROOT, VERSION);
  if (!place) {
    throw new AgentboxError(
      'USAGE',
      'agentbox serve needs the built agentbox and a short state folder path',
      {
        hint: 'run it from an installed agentbox (or `npm run build` first); a Unix socket path has at most 107 bytes: set XDG_STATE_HOME shorter',
      },
    );
  }
  fs.mkdirSync(place.dir, { recursive: true, mode: 0o700 });
  const problem = privateDirProblem(place.dir);
  if (problem)
    throw new AgentboxError('USAGE', `agentbox serve refuses its socket folder: ${problem}`, {
      hint: `make it yours alone: chmod 700 ${place.dir}`,
    });
  if (await answers(place.file))
    throw new AgentboxError('USAGE', `a resident agentbox of this build already serves (${place.file})`, {
      hint: 'stop it (Ctrl-C in its terminal) before starting another',
    });
  try {
    fs.unlinkSync(place.file);
  } catch (error) {
    if (errnoCode(error) !== 'ENOENT') throw error;
  }
  return place.file;
}

export async function serve(ctx: CommandContext): Promise<number> {
  const runCommand = ctx.runCommand;
  if (!runCommand) throw new AgentboxError('USAGE', 'agentbox serve runs from the agentbox command only');
  const file = await prepare(ctx);
  const log = (line: string) => ctx.io.out(`${new Date().toISOString()} ${line}\n`);
  const stops = new Set<(by: string) => void>();
  const active = new Set<Promise<void>>();
  const server = net.createServer((socket) => {
    const served = serveConnection(socket, runCommand, log, (stop) => {
      stops.add(stop);
      return () => stops.delete(stop);
    });
    active.add(served);
    void served.finally(() => active.delete(served));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(file, () => resolve());
  });
  fs.chmodSync(file, 0o600);
  ctx.io.out(
    `agentbox serve: ready (agentbox ${VERSION}, pid ${process.pid}) — ${[...SERVED_COMMANDS].join(', ')} started by you run here\n` +
      `  socket  ${file}\n  stop    Ctrl-C (the runs it serves stop cleanly first)\n`,
  );
  return new Promise<number>((resolve) => {
    const unsubscribe = ctx.onInterrupt?.((by) => {
      log(`stopping (${by}): ${active.size} command(s) running`);
      server.close();
      for (const stop of stops) stop(`the resident agentbox stopping (${by})`);
      void Promise.allSettled([...active]).then(() => {
        fs.rmSync(file, { force: true });
        unsubscribe?.();
        resolve(0);
      });
    });
  });
}
