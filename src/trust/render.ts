import type { TrustEntry } from './entries.js';
import type { TrustStatus } from './status.js';

const MAX_TEXT = 200;

/**
 * What is shown escaped: C0 and C1 controls (escape sequences), DEL, the invisible and reordering
 * characters (bidi overrides, zero widths, line separators, BOM), lone surrogates, and the
 * backslash itself (so an escape shown is never one the repository wrote). Quotes are shown as
 * they are: they hide nothing.
 */
const HIDDEN = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\\]|\p{Cs}/gu;
const SHORT: Readonly<Record<string, string>> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * A repository's text for the terminal, every character of it visible. NOTE: not
 * util/terminal-text.ts, which removes a sequence whole: what a person is asked to trust must hide
 * nothing, not even inside a sequence.
 */
const escaped = (text: string) =>
  text.replace(HIDDEN, (c) => SHORT[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * One entry on one line: its file, its key, its text, everything a repository wrote shown escaped
 * (a key is a repository's text too: an event or server name). `full`: never cut (what `agentbox
 * trust` shows before it asks: a command hidden past the cut must not be trusted unseen).
 */
export function entryLine(entry: TrustEntry, full = false): string {
  const text = escaped(entry.text);
  const cut =
    !full && text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}… (agentbox trust shows it whole)` : text;
  const instead = entry.instead ? `  (${escaped(entry.instead)})` : '';
  return `  ${entry.file}  ${escaped(entry.key)}: ${cut}${instead}`;
}

/**
 * What a command says, every time, when the repository's entries are not used: each of them, and
 * the command that trusts them. Empty when there is nothing to say.
 */
export function untrustedNotice(status: TrustStatus): string {
  // The trust file's problem matters only where there is something to trust.
  if (status.trusted) return '';
  const why = status.state === 'changed' ? 'changed since you trusted this repository' : 'not trusted yet';
  return [
    ...(status.storeProblem ? [`agentbox: ${status.storeProblem}`] : []),
    `agentbox: this repository carries settings that run commands, weaken the box or loosen your limits, ${why}; they are NOT used:`,
    ...status.entries.map((e) => entryLine(e)),
    'agentbox: review them, then run `agentbox trust` to use them',
    '',
  ].join('\n');
}

/** The event a run logs when it goes without the repository's entries. */
export function trustEvent(status: TrustStatus): Record<string, unknown> {
  return {
    event: 'trust_required',
    state: status.state,
    entries: status.entries.map((e) => ({ file: e.file, key: e.key, text: e.text })),
    hint: 'agentbox trust',
  };
}
