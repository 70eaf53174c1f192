import type * as Crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as Yaml from 'yaml';
import { errnoCode, fsError } from '../errors.js';
import { readOwnFile } from '../util/read-own.js';
import { VERSION } from '../version.js';
import { corruptFile, isObj, obj, oneOf, schemaVersion, str, strList, strOrNull } from './check.js';
import { parseRunName } from './names.js';
import { type Envelope, RUN_TYPES, type RunMeta, type RunOrigin, type RunType } from './types.js';

export const META_FILE = 'meta.yaml';

// NOTE: loaded on first use. The YAML parser costs ~20 ms to load and `agentbox status` never
// needs it (state.json carries what it shows).
let yamlLib: typeof Yaml | undefined;
const yaml = (): typeof Yaml => {
  yamlLib ??= createRequire(import.meta.url)('yaml') as typeof Yaml;
  return yamlLib;
};

/**
 * Loads the YAML parser the way the rest of agentbox does (an import: in the bundle, the copy the
 * configuration already loaded), so a caller that can wait does not pay for a second, CommonJS
 * copy through require (~40 ms of module loading on every run's start, measured).
 */
export async function loadYaml(): Promise<void> {
  if (yamlLib) return;
  // NOTE: yaml is CommonJS: bundled, its namespace is the module's `default`; under node, both.
  const mod = (await import('yaml')) as typeof Yaml & { default?: typeof Yaml };
  yamlLib = typeof mod.stringify === 'function' ? mod : (mod.default ?? mod);
}

/** JSON with object keys sorted at every depth, so equal envelopes always hash alike. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(',')}]`;
  if (isObj(value)) {
    const keys = Object.keys(value)
      .filter((k) => value[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * First 16 hex of sha256 over the envelope's fields. Resume recomputes it and refuses a changed
 * envelope. List order counts (it is what claude receives); a missing `extra` hashes like `{}`.
 */
export function configHash(envelope: Envelope): string {
  const fields = {
    model: envelope.model,
    tools_allowlist: envelope.tools_allowlist,
    safe_commands: envelope.safe_commands,
    human_only_commands: envelope.human_only_commands,
    extra: envelope.extra ?? {},
  };
  // NOTE: node:crypto is loaded here, not imported: `agentbox status` reads meta.yaml files but never
  // hashes, and loading crypto costs ~2 ms on every command (bench/status.bench.ts).
  const { createHash } = createRequire(import.meta.url)('node:crypto') as typeof Crypto;
  return createHash('sha256').update(canonicalJson(fields)).digest('hex').slice(0, 16);
}

export interface MetaInput {
  readonly name: string;
  readonly id: string;
  readonly slug: string;
  readonly type: RunType;
  readonly task: string;
  readonly envelope: Envelope;
  readonly repoRoot: string;
  readonly repoShaStart: string | null;
  readonly now: Date;
  readonly options?: Readonly<Record<string, unknown>>;
  /** The run this one reruns (`agentbox rerun`). */
  readonly rerunOf?: string;
}

export function buildMeta(input: MetaInput): RunMeta {
  const { envelope } = input;
  return {
    schema_version: 1,
    run_name: input.name,
    run_id: input.id,
    type: input.type,
    task: input.task,
    slug: input.slug,
    repo_root: input.repoRoot,
    repo_sha_start: input.repoShaStart,
    created_at: input.now.toISOString(),
    agentbox_version: VERSION,
    model: envelope.model,
    tools_allowlist: [...envelope.tools_allowlist],
    safe_commands: [...envelope.safe_commands],
    human_only_commands: [...envelope.human_only_commands],
    ...(envelope.extra === undefined ? {} : { extra: envelope.extra }),
    config_hash: configHash(envelope),
    ...(input.options === undefined ? {} : { options: input.options }),
    ...(input.rerunOf === undefined ? {} : { rerun_of: input.rerunOf }),
  };
}

