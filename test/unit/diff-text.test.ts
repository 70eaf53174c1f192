import { describe, expect, it } from 'vitest';
import { diffForTerminal, keepGitColours } from '../../src/review/diff-text.js';

const ESC = '\x1b';
const BEL = '\x07';
const GREEN = `${ESC}[32m`;
const RED = `${ESC}[31m`;
const BOLD = `${ESC}[1m`;
const RESET = `${ESC}[m`;

/** What a terminal may be given from a diff: text, line ends, tabs, and colour sequences (SGR). */
const OUTSIDE_SGR = /\x1b(?!\[[0-9;]*m)|[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

describe('keepGitColours: only the colours git added pass', () => {
  it.each([
    ['a clean diff keeps git’s colours', `${GREEN}+a${RESET}\n`, '+a\n', `${GREEN}+a${RESET}\n`],
    [
      'an OSC 52 in a file is shown, git’s colour around it kept',
      `${GREEN}+x${ESC}]52;c;Y3Vy${BEL}${RESET}\n`,
      `+x${ESC}]52;c;Y3Vy${BEL}\n`,
      `${GREEN}+x\\x1b]52;c;Y3Vy\\x07${RESET}\n`,
    ],
    [
      'a colour in a file is shown, though it is the same bytes as git’s',
      `${GREEN}+${RESET}${GREEN}${RED}red${RESET}\n`,
      `+${RED}red\n`,
      `${GREEN}+${RESET}${GREEN}\\x1b[31mred${RESET}\n`,
    ],
    [
      'a file’s sequence identical to git’s next one: git’s count passes, the file’s is shown',
      `${GREEN}+${GREEN}x${RESET}\n`,
      `+${GREEN}x\n`,
      // Greedy: the first GREEN is git's, the second matches the file's — shown.
      `${GREEN}+\\x1b[32mx${RESET}\n`,
    ],
    [
      'a file starting with git’s own colour: as many pass as git added',
      `${GREEN}${GREEN}x${RESET}\n`,
      `${GREEN}x\n`,
      `\\x1b[32m${GREEN}x${RESET}\n`,
    ],
    ['a lone ESC in a file', `${BOLD}a${ESC}b${RESET}`, `a${ESC}b`, `${BOLD}a\\x1bb${RESET}`],
    ['a 8-bit CSI in a file', `${GREEN}+\x9b2J${RESET}`, '+\x9b2J', `${GREEN}+\\x9b2J${RESET}`],
    ['a bidi override in a file', `${GREEN}+a\u202eb${RESET}`, '+a\u202eb', `${GREEN}+a\\u202eb${RESET}`],
    [
      'a CR in a file (CRLF)',
      `${GREEN}+a${RESET}${ESC}[41m\r${RESET}\n`,
      '+a\r\n',
      `${GREEN}+a${RESET}${ESC}[41m\\x0d${RESET}\n`,
    ],
    ['tabs and lines stay', `${GREEN}+\ta${RESET}\n\n`, '+\ta\n\n', `${GREEN}+\ta${RESET}\n\n`],
    [
      '256 and true colours are git’s too',
      `${ESC}[38;5;208m+a${ESC}[38;2;1;2;3mb${RESET}`,
      '+ab',
      `${ESC}[38;5;208m+a${ESC}[38;2;1;2;3mb${RESET}`,
    ],
  ])('%s', (_, coloured, plain, expected) => {
    const shown = keepGitColours(coloured, plain);
    expect(shown).toBe(expected);
    expect(shown).not.toMatch(OUTSIDE_SGR);
  });

  it.each([
    ['a differing text', `${GREEN}+a${RESET}`, '+b'],
    ['a non-colour sequence only in the coloured one', `${ESC}]0;t${BEL}+a`, '+a'],
    ['the coloured one shorter', `${GREEN}+a`, '+ab'],
    ['the coloured one longer', `${GREEN}+ab`, '+a'],
  ])('%s: null, the two are not one diff', (_, coloured, plain) => {
    expect(keepGitColours(coloured, plain)).toBeNull();
  });

  /** A plain diff from random parts, and git's colours inserted between them or anywhere. */
  function fuzz(seed: number, between: 'parts' | 'characters') {
    const parts = [GREEN, RED, RESET, ESC, '[', 'm', '3', 'a', '\n', BEL, `${ESC}]0;t`, '\x9b'];
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    const pieces = Array.from({ length: 1 + (next() % 10) }, () => parts[next() % parts.length]!);
    const units = between === 'parts' ? pieces : [...pieces.join('')];
    let coloured = '';
    const added: string[] = [];
    for (const unit of units) {
      if (next() % 3 === 0) {
        const seq = [GREEN, RED, RESET][next() % 3]!;
        coloured += seq;
        added.push(seq);
      }
      coloured += unit;
    }
    return { plain: pieces.join(''), coloured, added };
  }

  /** What passed is git's colours, as many of each as git added; nothing else is left to obey. */
  function expectOnlyGits(shown: string, added: readonly string[], what: string) {
    const passed = shown.match(/\x1b\[[0-9;]*m/g) ?? [];
    for (const seq of [GREEN, RED, RESET])
      expect(passed.filter((p) => p === seq).length, what).toBe(added.filter((a) => a === seq).length);
    expect(shown.replace(/\x1b\[[0-9;]*m/g, ''), what).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
  }

  it('git’s colours between the parts of a diff (where git puts them): always lined up, only git’s pass', () => {
    for (let n = 1; n <= 3000; n++) {
      const { plain, coloured, added } = fuzz(n, 'parts');
      const shown = keepGitColours(coloured, plain);
      expect(shown, JSON.stringify({ coloured, plain })).not.toBeNull();
      expectOnlyGits(shown!, added, JSON.stringify({ coloured, plain }));
    }
  });

  it('git’s colours anywhere, inside a file’s own sequence too: lined up or null, never a file’s sequence passed', () => {
    let lined = 0;
    for (let n = 1; n <= 3000; n++) {
      const { plain, coloured, added } = fuzz(n, 'characters');
      const shown = keepGitColours(coloured, plain);
      if (shown === null) continue;
      lined++;
      expectOnlyGits(shown, added, JSON.stringify({ coloured, plain }));
    }
    expect(lined).toBeGreaterThan(2000);
  });
});

describe('diffForTerminal', () => {
  it('without colours, or when the two do not line up: the plain diff, exact', () => {
    expect(diffForTerminal(`+${ESC}]0;t${BEL}\n`, null)).toBe('+\\x1b]0;t\\x07\n');
    expect(diffForTerminal(`+${RED}a\n`, `${GREEN}+b`)).toBe('+\\x1b[31ma\n');
  });
});
