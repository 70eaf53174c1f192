import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseDuration } from '../config/duration.js';
import type { CommandContext } from '../context.js';
import { AgentboxError, errnoCode } from '../errors.js';
import { clearStarting, closeStrayFds, MAX_IDLE_MS, STRAY_FDS_VAR } from '../resident/autostart.js';
import { answers, privateDirProblem, socketPath } from '../resident/place.js';
import { SERVED_COMMANDS } from '../resident/protocol.js';
import { ResidentServer } from '../resident/server.js';
import { stopResident } from '../resident/stop.js';
import { letGoOfStandby } from '../run/standby/store.js';
import { privateBase, sweepOrphanedSecrets } from '../sandbox/private.js';
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
      hint: 'agentbox serve --stop stops it (or Ctrl-C in its terminal, if it has one)',
    });
  try {
    fs.unlinkSync(place.file);
  } catch (error) {
    if (errnoCode(error) !== 'ENOENT') throw error;
  }
  return place.file;
}

export interface ServeOptions {
  /** Stop once no command has run for this long (`15m`); none: until Ctrl-C. */
  idle?: string;
  /** Stop the resident agentbox of this build, instead of being one. */
  stop?: boolean;
}

export async function serve(ctx: CommandContext, options: ServeOptions = {}): Promise<number> {
  if (options.stop) return stopResident(ctx);
  // Started in the background by a command: what that command's own starter left open goes now.
  closeStrayFds(ctx.env[STRAY_FDS_VAR]);
  const runCommand = ctx.runCommand;
  if (!runCommand) throw new AgentboxError('USAGE', 'agentbox serve runs from the agentbox command only');
  const idleMs = idleOption(options.idle);
  const file = await prepare(ctx);
  // What a server killed outright left of its standby (src/run/standby/): nobody's now.
  sweepOrphanedSecrets(privateBase(ctx.env, process.getuid?.() ?? 0));
  const log = (line: string) => ctx.io.out(`${new Date().toISOString()} ${line}\n`);
  const idle = idleMs === undefined ? undefined : { ms: idleMs, label: options.idle! };
  const server = new ResidentServer(runCommand, log, idle);
  await server.listen(file);
  clearStarting(file, process.pid);
  ctx.io.out(
    `agentbox serve: ready (agentbox ${VERSION}, pid ${process.pid}) — ${[...SERVED_COMMANDS].join(', ')} started by you run here\n` +
      `  socket  ${file}\n  stop    ${idle ? `by itself after ${idle.label} unused; ` : ''}Ctrl-C or agentbox serve --stop (the runs it serves stop cleanly first)\n`,
  );
  const unsubscribe = ctx.onInterrupt?.((by) => server.stop(by));
  await server.stopped();
  // The claude kept ready for a revision (src/run/standby/) goes with the server.
  await letGoOfStandby('the resident agentbox stopped');
  unsubscribe?.();
  return 0;
}

/** `--idle`'s milliseconds; undefined without it. */
function idleOption(idle: string | undefined): number | undefined {
  if (idle === undefined) return undefined;
  const ms = parseDuration(idle);
  if (!ms || ms > MAX_IDLE_MS) {
    throw new AgentboxError(
      'USAGE',
      `--idle must be a duration longer than 0 and at most 24d, such as "15m" or "2h" (it is ${JSON.stringify(idle)})`,
      { hint: 'agentbox serve --idle 15m; without --idle it serves until Ctrl-C or agentbox serve --stop' },
    );
  }
  return ms;
}
