import { describe, expect, it } from 'vitest';
import { isEscKey, titleState } from '../../src/interactive/screen.js';

describe('what claude’s screen says', () => {
  it.each([
    ['\u001b]0;✳ Claude Code\u0007', 'idle'],
    ['\u001b]0;◐ Claude Code\u0007', 'busy'],
    ['\u001b]0;◑ Claude Code\u0007\u001b[2K', 'busy'],
    ['\u001b]0;◐ Claude Code\u0007 text \u001b]0;✳ Claude Code\u0007', 'idle'],
    ['\u001b]2;✳ Claude Code\u001b\\', 'idle'],
    ['\u001b]0;vim\u0007', null],
    ['plain output', null],
  ])('%j: %s', (chunk, expected) => {
    expect(titleState(chunk)).toBe(expected);
  });

  it('Esc alone is the Esc key; an arrow key or Alt+x is not', () => {
    expect(isEscKey('\u001b')).toBe(true);
    expect(isEscKey(Buffer.from([0x1b]))).toBe(true);
    expect(isEscKey('\u001b[A')).toBe(false);
    expect(isEscKey('\u001bx')).toBe(false);
    expect(isEscKey('x')).toBe(false);
  });
});
