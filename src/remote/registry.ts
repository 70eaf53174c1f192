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

/**
 * Publications refused for what they hold (not a run name, no meta.yaml, too many files…), by the
 * name there → the commit refused: the same publication is neither read nor logged again (a
 * remote of 100,000 such refs made every fetch read them all and log each refusal once more).
 * What depends on this machine (a name in use, a file the disk would not take) is tried again.
 */
export type Refused = Map<string, string>;

export function readRefused(ledger: Ledger, remote: string, kind: RegistryKind = 'runs'): Refused {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(registryFile(ledger, remote, kind), 'utf8'));
  } catch {
    return new Map();
  }
  const refused = (raw as { refused?: unknown })?.refused;
  if (!refused || typeof refused !== 'object') return new Map();
  return new Map(
    Object.entries(refused as Record<string, unknown>).filter(
      (e): e is [string, string] => typeof e[1] === 'string' && HEX40.test(e[1]),
    ),
  );
}

export async function writeRegistry(
  ledger: Ledger,
  remote: string,
  registry: Registry,
  kind: RegistryKind = 'runs',
  refused?: Refused,
): Promise<void> {
  const file = registryFile(ledger, remote, kind);
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
  } catch (error) {
    throw fsError(error, 'create the folder', path.dirname(file));
  }
  const runs = Object.fromEntries([...registry].sort(([a], [b]) => (a < b ? -1 : 1)));
  const no = refused?.size
    ? { refused: Object.fromEntries([...refused].sort(([a], [b]) => (a < b ? -1 : 1))) }
    : {};
  await writeAtomic(file, `${JSON.stringify({ schema_version: 1, runs, ...no })}\n`);
}
