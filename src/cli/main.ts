import fs from 'node:fs';
import type { OnInterrupt } from '../context.js';
import { processIo, processTerminal } from '../context.js';
import { STOP_SIGNAL } from '../gate/signals.js';
import { LINEAGE_VAR, newLineage } from '../process/reap.js';
import { run } from './run.js';

// The one place that reads process globals and exits.
const handlers = new Set<(by: string) => void>();
let interrupted = false;
/** A command stopped cleanly by a signal still exits as the shell expects: 128 + the signal. */
let signalCode: number | undefined;
/** `agentbox stop` arrived before the command subscribed: given to the first handler that does. */
let pendingStop = false;
for (const [signal, by, code] of [
  ['SIGINT', 'Ctrl-C', 130],
  ['SIGTERM', 'SIGTERM', 143],
  ['SIGHUP', 'the terminal closing (SIGHUP)', 129],
  [STOP_SIGNAL, 'agentbox stop', 143],
] as const) {
  process.on(signal, () => {
    // `agentbox stop` can reach a run's process before the run has subscribed (a detached worker
    // that is still starting): the stop waits for it instead of killing the run half-made.
    if (signal === STOP_SIGNAL && handlers.size === 0 && !interrupted) {
      pendingStop = true;
      return;
    }
    // A command that can stop cleanly (a run exports its changes first) gets one chance; a
    // second signal, or a command that did not ask, ends the process at once — said, when it cuts
    // a clean stop short (it ended without a word, and the run was found CRASHED later).
    if (interrupted && handlers.size > 0) saySync(`\nagentbox: ${by} again: ${CUT_SHORT}\n`);
    if (interrupted || handlers.size === 0) process.exit(code);
    interrupted = true;
    // SIGHUP is a closed terminal: a session ends cleanly then, and nobody reads the code.
    if (signal !== 'SIGHUP') signalCode = code;
    for (const handler of handlers) handler(by);
  });
}
const CUT_SHORT =
  'exiting at once, without the clean stop; what was running is left as it was: agentbox status shows it, agentbox recover takes it up';

/**
 * The folder the command runs in; a folder removed under the shell (`cd x && rm -rf ../x`) is said
 * in one line, exit 1 (it was node's stack trace for uv_cwd).
 */
function workingFolder(): string {
  try {
    return process.cwd();
  } catch {
    saySync(
      'agentbox: the current folder no longer exists (it was removed or moved away)\n  → cd to a folder that exists, e.g. your repository, and run the command again\n',
    );
    process.exit(1);
  }
}

/** One line on standard error now, whatever becomes of the process next. */
function saySync(text: string): void {
  try {
    fs.writeSync(2, text);
  } catch {
    // Nobody reads it any more: exiting is all that is left.
  }
}

// A reader that went away (`agentbox status --all | head`): no stack trace, and what is left to
// print is dropped. A command that can stop cleanly (a run, a session, the web UI) stops as when
// its terminal closes, also when it subscribes after; any other finishes its work and exits as it
// would have, so a merge is never cut in half by a pager that closed.
const READER_GONE = 'its output closing (EPIPE)';
let readerGone = false;
const onReaderGone = () => {
  if (readerGone) return;
  readerGone = true;
  if (interrupted || handlers.size === 0) return;
  interrupted = true;
  for (const handler of handlers) handler(READER_GONE);
};

// Every process agentbox starts carries AGENTBOX_LINEAGE: inherited when the caller set one (a CI
// job, a test), else this command's own, so everything a tree of agentbox commands started can be
// found and ended, the supervisor's own `claude -p` included.
const env = { ...process.env, [LINEAGE_VAR]: process.env[LINEAGE_VAR] || newLineage() };
const io = processIo(process, env, { outFd: 1, errFd: 2, onReaderGone });

const onInterrupt: OnInterrupt = (handler) => {
  // A command that can be interrupted runs a while: its output must never block (src/util/fd-writer.ts).
  io.longLived();
  handlers.add(handler);
  if (pendingStop) {
    pendingStop = false;
    interrupted = true;
    signalCode = 143;
    setImmediate(() => handler('agentbox stop'));
  } else if (readerGone && !interrupted) {
    interrupted = true;
    setImmediate(() => handler(READER_GONE));
  }
  return () => handlers.delete(handler);
};

void run(process.argv.slice(2), {
  cwd: workingFolder(),
  env,
  io,
  onInterrupt,
  terminal: processTerminal(process, env),
  runCommand: run,
}).then((code) => {
  process.exitCode = signalCode ?? code;
});
