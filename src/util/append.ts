import fs from 'node:fs';
import { AgentboxError } from '../errors.js';

/*
 * Appending to a log of the ledger (events.jsonl, INDEX.jsonl, reviewed.jsonl, a run's logs):
 * to the file itself, never through a symbolic link.
 *
 * NOTE: a ledger is files a cloned repository can carry (`.agents/` added with `git add -f`), and
 * git stores links: a run folder's `events.jsonl` or the ledger's `INDEX.jsonl` naming the
 * person's `~/.bashrc` had agentbox append JSON lines holding the planted run's words there (a
 * plain `agentbox status` did, through the watchdog), and `{"task":"$(…)"}` runs in a shell's rc
 * file. O_NOFOLLOW refuses a link as the last part of the path (ELOOP); a link to a folder above
 * it stays followed, and a name there is one of agentbox's own (`events.jsonl`…), no one's rc file.
 */
const FLAGS = fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW;

/** `file` opened to append, created when missing; a link there is refused (ELOOP). */
export function openAppend(file: string, mode = 0o644): number {
  try {
    return fs.openSync(file, FLAGS, mode);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOOP') throw error;
    throw new AgentboxError(
      'RUN_CORRUPT',
      `${file} is a symbolic link: agentbox appends to its logs only, never through a link (nothing was written)`,
      {
        hint: `a ledger that came with the repository (its .agents/ in git) is not yours: look at it, then remove the link: rm ${file}`,
      },
    );
  }
}

/** Appends `data` in one write, as fs.appendFileSync does, but never through a link. */
export function appendNoFollow(file: string, data: string | Uint8Array): void {
  const fd = openAppend(file);
  try {
    fs.writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
  } finally {
    fs.closeSync(fd);
  }
}
