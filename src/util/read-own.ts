import fs from 'node:fs';
import { AgentboxError } from '../errors.js';

/*
 * Reading a record of the ledger (a run's state.json and meta.yaml): the file itself, never
 * through a symbolic link, and never anything but a regular file.
 *
 * NOTE: a ledger can arrive with a repository (an archive, a clone that carried `.agents/`), and
 * a planted `state.json` naming `~/.aws/credentials` was read: its parse error quoted the line it
 * stopped at, into the terminal and the log a CI job publishes. O_NOFOLLOW refuses a link as the
 * last part of the path (ELOOP); O_NONBLOCK keeps a FIFO from blocking the open, and fstat then
 * refuses it. A missing file fails as before (ENOENT), for callers that read it as "none yet".
 */
const FLAGS = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK;

/** The text of `file`, a regular file of its own; a link or anything but a file is refused. */
export function readOwnFile(file: string): string {
  return readOwnBytes(file).toString('utf8');
}

/** The bytes of `file`, as readOwnFile reads it. */
export function readOwnBytes(file: string): Buffer {
  const fd = openOwn(file);
  try {
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** `file` opened to read, as readOwnFile reads it; the caller closes it. */
export function openOwn(file: string): number {
  let fd: number;
  try {
    fd = fs.openSync(file, FLAGS);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOOP') throw error;
    throw notOwn(file, 'is a symbolic link');
  }
  try {
    if (!fs.fstatSync(fd).isFile()) throw notOwn(file, 'is not a regular file');
    return fd;
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
}

function notOwn(file: string, what: string): AgentboxError {
  return new AgentboxError(
    'RUN_CORRUPT',
    `${file} ${what}: agentbox reads a run's records only from files of their own (nothing was read)`,
    {
      hint: `a ledger that came with the repository is not yours: look at it, then remove it: rm ${file}`,
    },
  );
}
