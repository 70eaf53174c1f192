import { terminalExact } from '../util/terminal-text.js';

/*
 * A run's diff for a terminal, in git's colours, with nothing the agent wrote obeyed by it.
 *
 * A file's content reaches a diff byte for byte, escape sequences and all, and a colour sequence
 * in a file is the same bytes as one git adds: no pattern tells them apart in one output. Two do:
 * git's coloured diff is its plain diff with SGR sequences (`ESC [ … m`) inserted, nothing else
 * changed — the same diff, the same configuration. So both are asked for, and walked side by
 * side: everything the plain diff holds is content (file names, lines, git's own words) and is
 * shown exact (terminalExact: every control escaped, `\x1b[31m` in a file reads as that text);
 * only a sequence the coloured diff has and the plain one does not is git's, and passes.
 *
 * Why that cannot pass a sequence from a file: the walk is greedy — a position in the coloured
 * diff is content whenever the plain diff continues with the same bytes there — so for each
 * distinct sequence, as many pass as the coloured diff holds more of it than the plain diff: the
 * ones git added. Content can at most move one of git's colour changes past an identical sequence
 * of its own, which is shown escaped either way. When the two do not line up (something else
 * differs), null: the caller shows the plain diff, exact, without colours.
 */

/** A colour sequence: Select Graphic Rendition, all git's `color.*` settings can produce. */
const SGR = /\x1b\[[0-9;]*m/y;

/**
 * git's `coloured` diff with only git's colours passing and every other control shown escaped,
 * given the `plain` diff of the same change; null when the two are not the same diff but for
 * colours. Pure.
 */
export function keepGitColours(coloured: string, plain: string): string | null {
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < coloured.length) {
    const esc = coloured.indexOf('\x1b', i);
    const end = esc === -1 ? coloured.length : esc;
    if (end > i) {
      const text = coloured.slice(i, end);
      if (!plain.startsWith(text, j)) return null;
      out.push(terminalExact(text));
      i = end;
      j += text.length;
      continue;
    }
    SGR.lastIndex = i;
    const sequence = SGR.exec(coloured)?.[0];
    if (sequence !== undefined && !plain.startsWith(sequence, j)) {
      out.push(sequence); // git's: the plain diff has no such bytes here
      i += sequence.length;
      continue;
    }
    // An ESC of the content (a sequence in a file, or a lone ESC): shown, never obeyed.
    if (plain[j] !== '\x1b') return null;
    out.push(terminalExact('\x1b'));
    i += 1;
    j += 1;
  }
  return j === plain.length ? out.join('') : null;
}

/** What a terminal is shown of a diff: git's colours over exact content, or the plain diff exact. Pure. */
export function diffForTerminal(plain: string, coloured: string | null): string {
  return (coloured === null ? null : keepGitColours(coloured, plain)) ?? terminalExact(plain);
}
