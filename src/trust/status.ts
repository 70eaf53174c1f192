import fs from 'node:fs';
import path from 'node:path';
import { loadPersonConfig, type PersonConfig, PROJECT_CONFIG_FILE, readConfigFile } from '../config/load.js';
import { AgentboxError } from '../errors.js';
import { readSettings, SETTINGS_FILES } from '../settings/file.js';
import type { Env } from '../util/env.js';
import { readRepoText } from '../util/fs.js';
import { decideTrust, hashEntries, isTrusted, type TrustState } from './decide.js';
import { configEntries, mcpEntries, settingsEntries, type TrustEntry } from './entries.js';
import { readStore } from './store.js';

export const MCP_FILE = '.mcp.json';

/** A repository's standing: what in it needs trust, and whether the person gave it. */
export interface TrustStatus {
  /** The repository's canonical root (symlinks resolved): the key of its record. */
  readonly root: string;
  readonly entries: readonly TrustEntry[];
  readonly hash: string;
  readonly state: TrustState;
  readonly trusted: boolean;
  readonly storeFile: string | undefined;
  /** What the person trusted last (state changed: to tell the new and changed entries from the rest). */
  readonly trustedEntries?: readonly TrustEntry[];
  /** The person's trust file was found but not used (see store.ts). */
  readonly storeProblem?: string;
}

function mcpFileEntries(root: string): TrustEntry[] {
  const text = readRepoText(path.join(root, MCP_FILE), root);
  if (text === undefined) return [];
  try {
    const value = JSON.parse(text) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value))
      return mcpEntries(MCP_FILE, value as Parameters<typeof mcpEntries>[1]);
  } catch {
    // Not JSON: the whole text is the entry (Claude Code would refuse it, but a change still asks).
  }
  return [{ file: MCP_FILE, key: '(file)', text }];
}

function settingsFileEntries(root: string, file: string): TrustEntry[] {
  try {
    return settingsEntries(file, readSettings(path.join(root, file)).value);
  } catch (error) {
    if (error instanceof AgentboxError)
      return [{ file, key: '(file)', text: readRepoText(path.join(root, file), root) ?? '' }];
    throw error;
  }
}

/** The Claude Code files of `dir` that need trust (where claude starts: the root, or a fix run's worktree). */
function claudeEntries(dir: string): TrustEntry[] {
  return [
    ...settingsFileEntries(dir, SETTINGS_FILES.shared),
    ...settingsFileEntries(dir, SETTINGS_FILES.local),
    ...mcpFileEntries(dir),
  ];
}

/**
 * Everything in the repository at `root` that needs trust, in a fixed order: its agentbox.yaml's
 * values that would loosen the person's settings, and its Claude Code files.
 */
export function repoEntries(root: string, person: PersonConfig): TrustEntry[] {
  return [
    ...configEntries(PROJECT_CONFIG_FILE, readConfigFile(path.join(root, PROJECT_CONFIG_FILE), root), person),
    ...claudeEntries(root),
  ];
}

const claudeText = (entries: readonly TrustEntry[]) =>
  JSON.stringify(entries.filter((e) => e.file !== PROJECT_CONFIG_FILE).map((e) => [e.file, e.key, e.text]));

/**
 * Whether claude, started in `dir`, may load the Claude Code files it finds there: the repository
 * is trusted and those files say what the repository's own say (a fix run's worktree holds the
 * committed files, and whatever was written there since: those ask again).
 */
export function launchTrusted(status: TrustStatus, dir: string): boolean {
  if (!status.trusted) return false;
  const real = fs.realpathSync(dir);
  if (real === status.root) return true;
  return claudeText(claudeEntries(real)) === claudeText(status.entries);
}

/** The repository's standing, from its files, the person's config and their trust file. */
export function trustStatus(repoRoot: string, env: Env, person = loadPersonConfig(env)): TrustStatus {
  const root = fs.realpathSync(repoRoot);
  const entries = repoEntries(root, person);
  const { file, store, problem } = readStore(env);
  const record = store.repos[root];
  const state = decideTrust(entries, record);
  return {
    root,
    entries,
    hash: hashEntries(entries),
    state,
    trusted: isTrusted(state),
    storeFile: file,
    ...(record?.entries ? { trustedEntries: record.entries } : {}),
    ...(problem ? { storeProblem: problem } : {}),
  };
}
