import { describe, expect, it } from 'vitest';
import { parseGitVersion } from '../../src/doctor/checks.js';

describe('parseGitVersion', () => {
  it.each([
    ['git version 2.39.5', { major: 2, minor: 39, patch: 5 }],
    ['git version 2.17.0.windows.1', { major: 2, minor: 17, patch: 0 }],
    ['git version 2.39.3 (Apple Git-146)', { major: 2, minor: 39, patch: 3 }],
    ['git version 3.0', { major: 3, minor: 0, patch: 0 }],
    ['bash: git: command not found', null],
  ])('%j', (text, expected) => {
    expect(parseGitVersion(text)).toEqual(expected);
  });
});
