import { EMPTY_TREE, type GitCall, gitRaw, parseBatch, parseTreeListing } from './git.js';

/** A file or a publication larger than this is not imported (a ledger entry is kilobytes). */
export const MAX_RUN_BYTES = 64 * 1024 * 1024;
/**
 * A publication of more files than this is not imported: a run folder holds tens (its records,
 * report, patch, revisions, artifacts), and each file fetched is an inode written here.
 */
export const MAX_RUN_FILES = 1000;
/** A group's attempts together (up to 16 of them): what one group's fetch may hold in memory. */
export const MAX_GROUP_BYTES = 128 * 1024 * 1024;

/** A publication to read: its name (a run's or a group's) and its tree. */
export interface Tree {
  readonly run: string;
  readonly tree: string;
}

/**
 * The files of each publication (a run's, a group's), in three git processes for the whole chunk: the trees'
 * listings (against the empty tree), then the blobs. Only regular files are read; a run whose
 * files are too large gets a string (why it is not imported). Keyed by `run`: a run's or a group's name.
 */
export async function readPublications(
  call: GitCall,
  refs: readonly Tree[],
  /** A bound on all of them together (a group's attempts): past it, none is read. */
  total?: number,
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
  const all = [...wanted].reduce((sum, blob) => sum + Number(size.get(blob) ?? 0), 0);
  if (total !== undefined && all > total) {
    const why = `with the other attempts of its group, its files are larger than ${total / 1024 / 1024} MB`;
    return new Map(refs.map((r) => [r.run, why]));
  }
  const fits = (r: Tree) =>
    (listing.get(r.tree) ?? []).reduce((sum, f) => sum + Number(size.get(f.blob) ?? 0), 0) <= MAX_RUN_BYTES;
  const blobs = new Set<string>();
  for (const ref of refs) {
    const count = listing.get(ref.tree)?.length ?? 0;
    if (count > MAX_RUN_FILES) out.set(ref.run, `it holds ${count} files, more than ${MAX_RUN_FILES}`);
    else if (!fits(ref)) out.set(ref.run, `its files are larger than ${MAX_RUN_BYTES / 1024 / 1024} MB`);
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
