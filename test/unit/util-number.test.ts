import { describe, expect, it } from 'vitest';
import { thousands } from '../../src/util/number.js';

describe('thousands', () => {
  it.each([0, 7, 999, 1000, 12345, 1234567, -1234567, 10000])(
    '%i reads as toLocaleString("en-US") does',
    (n) => {
      expect(thousands(n)).toBe(n.toLocaleString('en-US'));
    },
  );
});
