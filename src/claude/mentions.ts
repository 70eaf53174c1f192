import fs from 'node:fs';
import path from 'node:path';

/**
 * Claude Code attaches the file an `@path` names to a prompt — an `@` at the start of the text or
 * after white space — reading it in its own process, outside the sandbox. Measured with 2.1.330:
 * `@/tmp/x`, `@~/x` and `@"/tmp/x"` in a `claude -p` prompt, after a space, a newline, a tab, a
 * no-break or an ideographic space, each put the file's text into the request; after a backtick,
 * a bracket, a quote or a zero-width character, none did; a Stop hook's reason is not read for
 * them. So a task, a template or a revision's feedback could hand the agent a file its read fence
 * denies (`~/.ssh/id_rsa`), and a fetched run's task or a repository's template is a stranger's.
 */
const MENTION = /(^|\s)@("[^"]*"|[^\s"]\S*)/gu;

/** A word joiner: invisible, not white space, so the `@` after it starts no mention. */
const JOINER = '\u2060';

/** The paths a mention's word may name, as Claude Code could read it (quotes, `~`, a line suffix, a last stop). Pure. */
export function mentionPaths(word: string, cwd: string, home: string | undefined): string[] {
  const bare = word.startsWith('"') ? word.slice(1, -1) : word;
  const spellings = new Set([bare, bare.replace(/#.*$/, ''), bare.replace(/[.,;:!?)\]}'"]+$/, '')]);
  return [...spellings]
    .filter((s) => s !== '')
    .map((s) => (s === '~' || s.startsWith('~/') ? (home ? path.join(home, s.slice(1)) : s) : s))
    .map((s) => path.resolve(cwd, s));
}

/**
 * `text` with each mention of a file the run may not read kept as text: a word joiner before its
 * `@`, so Claude Code attaches nothing and the model reads the words as written. A mention of what
 * the run may read (`@src/app.ts`), or of nothing that exists, stays as it is: Claude Code attaches
 * what the agent could read anyway, or nothing. Returns the mentions kept as text.
 */
export function asText(
  text: string,
  where: {
    readonly cwd: string;
    readonly home: string | undefined;
    readonly mayRead: (real: string) => boolean;
  },
): { text: string; kept: string[] } {
  const kept: string[] = [];
  const out = text.replace(MENTION, (whole, before: string, word: string) => {
    const denied = mentionPaths(word, where.cwd, where.home).some((p) => {
      try {
        return !where.mayRead(fs.realpathSync(p));
      } catch {
        return false;
      }
    });
    if (!denied) return whole;
    kept.push(`@${word}`.slice(0, 200));
    return `${before}${JOINER}@${word}`;
  });
  return { text: out, kept };
}
