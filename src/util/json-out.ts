/**
 * JSON that agentbox prints (every `--json` output, `show --transcript --json`'s lines): a run's
 * task, an agent's answer, a file name, a fetched run's records are text an agent or a remote wrote,
 * and a person runs these commands on a terminal too, not only into a pipe.
 */

/**
 * What JSON.stringify leaves raw but a terminal acts on or hides: DEL, the C1 controls (U+009B is
 * a one-byte CSI some terminals obey), the bidirectional controls that reorder what a line seems
 * to say (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), and the line and paragraph
 * separators U+2028 and U+2029. C0 controls JSON.stringify escapes itself.
 */
const RAW_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * JSON.stringify, with those characters written as `\uXXXX` escapes: the text parses back to the
 * same value, and nothing in it is an instruction to a terminal. Other non-ASCII (é, 日本, 🙂) is
 * left as it is. Pure.
 */
export function terminalJson(value: unknown, space?: number): string {
  return JSON.stringify(value, null, space).replace(
    RAW_IN_JSON,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
