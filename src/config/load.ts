import path from 'node:path';
import { parseDocument } from 'yaml';
import type * as z from 'zod';
import { AgentboxError } from '../errors.js';
import type { Env } from '../util/env.js';
import { MAX_CONFIG_BYTES, readRepoText, readTextIfExists } from '../util/fs.js';
import { closest } from '../util/suggest.js';
import { applyProject } from './precedence.js';
import { sandboxFromEnv } from './sandbox-env.js';
import { type Config, type ConfigFile, DEFAULT_CONFIG, fileSchema, KNOWN_KEYS } from './schema.js';

export const PROJECT_CONFIG_FILE = 'agentbox.yaml';

export interface ConfigSource {
  readonly kind: 'user' | 'project';
  readonly path: string;
  readonly exists: boolean;
}

export interface LoadedConfig {
  readonly config: Config;
  readonly sources: readonly ConfigSource[];
}

/** `$AGENTBOX_CONFIG`, else `$XDG_CONFIG_HOME/agentbox/config.yaml`, else `~/.config/agentbox/config.yaml`. */
export function userConfigPath(env: Env): string | undefined {
  if (env.AGENTBOX_CONFIG) return env.AGENTBOX_CONFIG;
  const base = env.XDG_CONFIG_HOME || (env.HOME ? path.join(env.HOME, '.config') : undefined);
  return base ? path.join(base, 'agentbox', 'config.yaml') : undefined;
}

export function projectConfigPath(repoRoot: string): string {
  return path.join(repoRoot, PROJECT_CONFIG_FILE);
}

/**
 * What each file said when it was last read in this process, and what it parsed to: a command reads
 * agentbox.yaml for trust and again for the configuration (a cold YAML parse is ~5 ms of a run's
 * start). Keyed by the text itself, so a file that changed is parsed again.
 */
const parsedFiles = new Map<string, { readonly text: string; readonly data: ConfigFile }>();

/** Reads and validates one file; a missing file is an empty one. */
export function readConfigFile(file: string, root?: string): ConfigFile | undefined {
  // A repository's file is read only from inside it (readRepoText); the person's may be a link.
  const text = root === undefined ? readTextIfExists(file, MAX_CONFIG_BYTES) : readRepoText(file, root);
  if (text === undefined) return undefined;
  const known = parsedFiles.get(file);
  if (known?.text === text) return structuredClone(known.data);
  const data = parseConfigText(file, text);
  parsedFiles.set(file, { text, data });
  return structuredClone(data);
}

/** Why a YAML text has no value: where, when known, and what. */
export interface YamlProblem {
  readonly where: string;
  readonly message: string;
}

/**
 * A YAML text's value, or why it has none: a syntax error, or an alias that names no anchor or
 * expands past the parser's bound (a "billion laughs" file), which the parser throws only when the
 * value is built. A repository's agentbox.yaml is a stranger's text: both are its author's error,
 * not agentbox's. Pure.
 */
export function yamlValue(text: string): { value: unknown } | { problem: YamlProblem } {
  const doc = parseDocument(text, { prettyErrors: true });
  const first = doc.errors[0];
  if (first) {
    const where = first.linePos?.[0]
      ? ` at line ${first.linePos[0].line}, column ${first.linePos[0].col}`
      : '';
    // NOTE: with prettyErrors the message's first line ends in " at line L, column C:" (a code
    // frame follows); the position is already in `where`.
    return {
      problem: { where, message: first.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '') },
    };
  }
  try {
    return { value: doc.toJS() };
  } catch (error) {
    return { problem: { where: '', message: (error as Error).message.split('\n')[0]! } };
  }
}

function parseConfigText(file: string, text: string): ConfigFile {
  const read = yamlValue(text);
  if ('problem' in read) {
    throw new AgentboxError(
      'CONFIG_INVALID',
      `${file} is not valid YAML${read.problem.where}: ${read.problem.message}`,
      {
        // `init` writes a project's agentbox.yaml, never the person's own file.
        hint:
          path.basename(file) === PROJECT_CONFIG_FILE
            ? `fix the file, or delete it and run "agentbox init" to write a fresh one`
            : "fix the file, or move it aside (agentbox then uses its defaults and the repository's agentbox.yaml)",
      },
    );
  }
  const parsed = fileSchema.safeParse(read.value ?? {});
  if (!parsed.success) throw configError(file, parsed.error, read.value);
  return parsed.data;
}

