import { describe, expect, it } from 'vitest';
import { someNames } from '../../src/commands/ui.js';

describe('someNames (agentbox ui, the interrupted runs it names at start)', () => {
  it('names them all when they are few, the first five and a count when they are many', () => {
    expect(someNames([])).toBe('');
    expect(someNames(['a', 'b'])).toBe('a, b');
    expect(someNames(['a', 'b', 'c', 'd', 'e'])).toBe('a, b, c, d, e');
    const many = Array.from({ length: 2001 }, (_, i) => `run-${i}`);
    expect(someNames(many)).toBe(
      'run-0, run-1, run-2, run-3, run-4 and 1,996 more (agentbox recover --dry-run lists them)',
    );
  });
});
