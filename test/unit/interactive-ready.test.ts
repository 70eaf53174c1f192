import { describe, expect, it } from 'vitest';
import { type ScreenWait, screenReady } from '../../src/interactive/ready.js';

const T = 1_000_000;
const at = (ms: number) => T + ms;

describe('screenReady', () => {
  it.each<[string, ScreenWait, boolean]>([
    // After a SessionStart: settled (800 ms) and quiet (300 ms).
    [
      'a SessionStart a moment ago, nothing drawn',
      { now: at(100), since: T, lastOutputAt: 0, settleMs: 800 },
      false,
    ],
    ['settled, nothing drawn since', { now: at(800), since: T, lastOutputAt: 0, settleMs: 800 }, true],
    [
      'settled, but claude is still drawing',
      { now: at(900), since: T, lastOutputAt: at(700), settleMs: 800 },
      false,
    ],
    ['settled and quiet for 300 ms', { now: at(1000), since: T, lastOutputAt: at(700), settleMs: 800 }, true],
    [
      'drawing for long: still not ready',
      { now: at(60_000), since: T, lastOutputAt: at(59_950), settleMs: 800 },
      false,
    ],
    // Quiet since the wait began too: output before it does not count as quiet time.
    ['a wait just begun after a quiet minute', { now: at(100), since: T, lastOutputAt: T - 60_000 }, false],
    ['quiet for 300 ms since the wait began', { now: at(300), since: T, lastOutputAt: T - 60_000 }, true],
    ['drawn 299 ms ago', { now: at(1299), since: T, lastOutputAt: at(1000) }, false],
    // The cap: ready however long claude keeps drawing.
    ['still drawing at the cap', { now: at(3000), since: T, lastOutputAt: at(2990), maxMs: 3000 }, true],
    ['still drawing before the cap', { now: at(2999), since: T, lastOutputAt: at(2990), maxMs: 3000 }, false],
  ])('%s → %s', (_, wait, ready) => {
    expect(screenReady(wait)).toBe(ready);
  });
});
