import fs from 'node:fs';
import type { Env } from '../context.js';
import { activeDir } from '../ledger/active.js';
import { regenerateIndexMd } from '../ledger/index-md.js';
import { type PointerName, setPointer } from '../ledger/links.js';
import { listRunNames } from '../ledger/list.js';
import { isRunName } from '../ledger/names.js';
import type { Ledger } from '../ledger/paths.js';
import { EMPTY_TREE, type GitCall, git, gitRaw, parseBatch, parseTreeListing } from './git.js';
import { type ImportOutcome, importRun, type Taken } from './import.js';
import { RUNS_NS, trackingRuns } from './refs.js';
import { readRegistry, writeRegistry } from './registry.js';
import { fetchRefs } from './transport.js';

export interface FetchResult {
  readonly remote: string;
  /** Published runs the remote holds. */
  readonly published: number;
  readonly imported: string[];
  readonly updated: string[];
  /** Merged or discarded here: left as the person decided. */
  readonly kept: string[];
  /** Runs this clone published itself. */
  readonly own: number;
  readonly skipped: { readonly run: string; readonly why: string }[];
}

interface RefEntry {
  readonly run: string;
  readonly commit: string;
  readonly tree: string;
}

/** Runs read from git per round: bounds the memory a fetch of many (or large) runs takes. */
const CHUNK = 200;
/** A file or a run larger than this is not imported (a ledger entry is kilobytes). */
export const MAX_RUN_BYTES = 64 * 1024 * 1024;

/**
 * `agentbox fetch`: mirrors the remote's published runs, then imports into the ledger each one
 * whose publication changed since the last fetch. Nothing a publication holds is trusted: names,
 * paths and files are checked by src/remote/import.ts before anything is written.
 */
export async function fetchRuns(
  ledger: Ledger,
  remote: string,
  env: Env,
  now = new Date(),
): Promise<FetchResult> {
  const call: GitCall = { cwd: ledger.root, env };
  await fetchRefs(call, remote);
  const refs = await listRefs(call, trackingRuns(remote));
  const own = new Set((await listRefs(call, RUNS_NS)).map((r) => r.run));
  const registry = readRegistry(ledger, remote);
  const names = listRunNames(ledger);
  const taken: Taken = { names: new Set(names), ids: new Set(names.map((n) => n.slice(-6))) };
  const result: FetchResult = {
    remote,
    published: refs.length,
    imported: [],
    updated: [],
    kept: [],
    own: 0,
    skipped: [],
  };
  const todo: RefEntry[] = [];
  for (const ref of refs) {
    if (own.has(ref.run) && taken.names.has(ref.run)) (result as { own: number }).own++;
    else if (!isRunName(ref.run)) result.skipped.push({ run: ref.run, why: 'not a run name' });
    else if (registry.get(ref.run)?.commit !== ref.commit) todo.push(ref);
  }
  // NOTE: a fetched run never gets an active marker (the watchdog must not judge another
  // machine's pid); the folder must exist so the watchdog does not scan every state.json instead.
  fs.mkdirSync(activeDir(ledger), { recursive: true });
  const pointers = new Map<PointerName, string>();
  for (let at = 0; at < todo.length; at += CHUNK) {
    const chunk = todo.slice(at, at + CHUNK);
    const files = await readRuns(call, chunk);
    for (const ref of chunk) {
      const published = files.get(ref.run);
      const outcome: ImportOutcome =
        typeof published === 'string'
          ? { kind: 'skipped', why: published }
          : await importRun(
              ledger,
              { remote, run: ref.run, files: published ?? new Map() },
              taken,
              pointers,
              now,
            );
      record(result, ref.run, outcome);
      if (outcome.kind !== 'skipped') registry.set(ref.run, { local: outcome.local, commit: ref.commit });
    }
    await writeRegistry(ledger, remote, registry);
  }
  for (const [pointer, name] of pointers) setPointer(ledger, pointer, name);
  if (result.imported.length + result.updated.length > 0) await regenerateIndexMd(ledger);
  return result;
}

function record(result: FetchResult, run: string, outcome: ImportOutcome): void {
  if (outcome.kind === 'skipped') result.skipped.push({ run, why: outcome.why });
  else result[outcome.kind].push(outcome.local);
}

async function listRefs(call: GitCall, prefix: string): Promise<RefEntry[]> {
  const out = await git(call, ['for-each-ref', '--format=%(objectname) %(tree) %(refname)', prefix]);
  return out
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [commit = '', tree = '', ref = ''] = line.split(' ');
      return { commit, tree, run: ref.slice(prefix.length) };
    });
}

/**
 * The files of each run's publication, in two git processes for the whole chunk: the trees'
 * listings (against the empty tree), then the blobs. Only regular files are read; a run whose
 * files are too large gets a string (why it is not imported).
 */
async function readRuns(
  call: GitCall,
  refs: readonly RefEntry[],
): Promise<Map<string, Map<string, Buffer> | string>> {
  const input = refs.map((r) => `${EMPTY_TREE} ${r.tree}\n`).join('');
  const listing = parseTreeListing(
    (await gitRaw({ ...call, input }, ['diff-tree', '-r', '-z', '--stdin'])).stdout,
  );
  const wanted = new Set<string>();
  const out = new Map<string, Map<string, Buffer> | string>();
  const regular = (mode: string) => mode === '100644' || mode === '100755';
  for (const ref of refs)
    for (const f of listing.get(ref.tree) ?? []) if (regular(f.mode)) wanted.add(f.blob);
  const sizes = await gitRaw({ ...call, input: [...wanted].join('\n') }, [
    'cat-file',
    '--batch-check=%(objectname) %(objectsize)',
  ]);
  const size = new Map(
    sizes.stdout
      .toString()
      .split('\n')
      .map((l) => l.split(' ') as [string, string]),
  );
  const fits = (r: RefEntry) =>
    (listing.get(r.tree) ?? []).reduce((sum, f) => sum + Number(size.get(f.blob) ?? 0), 0) <= MAX_RUN_BYTES;
  const blobs = new Set<string>();
  for (const ref of refs) {
    if (!fits(ref)) out.set(ref.run, `its files are larger than ${MAX_RUN_BYTES / 1024 / 1024} MB`);
    else for (const f of listing.get(ref.tree) ?? []) if (regular(f.mode)) blobs.add(f.blob);
  }
  const objects = parseBatch(
    (await gitRaw({ ...call, input: [...blobs].join('\n') }, ['cat-file', '--batch'])).stdout,
  );
  for (const ref of refs) {
    if (out.has(ref.run)) continue;
    const files = new Map<string, Buffer>();
    for (const f of listing.get(ref.tree) ?? []) {
      const bytes = objects.get(f.blob);
      if (regular(f.mode) && bytes) files.set(f.path, bytes);
    }
    out.set(ref.run, files);
  }
  return out;
}
