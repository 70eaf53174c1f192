import type { ConfigFile } from './schema.js';

/**
 * The keys of a project's agentbox.yaml that run a command or weaken the box: they take effect only
 * once the person trusts the repository (src/trust/). The rest (timeouts, models, templates, more
 * deny_read paths) can only narrow a run or cost money, so a cloned repository may set them.
 */
export const TRUST_KEYS = [
  // A binary agentbox starts.
  'claude.bin',
  'supervisor.bin',
  // Commands agentbox runs (setup and verify in the run's sandbox, notify outside it).
  'runs.setup',
  'runs.verify',
  'runs.notify',
  // The person's variables handed to the agent, tools it may use unasked, where it writes.
  'runs.env_pass',
  'runs.fix_allowed_tools',
  'runs.worktree_dir',
  // Network allowances.
  'runs.setup_domains',
  'sandbox.allowed_domains',
  // Reads beyond the built-in allowlist.
  'sandbox.allow_read',
  // sandbox.mode, only when it is "off".
  'sandbox.mode',
] as const;

/** The value `key` has in `file` when it needs trust there (sandbox.mode only when off); undefined: it does not. */
export function trustedValue(file: ConfigFile, key: string): unknown {
  const [section, name] = key.split('.') as [string, string];
  const value = (file as Record<string, Record<string, unknown> | null | undefined>)[section]?.[name];
  if (value === null || value === undefined) return undefined;
  if (key === 'sandbox.mode' && value !== 'off') return undefined;
  return value;
}

/** The file without the keys that need trust: what an untrusted repository's file may still set. */
export function withoutTrustKeys(file: ConfigFile): ConfigFile {
  const out: Record<string, Record<string, unknown> | null | undefined> = {};
  for (const [section, values] of Object.entries(file)) out[section] = values ? { ...values } : values;
  for (const key of TRUST_KEYS) {
    const [section, name] = key.split('.') as [string, string];
    if (trustedValue(file, key) !== undefined) delete out[section]![name];
  }
  return out as ConfigFile;
}
