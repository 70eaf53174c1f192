import { describe, expect, it } from 'vitest';
import { isLoopbackHost, someNames } from '../../src/commands/ui.js';

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

describe('isLoopbackHost (agentbox ui --host: the warning that others can reach it)', () => {
  it('this machine alone by any spelling, the IPv4-mapped one included (found by QA: ::ffff:127.0.0.1 warned); anything else is not', () => {
    for (const host of [
      '127.0.0.1',
      '127.1.2.3',
      'localhost',
      'LOCALHOST',
      '::1',
      '[::1]',
      '::ffff:127.0.0.1',
    ])
      expect(isLoopbackHost(host), host).toBe(true);
    for (const host of [
      '0.0.0.0',
      '10.0.0.7',
      '::ffff:10.0.0.7',
      '127.0.0.256',
      'example.com',
      '::',
      '128.0.0.1',
    ])
      expect(isLoopbackHost(host), host).toBe(false);
  });
});
