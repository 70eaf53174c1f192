/*
 * Text agentbox did not write — an agent's answer, a tool call's input, a task, a file name, a
 * file's content in a diff, a fetched publication — made safe for a terminal: the one sanitiser
 * (docs/security.md, "Text from the agent on your terminal"). Two renderings of one rule:
 * - prose (`terminalText`, `terminalLine`: an answer, a report, a task, a message): escape
 *   sequences are removed whole (a clipboard write, a link, a title, a cursor move, colours);
 * - exact (`terminalExact`, `terminalName`: git's output about the agent's files, a diff's
 *   content, a file name, a path): nothing is removed, since a name without its sequence is
 *   another file's name, and a reviewer must see the sequence a file holds; a name is quoted as
 *   git quotes one, so it is told apart from every other.
 * Either way every control character left is shown escaped (`\x1b`, `\x9b`, `\u202e`), so nothing
 * that reaches the terminal is an instruction to it, and nothing hidden stays invisible. agentbox's
 * own colours are added after this (git's, in a diff: src/review/diff-text.ts).
 *
 * NOTE: hand-written, not strip-ansi: strip-ansi only removes the sequences its regex (ansi-regex)
 * knows, and leaves lone controls (a bare ESC, BEL, a C1 byte, CR, a bidi override) in place; the
 * forms it knows changed a lot between the 6.x versions a lock file may resolve to. The invariant
 * here does not depend on recognising every sequence: the final pass escapes any control left, so
 * a sequence the first pass misses reaches the terminal as visible text, never as a sequence.
 */

/** A terminated string sequence: OSC, DCS, SOS, PM, APC (7-bit or C1 introducer), up to BEL or ST. */
const STRING_SEQ = String.raw`(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x18\x1a\x1b\x80-\x9f]*(?:\x07|\x1b\\|\x9c)`;
/** A CSI sequence: ESC [ or the C1 CSI 0x9b, parameters, intermediates, one final byte. */
const CSI_SEQ = String.raw`(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]`;
/** Any other escape: ESC, intermediates, a final byte (ESC 7, ESC ( B, ESC c; an unterminated ESC ] too). */
const ESC_SEQ = String.raw`\x1b[\x20-\x2f]*[\x30-\x7e]`;
const SEQUENCES = new RegExp(`${STRING_SEQ}|${CSI_SEQ}|${ESC_SEQ}`, 'g');

/**
 * What is shown escaped: C0 controls but \n and \t, DEL, C1 controls, and the invisible
 * bidirectional controls that reorder what a line seems to say (Trojan Source, CVE-2021-42574):
 * the embeddings and overrides U+202A–U+202E, the isolates U+2066–U+2069, and the marks
 * U+061C, U+200E, U+200F.
 */
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const QUICK = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/**
 * `text` with every control of the set above shown as `⟨U+XXXX⟩`: the web page's form (web/dom.js
 * holds the same set for the browser), for text rendered to HTML on the server. Pure.
 */
export function visibleControls(text: string): string {
  return QUICK.test(text)
    ? text.replace(CONTROLS, (c) => `⟨U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}⟩`)
    : text;
}

const escaped = (c: string): string => {
  const code = c.charCodeAt(0);
  return code < 0x100
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
};

/** `text` without its escape sequences (whole: `ESC ] 0 ; t BEL`, not only the ESC). Pure. */
export function withoutSequences(text: string): string {
  return QUICK.test(text) ? text.replace(SEQUENCES, '') : text;
}

/**
 * Text for the terminal, lines kept: escape sequences removed, other controls shown escaped, CRLF
 * read as a line end. Pure.
 */
export function terminalText(text: string): string {
  // NOTE: tested first: nearly all text is clean already, and the replaces cost twice as much.
  if (!QUICK.test(text)) return text;
  return text.replace(/\r\n/g, '\n').replace(SEQUENCES, '').replace(CONTROLS, escaped);
}

/**
 * Text for one line of the terminal (a file name, a task in a column, a tool's target): as
 * terminalText, and a line end or tab in it is shown escaped, so it cannot start a line of its own
 * that looks like agentbox's. Pure.
 */
export function terminalLine(text: string): string {
  const clean = terminalText(text);
  return /[\n\t]/.test(clean) ? clean.replace(/\n/g, '\\n').replace(/\t/g, '\\t') : clean;
}

/**
 * Text for the terminal exactly as written: nothing removed, every control shown escaped (an
 * escape sequence's ESC too, so `\x1b]0;title\x07` reads as what it is), lines and tabs kept. For
 * git's output about the agent's files (a diffstat, apply's "create mode" lines, a diff's
 * content), which names files as they are. Pure.
 */
export function terminalExact(text: string): string {
  return QUICK.test(text) ? text.replace(CONTROLS, escaped) : text;
}

/** Every control of a name, line ends and tabs included. */
const NAME_CONTROLS = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** What makes a name quoted: a control, or a quote or backslash (which the quoted form escapes). */
const NAME_QUOTED = /["\\\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
const SHORT: Readonly<Record<string, string>> = { '\n': '\\n', '\t': '\\t', '"': '\\"', '\\': '\\\\' };

/**
 * A name on one line (a file, a path, a folder): the real one, told apart from every other. As
 * git quotes a path (core.quotePath): a name that holds a control character, a `"` or a `\` is
 * shown in double quotes, with those escaped (`"ev\x1b]0;t\x07il.txt"`, `"a\nb"`, `"c:\\x"`), so
 * a quoted name is always an escaped one and a bare one is exactly as written. Pure.
 */
export function terminalName(text: string): string {
  if (!NAME_QUOTED.test(text)) return text;
  const inner = text
    .replace(/["\\]/g, (c) => SHORT[c]!)
    .replace(NAME_CONTROLS, (c) => SHORT[c] ?? escaped(c));
  return `"${inner}"`;
}

/**
 * `value` with every string in it (at any depth) made one printable line (terminalLine): a record
 * read from disk — a fetched run's meta.yaml and state.json are a stranger's — before its fields
 * are printed one by one. Pure.
 */
export function terminalRecord<T>(value: T): T {
  if (typeof value === 'string') return terminalLine(value) as T;
  if (Array.isArray(value)) return value.map((item) => terminalRecord(item)) as T;
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, terminalRecord(v)])) as T;
  return value;
}
