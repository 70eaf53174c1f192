import fs from 'node:fs';
import path from 'node:path';
import { findTranscript } from '../claude/transcript.js';
import { EventLog } from '../ledger/events.js';

/**
 * Copies Claude Code's own transcript of the session (`<config>/projects/<project>/<id>.jsonl`)
 * into the run folder as raw/transcript.jsonl when the session ends: Claude Code deletes its
 * sessions after a while, the run keeps what it did (`agentbox show --transcript` reads it).
 * Streamed, in constant memory, to a temp file renamed into place.
 * NOTE: only a regular file is copied, opened without following a link and without waiting (a
 * fifo would hang the session's end): the agent can write in the config folder, and a link there
 * must not pull another file (a key) into the ledger, which may be pushed to a remote. Such a
 * refusal is logged.
 */
export function copySessionTranscript(
  runDir: string,
  configDir: string,
  sessionId: string | null,
): string | null {
  if (!sessionId) return null;
  const source = findTranscript(configDir, sessionId);
  if (!source) return null;
  const target = path.join(runDir, 'raw', 'transcript.jsonl');
  const temp = `${target}.${process.pid}.tmp`;
  let from: number | undefined;
  try {
    from = fs.openSync(source, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    if (!fs.fstatSync(from).isFile())
      throw Object.assign(new Error('not a regular file'), { code: 'EFTYPE' });
    fs.mkdirSync(path.dirname(target), { recursive: true });
    copyFd(from, temp);
    fs.renameSync(temp, target);
    return target;
  } catch (error) {
    fs.rmSync(temp, { force: true });
    const code = (error as NodeJS.ErrnoException).code;
    const refused = code === 'ELOOP' || code === 'EFTYPE';
    new EventLog(runDir).append({
      event: refused ? 'refused' : 'transcript_copy_failed',
      ...(refused
        ? { source: 'agentbox', tool: 'transcript copy', reason: `${source} is not a regular file` }
        : {}),
      message: (error as Error).message,
    });
    return null;
  } finally {
    if (from !== undefined) fs.closeSync(from);
  }
}

function copyFd(from: number, file: string): void {
  const to = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
  try {
    const buf = Buffer.allocUnsafe(1024 * 1024);
    let at = 0;
    for (;;) {
      const n = fs.readSync(from, buf, 0, buf.length, at);
      if (n === 0) break;
      fs.writeSync(to, buf, 0, n);
      at += n;
    }
  } finally {
    fs.closeSync(to);
  }
}
