import fs from 'node:fs';
import path from 'node:path';
import { errnoCode, fsError } from '../errors.js';
import { isRunName } from '../ledger/names.js';
import type { Ledger } from '../ledger/paths.js';
import { writeAtomic } from '../util/fs.js';

/**
 * `.agents/remotes/<remote>.json`: which publication of each fetched run this ledger holds, so a
 * second fetch imports only what changed (10,000 published runs, a handful new). Losing it costs
 * one slow fetch: runs are then matched again by their meta.yaml `origin`.
 */
export interface Imported {
  /** The run's name in this ledger. */
  readonly local: string;
  /** The publication (commit) imported last. */
  readonly commit: string;
}

export type Registry = Map<string, Imported>;

const HEX40 = /^[0-9a-f]{40}$/;

/** Runs (`<remote>.json`) or groups (`<remote>.groups.json`): both are named like runs. */
export type RegistryKind = 'runs' | 'groups';

export function registryFile(ledger: Ledger, remote: string, kind: RegistryKind = 'runs'): string {
  return path.join(ledger.dir, 'remotes', kind === 'runs' ? `${remote}.json` : `${remote}.groups.json`);
}

/** The registry, or an empty one when there is none or it does not parse (it is only a cache). */
export function readRegistry(ledger: Ledger, remote: string, kind: RegistryKind = 'runs'): Registry {
  const file = registryFile(ledger, remote, kind);
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    if (errnoCode(error) !== 'ENOENT' && !(error instanceof SyntaxError)) throw fsError(error, 'read', file);
    return new Map();
  }
  const runs = (raw as { runs?: unknown })?.runs;
  const out: Registry = new Map();
  if (!runs || typeof runs !== 'object') return out;
  for (const [run, entry] of Object.entries(runs as Record<string, { local?: unknown; commit?: unknown }>)) {
    const { local, commit } = entry ?? {};
    if (isRunName(run) && typeof local === 'string' && isRunName(local) && typeof commit === 'string') {
      if (HEX40.test(commit)) out.set(run, { local, commit });
    }
  }
  return out;
}

export async function writeRegistry(
  ledger: Ledger,
  remote: string,
  registry: Registry,
  kind: RegistryKind = 'runs',
): Promise<void> {
  const file = registryFile(ledger, remote, kind);
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
  } catch (error) {
    throw fsError(error, 'create the folder', path.dirname(file));
  }
  const runs = Object.fromEntries([...registry].sort(([a], [b]) => (a < b ? -1 : 1)));
  await writeAtomic(file, `${JSON.stringify({ schema_version: 1, runs })}\n`);
}