export function serializeMeta(meta: RunMeta): string {
  return `# Written once by agentbox when the run was created; never rewritten.\n${yaml().stringify(meta, { lineWidth: 0 })}`;
}

export function parseMeta(text: string, file: string): RunMeta {
  try {
    const o = obj(yaml().parse(text), 'meta.yaml');
    schemaVersion(o, 1);
    const extra = o.extra;
    if (extra !== undefined && !isObj(extra)) throw new Error('"extra" must be a mapping');
    const options = o.options;
    if (options !== undefined && !isObj(options)) throw new Error('"options" must be a mapping');
    const model = o.model === null ? null : str(o, 'model');
    const origin = o.origin === undefined ? undefined : checkOrigin(o.origin);
    const rerunOf = o.rerun_of === undefined ? undefined : checkRunName(o, 'rerun_of');
    return {
      schema_version: 1,
      run_name: str(o, 'run_name'),
      run_id: str(o, 'run_id'),
      type: oneOf(o, 'type', RUN_TYPES),
      task: str(o, 'task'),
      slug: str(o, 'slug'),
      repo_root: str(o, 'repo_root'),
      repo_sha_start: strOrNull(o, 'repo_sha_start'),
      created_at: str(o, 'created_at'),
      agentbox_version: str(o, 'agentbox_version'),
      model,
      tools_allowlist: strList(o, 'tools_allowlist'),
      safe_commands: strList(o, 'safe_commands'),
      human_only_commands: strList(o, 'human_only_commands'),
      ...(extra === undefined ? {} : { extra }),
      config_hash: str(o, 'config_hash'),
      ...(options === undefined ? {} : { options }),
      ...(origin === undefined ? {} : { origin }),
      ...(rerunOf === undefined ? {} : { rerun_of: rerunOf }),
    };
  } catch (error) {
    throw corruptFile(file, error);
  }
}

/** An optional field added later: a meta.yaml without it (every local run) reads as before. */
function checkOrigin(value: unknown): RunOrigin {
  const o = obj(value, '"origin"');
  return { remote: str(o, 'remote'), host: str(o, 'host'), run: str(o, 'run') };
}

/** A field that names a run: a run name, nothing else (it is shown, and may be looked up). */
function checkRunName(o: Readonly<Record<string, unknown>>, key: string): string {
  const name = str(o, key);
  if (!parseRunName(name)) throw new Error(`"${key}" is not a run name`);
  return name;
}

/**
 * The meta.yaml files this process parsed, by path, with the text they were parsed from: a run's
 * meta is read again at every state change that logs an event (5-9 ms of YAML each, several per
 * run), and it is written once. A file whose text differs is parsed anew. Each read gets a copy of
 * its own, as when every read parsed.
 */
const parsed = new Map<string, { readonly text: string; readonly meta: RunMeta }>();
const PARSED_KEPT = 64;

/** The run's meta.yaml, or undefined when the folder has none (yet). */
export function readMeta(runDir: string): RunMeta | undefined {
  const file = path.join(runDir, META_FILE);
  let text: string;
  try {
    text = readOwnFile(file);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw fsError(error, 'read', file);
  }
  const kept = parsed.get(file);
  if (kept?.text === text) return structuredClone(kept.meta);
  const meta = parseMeta(text, file);
  // A reader of every run (the web UI, gc) must not keep them all.
  if (parsed.size >= PARSED_KEPT) parsed.clear();
  parsed.set(file, { text, meta: structuredClone(meta) });
  return meta;
}

/** NOTE: flag `wx` — meta.yaml is created exactly once; a second write is a bug and fails. */
export function writeMetaOnce(runDir: string, meta: RunMeta): void {
  const file = path.join(runDir, META_FILE);
  try {
    fs.writeFileSync(file, serializeMeta(meta), { flag: 'wx' });
  } catch (error) {
    throw fsError(error, 'create', file);
  }
}