/** What the file holds at `at` (a key's path), for the message: short, as JSON. Pure. */
function heldAt(raw: unknown, at: readonly PropertyKey[]): string | null {
  let value = raw;
  for (const key of at) {
    if (value === null || typeof value !== 'object') return null;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  if (value === undefined) return null;
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 60 ? `${json.slice(0, 60)}…` : json;
}

function configError(file: string, error: z.ZodError, raw?: unknown): AgentboxError {
  const issue = error.issues[0]!;
  const at = issue.path.join('.');
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    const full = at ? `${at}.${key}` : key;
    const guess = closest(full, KNOWN_KEYS);
    return new AgentboxError('CONFIG_INVALID', `${file}: unknown setting "${full}"`, {
      hint: guess ? `did you mean "${guess}"?` : `known settings: ${KNOWN_KEYS.join(', ')}`,
    });
  }
  const held = at ? heldAt(raw, issue.path) : null;
  return new AgentboxError(
    'CONFIG_INVALID',
    `${file}: ${at || 'the file'}: ${issue.message}${held ? ` (it is ${held})` : ''}`,
    {
      hint: 'see docs/configuration.md in agentbox for the allowed values',
    },
  );
}

/**
 * NOTE: an empty key (null) means "not set in this file", like a missing one. The project file
 * that init writes lists every key empty; if empty meant "reset to the default" it would hide
 * the user file's settings in every initialised repository.
 */
/** Section by section, key by key: a key the file leaves empty (null) or out keeps the base value. */
function merge(base: Config, file: ConfigFile | undefined): Config {
  if (!file) return base;
  const out: Record<string, Record<string, unknown>> = {};
  for (const [name, values] of Object.entries(base)) {
    const overrides = (file as Record<string, Record<string, unknown> | null | undefined>)[name] ?? {};
    const merged: Record<string, unknown> = { ...values };
    for (const [key, value] of Object.entries(overrides))
      if (value !== null && value !== undefined) merged[key] = value;
    out[name] = merged;
  }
  return out as unknown as Config;
}

/** The person's own settings: the defaults, then their user file (which always counts). */
export interface PersonConfig {
  readonly config: Config;
  /** Their file as read (undefined: none), to tell their own values from the defaults. */
  readonly file: ConfigFile | undefined;
  readonly source: ConfigSource | undefined;
}

export function loadPersonConfig(env: Env): PersonConfig {
  const userFile = userConfigPath(env);
  if (!userFile) return { config: DEFAULT_CONFIG, file: undefined, source: undefined };
  const file = readConfigFile(userFile);
  // A file named on purpose that is not there is a typo, not "no settings": the person's limits
  // (max_cost, deny_read) would be dropped without a word.
  if (file === undefined && env.AGENTBOX_CONFIG)
    throw new AgentboxError('CONFIG_INVALID', `AGENTBOX_CONFIG names ${userFile}, which does not exist`, {
      hint: 'fix the path, create the file, or unset AGENTBOX_CONFIG (then ~/.config/agentbox/config.yaml is read)',
    });
  return {
    config: merge(DEFAULT_CONFIG, file),
    file,
    source: { kind: 'user', path: userFile, exists: file !== undefined },
  };
}

/**
 * The person's settings, then the project file over them as config/rules.ts says key by key: a
 * repository may tighten what the person set; a value that would loosen it counts only when
 * `projectTrusted` (src/trust/ decides), and a denial of the person's is never taken back.
 */
export function loadConfig(options: {
  repoRoot: string | undefined;
  env: Env;
  projectTrusted?: boolean;
  /** The person's config when the caller has read it already (src/trust/ does). */
  person?: PersonConfig;
}): LoadedConfig {
  const person = options.person ?? loadPersonConfig(options.env);
  const sources: ConfigSource[] = person.source ? [person.source] : [];
  let config = person.config;
  if (options.repoRoot) {
    const projectFile = projectConfigPath(options.repoRoot);
    const file = readConfigFile(projectFile, options.repoRoot);
    sources.push({ kind: 'project', path: projectFile, exists: file !== undefined });
    config = applyProject(config, file, options.projectTrusted === true);
  }
  // The environment has the last word on the sandbox (see sandbox-env.ts), and on nothing else.
  return { config: { ...config, sandbox: sandboxFromEnv(config.sandbox, options.env) }, sources };
}
