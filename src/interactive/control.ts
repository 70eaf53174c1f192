import { AgentboxError } from '../errors.js';
import type { RunDetails } from '../ledger/index.js';
import { type IpcMethod, ipcRequest } from './ipc.js';
import { recordedSocket } from './socket-path.js';

/**
 * Sends one request to an interactive session's control socket and returns its answer
 * (`agentbox restart`, `stop`, `state` and the web UI's buttons).
 */
export async function controlSession(
  run: RunDetails,
  method: IpcMethod,
  params: Record<string, unknown> = {},
): Promise<unknown> {
  const socket = recordedSocket(run.dir, run.meta.run_id, run.state?.socket_path);
  if (run.meta.type === 'interactive' && !socket) {
    const status = run.state?.status ?? 'unknown';
    const why = run.state?.failure?.message;
    throw new AgentboxError(
      'USAGE',
      `session ${run.name} is not running (${status}${why ? `: ${why}` : ''})`,
      { hint: `continue it with agentbox start --resume ${run.meta.run_id}` },
    );
  }
  if (run.meta.type !== 'interactive' || !socket) {
    throw new AgentboxError(
      'USAGE',
      `run ${run.name} is not an interactive session (it has no control socket)`,
      {
        hint: 'agentbox restart/stop/state work on sessions started with agentbox start',
      },
    );
  }
  return ipcRequest(socket, method, params);
}

/** What `agentbox restart` says, and the web UI answers with. Pure. */
export const restartingLine = (run: RunDetails, fresh: boolean, ok: string): string =>
  `${ok} restarting claude in ${run.name} (${fresh ? 'a fresh session' : 'resuming its session'})\n`;

/** The state `agentbox state --json` prints and the web UI answers with. */
export const sessionJson = (run: RunDetails, reply: unknown): Record<string, unknown> => ({
  run: run.name,
  ...(reply as object),
});
