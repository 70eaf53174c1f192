import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resultsText } from '../../src/commands/doctor.js';
import { DEFAULT_CONFIG } from '../../src/config/schema.js';
import { checkTrust } from '../../src/doctor/checks.js';
import { checkSetup } from '../../src/doctor/setup.js';
import { checkVerify } from '../../src/doctor/templates.js';
import { untrustedRuns } from '../../src/doctor/untrusted.js';
import { findRepo } from '../../src/git/repo.js';
import type { TrustEntry, TrustStatus } from '../../src/trust/index.js';
import { agentbox } from '../helpers/cli.js';
import { gitRepo, tempDir } from '../helpers/git-repo.js';

const plain = (t: string) => t;
const PLAIN = { ok: plain, warn: plain, bad: plain, dim: plain, bold: plain, cyan: plain };

const VERIFY: TrustEntry = { file: 'agentbox.yaml', key: 'runs.verify', text: 'npm test' };
const SETUP: TrustEntry = { file: 'agentbox.yaml', key: 'runs.setup', text: 'npm ci' };
const HOOK: TrustEntry = { file: '.claude/settings.json', key: 'hooks.Stop', text: 'make lint' };

const untrusted = (entries: TrustEntry[]): TrustStatus => ({
  root: '/repo',
  entries,
  hash: 'h',
  state: 'untrusted',
  trusted: false,
  storeFile: undefined,
});

describe('doctor: what the repository sets and the person has not trusted yet', () => {
  it('the trust check lists each entry on a line of its own under it, no line end shown escaped', () => {
    const text = resultsText(PLAIN, [checkTrust(untrusted([VERIFY, SETUP]))], 1);
    expect(text.split('\n').slice(0, 4)).toEqual([
      '✗ workspace trust  2 entries not trusted, not used:',
      '                     agentbox.yaml  runs.verify: npm test',
      '                     agentbox.yaml  runs.setup: npm ci',
      '                   fix: review them, then run "agentbox trust"',
    ]);
    expect(text).not.toContain('\\n');
  });

  it('an entry with a line end of its own stays on its line', () => {
    const text = resultsText(
      PLAIN,
      [checkTrust(untrusted([{ ...VERIFY, text: 'npm test\n✓ all good' }]))],
      1,
    );
    expect(text).toContain('  agentbox.yaml  runs.verify: npm test\\n✓ all good\n');
    expect(text.split('\n').filter((l) => l.startsWith('✓'))).toEqual([]);
  });

  it('untrustedRuns: the runs.* entries of an untrusted repository; none once it is trusted', () => {
    expect(untrustedRuns(untrusted([HOOK, VERIFY, SETUP]))).toEqual([VERIFY, SETUP]);
    expect(untrustedRuns({ ...untrusted([VERIFY]), state: 'trusted', trusted: true })).toEqual([]);
    expect(untrustedRuns(undefined)).toEqual([]);
  });

  it('verify and setup say a command set but not trusted is not run, and name agentbox trust', async () => {
    const repo = await findRepo(gitRepo().dir);
    const env = { PATH: process.env.PATH };
    const verify = checkVerify(env, DEFAULT_CONFIG, true, [VERIFY, SETUP]);
    expect(verify).toEqual({
      name: 'verify',
      ok: false,
      skipped: true,
      detail:
        'runs.verify is set in agentbox.yaml but not trusted yet, so not run: review it, then run "agentbox trust"',
    });
    const setup = await checkSetup(repo, env, DEFAULT_CONFIG, [VERIFY, SETUP]);
    expect(setup).toMatchObject({ ok: false, skipped: true });
    expect(setup.detail).toBe(
      'runs.setup and runs.verify are set in agentbox.yaml but not trusted yet, so not run: review them, then run "agentbox trust"',
    );
    // Nothing set, nothing pending: as before.
    expect(checkVerify(env, DEFAULT_CONFIG, true).detail).toBe('runs.verify is not set: nothing to run');
    expect((await checkSetup(repo, env, DEFAULT_CONFIG)).detail).toBe(
      'runs.setup and runs.verify are not set',
    );
    // The person's own runs.setup is checked; the repository's runs.verify is said not run beside it.
    const own = { ...DEFAULT_CONFIG, runs: { ...DEFAULT_CONFIG.runs, setup: 'true' } };
    const mixed = await checkSetup(repo, env, own, [VERIFY]);
    expect(mixed.ok).toBe(true);
    expect(mixed.detail).toMatch(
      /^runs\.setup: .*; runs\.verify is set in agentbox\.yaml but not trusted yet/,
    );
  });

  it('agentbox doctor in a repository whose committed agentbox.yaml sets both, untrusted', async () => {
    const repo = gitRepo({ files: { 'agentbox.yaml': 'runs:\n  verify: npm test\n  setup: npm ci\n' } });
    const home = tempDir('agentbox-doctor-home-');
    fs.mkdirSync(path.join(home, '.config'), { recursive: true });
    const env = { PATH: process.env.PATH, HOME: home, XDG_STATE_HOME: path.join(home, 'state') };
    const doctor = await agentbox(['doctor'], { cwd: repo.dir, env });
    const lines = doctor.stdout.split('\n');
    const at = lines.findIndex((l) => l.includes('workspace trust'));
    expect(lines[at]).toMatch(/^✗ workspace trust +2 entries not trusted, not used:$/);
    expect(lines.slice(at + 1, at + 3).map((l) => l.trim())).toEqual([
      'agentbox.yaml  runs.verify: npm test',
      'agentbox.yaml  runs.setup: npm ci',
    ]);
    expect(doctor.stdout).toMatch(
      /^- verify +skipped: runs\.verify is set in agentbox\.yaml but not trusted yet/m,
    );
    expect(doctor.stdout).toMatch(
      /^- setup +skipped: runs\.setup and runs\.verify are set in agentbox\.yaml/m,
    );
    expect(doctor.stdout).not.toContain('is not set');
  });
});
