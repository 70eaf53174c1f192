import { toolTarget } from '../present/live.js';
import { terminalJson } from '../util/json-out.js';
import { terminalLine } from '../util/terminal-text.js';
import type { Entry } from './entry.js';
import { readBlock } from './render-read.js';

/** Colours for the marks; the plain styler of src/util/style.ts fits. */
export interface Marks {
  readonly ok: (s: string) => string;
  readonly warn: (s: string) => string;
  readonly bad: (s: string) => string;
  readonly dim: (s: string) => string;
  readonly cyan: (s: string) => string;
}

const NONE = (s: string) => s;
const PLAIN: Marks = { ok: NONE, warn: NONE, bad: NONE, dim: NONE, cyan: NONE };

const size = (n: number) => (n < 1024 ? `${n} chars` : `${(n / 1024).toFixed(1)}K chars`);

/** What an entry says, after its time and mark; the agent's words made safe for a terminal. */
function body(e: Entry, m: Marks): string {
  // One line: the agent's line ends become spaces, then anything else unsafe is shown escaped.
  const t = (s: string) => terminalLine(s.replace(/\s+/g, ' ').trim());
  const cut = (c: { length: number } | undefined) => (c ? m.dim(` [cut: ${size(c.length)}]`) : '');
  switch (e.kind) {
    case 'text':
      return `${t(e.text)}${cut(e.cut)}`;
    case 'user':
      return `${m.cyan('user:')} ${t(e.text)}${cut(e.cut)}`;
    case 'tool_call':
      return `${m.cyan(`→ ${t(e.tool)}`)} ${toolTarget(e.input) ?? ''}`.trimEnd();
    case 'tool_result': {
      const how = e.refused_by
        ? m.bad(`✗ refused (${t(e.refused_by)})`)
        : e.is_error
          ? m.warn('← error')
          : m.dim('←');
      return `  ${how} ${t(e.text)}${cut(e.cut)}`;
    }
    case 'refusal':
      return m.bad(`✗ refused (${t(e.by)}) ${t(e.tool)}: ${t(e.reason)}`);
    case 'decision':
      return m.warn(`◆ supervisor: ${t(e.decision)} (${t(e.source)}) ${t(e.reason)}`.trimEnd());
    case 'correction':
      return m.warn(`↻ correction (${t(e.source)}${e.reason ? `, ${t(e.reason)}` : ''}): ${t(e.text)}`);
    case 'inject':
      return m.warn(`✉ injected: ${t(e.text)}`);
    case 'verify':
      return e.ok ? m.ok('✓ verification passed') : m.bad(`✗ verification failed: ${t(e.detail)}`);
    case 'violation':
      return m.bad(`! violation ${t(e.type)} (${t(e.action)}): ${t(e.detail)}`);
    case 'budget':
      return m.bad(`$ budget: ${t(e.reason)}`);
    case 'result':
      return `${e.is_error ? m.bad('■ ended with an error') : m.ok('■ answer')}${e.cost_usd === null ? '' : m.dim(` ($${e.cost_usd.toFixed(4)})`)} ${t(e.text)}${cut(e.cut)}`;
    case 'event':
      return m.dim(`· ${t(e.event)} ${t(e.detail)}`.trimEnd());
    case 'oversized':
      return m.dim(`… a line of ${e.bytes} bytes, not read: ${e.file} at byte ${e.offset}`);
  }
}

/**
 * One entry as one terminal line: its time (UTC), then what happened, cut to `width` columns
 * (counted before colours). Used by `agentbox show --transcript` and `agentbox watch`. Pure.
 */
export function entryLine(e: Entry, width = 200, marks: Marks = PLAIN): string {
  const time = timeOf(e);
  const plain = body(e, PLAIN);
  const room = Math.max(20, width - 10);
  const text = plain.length > room ? body(shorten(e, room), marks) : body(e, marks);
  return `${marks.dim(time)}  ${text}`;
}

/**
 * A printer for one run's entries in order (`show --transcript`, `watch --transcript`): each as
 * entryLine prints it, but the result of a Read call as the file's lines (src/transcript/
 * render-read.ts), which it knows by the call before it. Holds the ids of Read calls whose result
 * has not come yet.
 */
export function entryPrinter(width = 200, marks: Marks = PLAIN): (e: Entry) => string {
  const reads = new Set<string>();
  return (e) => {
    if (e.kind === 'tool_call' && e.tool === 'Read') reads.add(e.tool_use_id);
    if (e.kind === 'tool_result' && reads.delete(e.tool_use_id) && !e.is_error && !e.refused_by) {
      const block = readBlock(e, timeOf(e), width, marks);
      if (block !== null) return block;
    }
    return entryLine(e, width, marks);
  };
}

const timeOf = (e: Entry) => (e.at ? e.at.slice(11, 19) : '--:--:--');

/** The entry with its free text cut so that its line fits: the agent's text is what runs long. */
function shorten(e: Entry, room: number): Entry {
  const clip = (s: string) => (s.length > room ? `${s.slice(0, Math.max(0, room - 1))}…` : s);
  switch (e.kind) {
    case 'text':
    case 'user':
    case 'tool_result':
    case 'result':
      return { ...e, text: clip(e.text.replace(/\s+/g, ' ')) };
    case 'refusal':
    case 'decision':
      return { ...e, reason: clip(e.reason) };
    case 'correction':
    case 'inject':
      return { ...e, text: clip(e.text) };
    case 'verify':
    case 'violation':
      return { ...e, detail: clip(e.detail) };
    default:
      return e;
  }
}

/**
 * One entry as one line of JSON, safe on a terminal too (`show --transcript --json` with no pipe):
 * see terminalJson; the line parses back to the same entry. Pure.
 */
export function entryJson(e: Entry): string {
  return terminalJson(e);
}
