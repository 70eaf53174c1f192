import { AgentboxError } from '../errors.js';
import type { Entry } from './entry.js';
import { LineReader, MAX_LINE } from './lines.js';
import { claudeFile } from './read.js';
import { lineEntries } from './stream-entries.js';

/**
 * One entry of claude's lines read back whole (a tool result the transcript cut), by its id
 * (`s<offset>.<n>`). The line is read again from its offset: nothing is kept between requests.
 */
export function fullEntry(runDir: string, id: string, live: string | null = null): Entry {
  const src = claudeFile(runDir, live);
  const m = /^([st])(\d{1,15})\.(\d{1,6})$/.exec(id);
  if (!m || m[1] !== src.prefix) {
    throw new AgentboxError('USAGE', `not an entry of this run's ${src.rel}: "${id.slice(0, 80)}"`, {
      hint: 'pass the id of a transcript entry whose text was cut (its "cut" field says so)',
    });
  }
  const offset = Number(m[2]);
  const reader = new LineReader(src.file, offset, MAX_LINE, src.noFollow);
  let line: ReturnType<LineReader['next']>;
  try {
    line = reader.next();
  } finally {
    reader.close();
  }
  const entries =
    line?.text != null
      ? lineEntries({
          text: line.text,
          ref: { file: src.rel, offset, bytes: line.bytes },
          prefix: src.prefix,
          lastAt: null,
          max: Number.POSITIVE_INFINITY,
        }).entries
      : [];
  const entry = entries[Number(m[3])];
  if (!entry) {
    throw new AgentboxError('RUN_NOT_FOUND', `no transcript entry ${id} in ${src.rel}`, {
      hint:
        line?.text === null
          ? `the line is over ${MAX_LINE} bytes: read it in ${src.rel} at byte ${offset}`
          : 'list the entries: agentbox show <run> --transcript --json',
    });
  }
  return entry;
}
