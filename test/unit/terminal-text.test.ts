import { describe, expect, it } from 'vitest';
import { shortTask } from '../../src/ledger/text.js';
import {
  terminalExact,
  terminalLine,
  terminalName,
  terminalText,
  withoutSequences,
} from '../../src/util/terminal-text.js';

const ESC = '\x1b';
const BEL = '\x07';
const ST = `${ESC}\\`;

/** Every character a terminal may take as an instruction; none may survive. */
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe('terminalText', () => {
  it.each([
    ['plain text stays', 'fixed the bug in src/a.ts', 'fixed the bug in src/a.ts'],
    ['lines and tabs stay', 'a\n\tb\n', 'a\n\tb\n'],
    ['CRLF is a line end', 'a\r\nb', 'a\nb'],
    ['unicode stays', 'café — ✓ 日本', 'café — ✓ 日本'],
    ['OSC 52 clipboard write (BEL)', `a${ESC}]52;c;Y3VybCBldmlsLnNofHNo${BEL}b`, 'ab'],
    ['OSC 52 clipboard write (ST)', `a${ESC}]52;c;Y3Vy+/=${ST}b`, 'ab'],
    ['OSC 8 link', `${ESC}]8;;https://evil.example${ST}docs${ESC}]8;;${ST}`, 'docs'],
    ['title change', `${ESC}]0;pwned${BEL}x`, 'x'],
    ['title change, C1 OSC and C1 ST', `\x9d2;pwned\x9cx`, 'x'],
    ['cursor movement', `ok${ESC}[2A${ESC}[1;1H${ESC}[2Kdone`, 'okdone'],
    ['colours', `${ESC}[31mred${ESC}[0m`, 'red'],
    ['8-bit CSI', `a\x9b2Jb`, 'ab'],
    ['DCS', `a${ESC}Pq#0;2;0;0;0${ST}b`, 'ab'],
    ['APC, PM, SOS', `${ESC}_x${ST}${ESC}^y${ST}${ESC}Xz${ST}!`, '!'],
    ['save/restore cursor, charset, reset', `${ESC}7${ESC}(0${ESC}c${ESC}8.`, '.'],
    ['an unterminated OSC loses its introducer only', `${ESC}]52;c;abc`, '52;c;abc'],
    ['a lone ESC is shown', `a${ESC}`, 'a\\x1b'],
    ['a sequence made by removing another is shown', `${ESC}${ESC}[0m[31m`, '\\x1b[31m'],
    ['BEL, backspace, CR are shown', `a${BEL}b\bc\rd`, 'a\\x07b\\x08c\\x0dd'],
    ['DEL and C1 are shown', 'a\x7fb\x85c', 'a\\x7fb\\x85c'],
    ['bidi override is shown', 'x = 1 \u202e// ok\u202c', 'x = 1 \\u202e// ok\\u202c'],
    ['isolates are shown', '\u2066a\u2069', '\\u2066a\\u2069'],
  ])('%s', (_, input, expected) => {
    expect(terminalText(input)).toBe(expected);
  });

  it('leaves no control in any mix of sequences and bytes', () => {
    const parts = [
      ESC,
      '[',
      ']',
      'P',
      '\\',
      BEL,
      '\x9b',
      '\x9c',
      '\x9d',
      '0',
      ';',
      'm',
      'a',
      '\n',
      '\r',
      '\u202e',
    ];
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    for (let i = 0; i < 3000; i++) {
      const s = Array.from({ length: 1 + (next() % 12) }, () => parts[next() % parts.length]).join('');
      expect(terminalText(s), JSON.stringify(s)).not.toMatch(UNSAFE);
    }
  });
});

describe('terminalLine', () => {
  it.each([
    ['a name stays', 'src/a.ts', 'src/a.ts'],
    ['a line end is shown', 'a\nb\tc', 'a\\nb\\tc'],
    ['escapes go too', `evil${ESC}]0;t${BEL}.ts`, 'evil.ts'],
  ])('%s', (_, input, expected) => {
    expect(terminalLine(input)).toBe(expected);
  });
});

describe("terminalExact: git's output about the agent's files, a diff's content", () => {
  it.each([
    ['plain text stays', 'create mode 100644 src/a.ts\n', 'create mode 100644 src/a.ts\n'],
    ['lines and tabs stay', '+a\n+\tb\n', '+a\n+\tb\n'],
    [
      'a colour in a name is shown, not removed',
      `create mode 100644 ev${ESC}[31mil.txt`,
      'create mode 100644 ev\\x1b[31mil.txt',
    ],
    ['OSC 52 is shown whole', `+${ESC}]52;c;Y3Vy${BEL}`, '+\\x1b]52;c;Y3Vy\\x07'],
    ['title (ST)', `${ESC}]0;t${ST}`, '\\x1b]0;t\\x1b\\'],
    ['8-bit CSI and C1 ST', '\x9b2J\x9c', '\\x9b2J\\x9c'],
    ['CR is shown (a CRLF line says so)', 'a\r\nb\rc', 'a\\x0d\nb\\x0dc'],
    ['bidi override and isolate', 'x\u202ey\u2066z', 'x\\u202ey\\u2066z'],
    ['DEL', 'a\x7f', 'a\\x7f'],
    ['unicode stays', 'café — ✓ 日本', 'café — ✓ 日本'],
  ])('%s', (_, input, expected) => {
    expect(terminalExact(input)).toBe(expected);
  });
});

describe('terminalName: a file name or a path, on one line, told apart from every other', () => {
  it.each([
    ['a name stays', 'src/a.ts', 'src/a.ts'],
    ['unicode stays', 'docs/café.md', 'docs/café.md'],
    ['a title escape is shown, quoted, not removed', `evil${ESC}]0;t${BEL}.ts`, '"evil\\x1b]0;t\\x07.ts"'],
    ['a colour', `ev${ESC}[31mil`, '"ev\\x1b[31mil"'],
    ['a line end and a tab', 'a\nb\tc', '"a\\nb\\tc"'],
    ['bidi override', 'invoice\u202etxt.exe', '"invoice\\u202etxt.exe"'],
    ['C1', 'a\x85b', '"a\\x85b"'],
    ['a backslash is quoted: the escapes cannot be typed', 'a\\x1b', '"a\\\\x1b"'],
    ['a double quote too', 'say "hi"', '"say \\"hi\\""'],
  ])('%s', (_, input, expected) => {
    expect(terminalName(input)).toBe(expected);
  });

  it('leaves no control, line end or tab, and different names stay different', () => {
    const names = [
      'a',
      `a${ESC}[0m`,
      `a${ESC}`,
      'a\n',
      'a\\n',
      'a\\x1b',
      '"a\\n"',
      'a\u202e',
      'a\t',
      'a\x07',
    ];
    const shown = names.map(terminalName);
    for (const s of shown) expect(s).not.toMatch(/[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
    expect(new Set(shown).size).toBe(names.length);
  });
});

describe('a task as the ledger’s listings keep it (status’s column): a sequence goes whole', () => {
  it.each([
    ['an OSC title', 'EDIT \x1b]0;tasktitle\x07 task', 'EDIT  task'],
    ['a clear screen', 'a \x1b[2J b', 'a  b'],
    ['an 8-bit CSI', 'a \x9b31m b', 'a  b'],
    ['lines', 'one\ntwo\r\nthree', 'one two three'],
    ['plain', 'fix the login', 'fix the login'],
  ])('%s', (_what, task, kept) => {
    expect(shortTask(task)).toBe(kept);
    expect(withoutSequences(task)).not.toMatch(/\]0;|\[2J/);
  });
});
