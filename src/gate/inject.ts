import { AgentboxError } from '../errors.js';
import { ipcRequest } from '../interactive/ipc.js';
import { recordedSocket } from '../interactive/socket-path.js';
import type { RunDetails } from '../ledger/index.js';
import { moreWordsFor } from '../present/next-step.js';
import { isAlive } from '../process/reap.js';
import { enqueue, pendingCount } from '../supervisor/inbox.js';

/** Where a message went: typed into a session when claude is idle, or queued for a run's supervisor. */
export type Delivered =
  | { readonly to: 'session'; readonly reply: { readonly queued: number } }
  | { readonly to: 'supervisor'; readonly id: string; readonly pending: number };

/** A message says something: an empty one is refused before any run is looked up. */
export function checkMessage(text: string): void {
  if (text.trim() === '') {
    throw new AgentboxError('USAGE', 'the message is empty', {
      hint: 'agentbox inject latest "also update the docs"',
    });
  }
}

/**
 * Gives a live run a message. A headless run's supervisor delivers it at the agent's next Stop, as
 * the instruction the agent goes on with: exactly once, in the order queued (several waiting
 * messages go together, oldest first), recorded in events.jsonl. A session takes it through its
 * control socket and types it in when claude is idle.
 */
export async function deliverMessage(run: RunDetails, text: string): Promise<Delivered> {
  const state = run.state;
  if (state?.status !== 'ACTIVE' || !isAlive(state.pid, state.pid_start)) {
    throw new AgentboxError(
      'USAGE',
      `run ${run.name} is not running${run.meta.origin ? ' here' : ''} (${state?.status ?? 'no state'}): nothing would read the message`,
      {
        hint: moreWordsFor(
          {
            status: state?.status ?? null,
            type: run.meta.type,
            id: run.meta.run_id,
            ranOn: run.meta.origin?.host,
          },
          text,
        ),
      },
    );
  }
  const socket = recordedSocket(run.dir, run.meta.run_id, state.socket_path);
  if (run.meta.type === 'interactive' && socket) {
    const reply = (await ipcRequest(socket, 'inject', { text })) as { queued: number };
    return { to: 'session', reply };
  }
  const id = enqueue(run.dir, text);
  return { to: 'supervisor', id, pending: pendingCount(run.dir) };
}

/** The JSON `inject --json` prints and the web UI answers with. Pure. */
export function deliveredJson(run: string, d: Delivered): Record<string, unknown> {
  return d.to === 'session' ? { run, ...d.reply } : { run, id: d.id, pending: d.pending };
}
