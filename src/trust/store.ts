import fs from 'node:fs';
import path from 'node:path';
import { AgentboxError } from '../errors.js';
import type { Env } from '../util/env.js';
import { mkdirp, writeAtomicSync } from '../util/fs.js';
import type { TrustRecord } from './decide.js';
import type { TrustEntry } from './entries.js';

/**
 * The person's trust, kept in their own state folder, never in a repository (a repository cannot
 * trust itself): `$XDG_STATE_HOME/agentbox/trust.json`, else `~/.local/state/agentbox/trust.json`.
 */
export function trustFile(env: Env): string | undefined {
  const base = env.XDG_STATE_HOME || (env.HOME ? path.join(env.HOME, '.local', 'state') : undefined);
  return base ? path.join(base, 'agentbox', 'trust.json') : undefined;
}

function writableTrustFile(env: Env): string {
  const file = trustFile(env);
  if (!file) {
    throw new AgentboxError(
      'USAGE',
      'cannot tell where to keep workspace trust: neither XDG_STATE_HOME nor HOME is set',
      {
        hint: 'set HOME (or XDG_STATE_HOME), then run the command again',
      },
    );
  }
  return file;
}

type StoredRecord = TrustRecord & { readonly entries: readonly TrustEntry[] };

interface TrustStore {
  readonly schema_version: 1;
  readonly repos: Readonly<Record<string, StoredRecord>>;
}

export interface ReadStore {
  readonly file: string | undefined;
  readonly store: TrustStore;
  /** Why the file found was not used (another owner, a mode wider than 0600, not a plain file, not JSON). */
  readonly problem?: string;
}

const EMPTY: TrustStore = { schema_version: 1, repos: {} };

/** Why `file` may not be believed; undefined: it may. */
function fileProblem(file: string, stat: fs.Stats): string | undefined {
  if (!stat.isFile()) return `${file} is not a plain file`;
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid)
    return `${file} belongs to user ${stat.uid}, not to you (${uid})`;
  if ((stat.mode & 0o077) !== 0) return `${file} has mode ${(stat.mode & 0o777).toString(8)}, wider than 600`;
  return undefined;
}

/** The store as found; a missing file is an empty store, a file that may not be believed is one too (said). */
export function readStore(env: Env): ReadStore {
  const file = trustFile(env);
  if (!file)
    return {
      file,
      store: EMPTY,
      problem: 'neither XDG_STATE_HOME nor HOME is set: no trust can be recorded',
    };
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(file);
  } catch {
    return { file, store: EMPTY };
  }
  const problem = fileProblem(file, stat);
  if (problem) return { file, store: EMPTY, problem: `${problem}: it is not used` };
  try {
    const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<TrustStore>;
    const repos = parsed && typeof parsed.repos === 'object' && parsed.repos ? parsed.repos : {};
    return { file, store: { schema_version: 1, repos } };
  } catch (error) {
    return {
      file,
      store: EMPTY,
      problem: `${file} is not valid JSON (${(error as Error).message}): it is not used`,
    };
  }
}

/** Writes the store with `root`'s record set (or removed: null). A file that was not used is replaced. */
export function writeRecord(env: Env, root: string, record: StoredRecord | null): string {
  const file = writableTrustFile(env);
  const { store, problem } = readStore(env);
  const repos = { ...store.repos };
  if (record) repos[root] = record;
  else delete repos[root];
  mkdirp(path.dirname(file));
  fs.chmodSync(path.dirname(file), 0o700);
  // NOTE: a file of another owner is removed first: the atomic write would try to keep its owner.
  if (problem) fs.rmSync(file, { force: true });
  writeAtomicSync(file, `${JSON.stringify({ schema_version: 1, repos }, null, 2)}\n`, 0o600);
  return file;
}
