import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, runTimeout, type TIMEOUT_PROFILES } from '../../src/config/schema.js';

describe('supervisor.timeout_profile (the seed’s timeout profiles)', () => {
  const config = (timeout: string | null, profile: keyof typeof TIMEOUT_PROFILES) => ({
    ...DEFAULT_CONFIG,
    runs: { ...DEFAULT_CONFIG.runs, timeout },
    supervisor: { ...DEFAULT_CONFIG.supervisor, timeout_profile: profile },
  });
  it.each([
    ['the default', null, 'standard', '30m'],
    ['long', null, 'long', '2h'],
    ['extended', null, 'extended', '6h'],
    ['runs.timeout set wins over the profile', '45m', 'extended', '45m'],
  ] as const)('%s', (_label, timeout, profile, expected) => {
    expect(runTimeout(config(timeout, profile))).toBe(expected);
  });
});
