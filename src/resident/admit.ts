import fs from 'node:fs';
import { insideRun, procReader } from '../airlock/inside.js';
import { invokedCommand } from '../util/argv.js';
import { terminalText } from '../util/terminal-text.js';
import {
  encode,
  ownNamespaces,
  parseRequest,
  parseStopRequest,
  SERVED_COMMANDS,
  type ServeRequest,
  type StopRequest,
  usesTerminal,
} from './protocol.js';

/*
 * The resident agentbox's door (src/commands/serve.ts): a client's first message judged — a command
 * it runs, one it refuses (logged) or hands back for the client to run itself, or a stop request.
 */

/** What the server logs: one line a served command, and every refusal. */
export type ServeLog = (line: string) => void;

/** Why this request is not run here, or null. */
export function refusal(request: ServeRequest): string | null {
  const command = invokedCommand(request.argv);
  if (!command || !SERVED_COMMANDS.has(command))
    return `only ${[...SERVED_COMMANDS].join(', ')} are run here, not ${JSON.stringify(command ?? request.argv[0] ?? '')}`;
  // A command sent from inside a run would run outside that run's box: never (the sandbox keeps the
  // socket out of a run's reach; this is the early, logged refusal beside it).
  const inside = insideRun(request.env, request.pid, procReader);
  if (inside) return `the request came from inside ${inside.what}`;
  return null;
}

/** What a served run inherits from this process, which a request cannot change: compared, not sent. */
const OWN = {
  ns: ownNamespaces(fs.readlinkSync),
  groups: JSON.stringify(process.getgroups?.().sort((a, b) => a - b)),
};

/** Why `request`'s process could not be stood for by this one (a run inherits it), or null. */
export function inheritedDifference(
  request: ServeRequest,
  own: { readonly ns?: string | undefined; readonly groups?: string | undefined } = OWN,
): string | null {
  if (request.umask !== process.umask())
    return `its umask ${request.umask.toString(8)} is not this process's`;
  if (request.ns !== undefined && own.ns !== undefined && request.ns !== own.ns)
    return 'it runs in other namespaces (a container or sandbox) than this process';
  if (request.groups !== undefined && JSON.stringify(request.groups) !== own.groups)
    return "its groups are not this process's";
  return null;
}

/** A stop request (`agentbox serve --stop`) answered: the server stops unless it came from a run. */
function answerStop(request: StopRequest, log: ServeLog, stopServer: (by: string) => number): string {
  const inside = insideRun(request.env, request.pid, procReader);
  if (inside) {
    const why = `a stop request from inside ${inside.what}`;
    log(`refused: ${terminalText(why)}`);
    return encode({ err: `agentbox: the resident agentbox refused: ${why}\n` }) + encode({ exit: 1 });
  }
  const running = stopServer(`agentbox serve --stop from pid ${request.pid}`);
  return encode({ stopping: process.pid, running }) + encode({ exit: 0 });
}

/** The client's first message as a request to run, or the reply that ends the connection (logged). */
export function admit(
  value: unknown,
  log: ServeLog,
  stopServer: (by: string) => number,
): ServeRequest | string {
  const stop = parseStopRequest(value);
  if (stop) return answerStop(stop, log, stopServer);
  const request = parseRequest(value);
  const why = typeof request === 'string' ? `a malformed request (${request})` : refusal(request);
  if (why || typeof request === 'string') {
    log(`refused: ${terminalText(why ?? '')}`);
    return (
      encode({ err: `agentbox: the resident agentbox refused this command: ${why}\n` }) + encode({ exit: 1 })
    );
  }
  // What a run inherits from its process and a request cannot change here: handed back.
  const difference = inheritedDifference(request);
  if (difference) {
    log(`handed back to pid ${request.pid}: ${difference}`);
    return encode({ local: 'inherited' });
  }
  if (usesTerminal(request.argv)) {
    log(`handed back to pid ${request.pid}: the command uses its terminal`);
    return encode({ local: 'terminal' });
  }
  return request;
}
