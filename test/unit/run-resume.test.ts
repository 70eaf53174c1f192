import { describe, expect, it } from 'vitest';
import { type Config, DEFAULT_CONFIG } from '../../src/config/schema.js';
import { buildMeta, configHash } from '../../src/ledger/meta.js';
import { ledgerPaths } from '../../src/ledger/paths.js';
import type { RunMeta, RunType } from '../../src/ledger/types.js';
import type { RunContext } from '../../src/run/begin/context.js';
import { buildEnvelope } from '../../src/run/begin/tier.js';
import { envelopeDrift } from '../../src/run/continue.js';

const ID = '0a1b2c';
const ROOT = '/repo';
const WORKTREE = `${ROOT}/.agents/worktrees/26-01-02_0304__fix-the-login__${ID}`;

interface ConfigChange {
  model?: string | null;
  fixAllowed?: readonly string[];
}

const config = (change: ConfigChange = {}): Config => ({
  ...DEFAULT_CONFIG,
  claude: { ...DEFAULT_CONFIG.claude, ...(change.model === undefined ? {} : { model: change.model }) },
  runs: {
    ...DEFAULT_CONFIG.runs,
    ...(change.fixAllowed === undefined ? {} : { fix_allowed_tools: change.fixAllowed }),
  },
});

const context = (change: ConfigChange = {}): RunContext => ({
  repo: { root: ROOT, worktreeRoot: ROOT, commonDir: `${ROOT}/.git` },
  ledger: ledgerPaths(ROOT),
  config: config(change),
  claudeBin: '/usr/local/bin/claude',
  trust: { root: ROOT, entries: [], hash: '', state: 'nothing', trusted: true, storeFile: '' },
});

/** meta.yaml as startRun writes it: the envelope from the config of the day, `--model` in options. */
function startedMeta(type: RunType, rc: RunContext, override?: string): RunMeta {
  return buildMeta({
    name: `26-01-02_0304__fix-the-login__${ID}`,
    id: ID,
    slug: 'fix-the-login',
    type,
    task: 'fix the login',
    envelope: buildEnvelope({
      type,
      runId: ID,
      model: override ?? rc.config.claude.model,
      worktree: type === 'fix' ? WORKTREE : null,
      fixAllowed: rc.config.runs.fix_allowed_tools,
    }),
    repoRoot: ROOT,
    repoShaStart: '1d13b648d980d8c88d5317ac3e8177c0f8e53455',
    now: new Date('2026-01-02T03:04:05Z'),
    options: { timeout_ms: 1_800_000, ...(override ? { model: override } : {}) },
  });
}

const worktreeOf = (type: RunType) => (type === 'fix' ? WORKTREE : null);

describe('envelopeDrift', () => {
  it.each<RunType>(['scout', 'plan', 'fix', 'review'])('%s: none when nothing changed', (type) => {
    const meta = startedMeta(type, context());
    expect(envelopeDrift(meta, context(), worktreeOf(type), {})).toEqual([]);
  });

  it.each<RunType>(['scout', 'fix'])('%s: names the model when claude.model changed', (type) => {
    const meta = startedMeta(type, context({ model: 'claude-opus-4-1' }));
    expect(envelopeDrift(meta, context({ model: 'claude-sonnet-4-5' }), worktreeOf(type), {})).toEqual([
      'model was "claude-opus-4-1", now "claude-sonnet-4-5"',
    ]);
    expect(envelopeDrift(meta, context({ model: null }), worktreeOf(type), {})).toEqual([
      'model was "claude-opus-4-1", now null',
    ]);
  });

  it('fix: names the pre-approved tools when runs.fix_allowed_tools changed', () => {
    const meta = startedMeta('fix', context());
    const drift = envelopeDrift(meta, context({ fixAllowed: ['Bash', 'WebFetch'] }), WORKTREE, {});
    expect(drift).toHaveLength(1);
    expect(drift[0]).toMatch(/^pre-approved tools were \[.*"Bash".*\], now \[.*"Bash","WebFetch".*\]$/);
  });

  it('fix: both changes are named, each once', () => {
    const meta = startedMeta('fix', context());
    const drift = envelopeDrift(meta, context({ model: 'opus', fixAllowed: [] }), WORKTREE, {});
    expect(drift).toHaveLength(2);
    expect(drift[0]).toBe('model was null, now "opus"');
    expect(drift[1]).toMatch(/^pre-approved tools were /);
  });

  it('a read-only run does not drift when runs.fix_allowed_tools changed (it has none)', () => {
    const meta = startedMeta('scout', context());
    expect(envelopeDrift(meta, context({ fixAllowed: ['Bash', 'WebFetch'] }), null, {})).toEqual([]);
  });

  it.each<RunType>(['scout', 'fix'])('%s: a --model override recorded in options is not drift', (type) => {
    const meta = startedMeta(type, context({ model: 'claude-sonnet-4-5' }), 'claude-opus-4-1');
    expect(meta.model).toBe('claude-opus-4-1');
    expect(meta.options?.model).toBe('claude-opus-4-1');
    expect(envelopeDrift(meta, context({ model: 'claude-sonnet-4-5' }), worktreeOf(type), {})).toEqual([]);
    // The configured model may even change since: the run keeps the one it was started with.
    expect(envelopeDrift(meta, context({ model: 'claude-haiku-4-5' }), worktreeOf(type), {})).toEqual([]);
  });

  it('a run whose worktree moved drifts in its pre-approved tools', () => {
    const meta = startedMeta('fix', context());
    const drift = envelopeDrift(meta, context(), '/elsewhere/wt', {});
    expect(drift).toHaveLength(1);
    expect(drift[0]).toContain('pre-approved tools were');
    expect(drift[0]).toContain('/elsewhere/wt');
  });

  it('a meta.yaml from another agentbox (other commands) names the commands', () => {
    const meta = startedMeta('scout', context());
    const fields = { ...meta, safe_commands: [`scout_${ID}`] };
    const older: RunMeta = { ...fields, config_hash: configHash(fields) };
    expect(envelopeDrift(older, context(), null, {})).toEqual(['the run commands changed']);
  });

  it('a hash that differs with equal fields says only that', () => {
    const meta = startedMeta('scout', context());
    expect(envelopeDrift({ ...meta, config_hash: '0000000000000000' }, context(), null, {})).toEqual([
      'config_hash differs',
    ]);
  });
});
