import { EMPTY_TREE, type GitCall, gitRaw, parseBatch, parseTreeListing, type TreeFile } from './git.js';

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

/** What one round of `agentbox fetch` reads into memory: a round of 200 runs of 64 MB was 12.8 GB. */
export const ROUND_BYTES = 64 * 1024 * 1024;

/**
 * The files of each publication (a run's, a group's), in three git processes: the trees' listings
 * (against the empty tree), their blobs' sizes, then the blobs. Only regular files are read; a
 * publication of too many or too large files gets a string (why it is not imported). Keyed by
 * `run` (a run's or a group's name), in the order of `refs`: with a `round` bound, only the first
 * ones whose files fit in it together (one at least) are in the map; the caller reads the rest next.
 */
export async function readPublications(
  call: GitCall,
  refs: readonly Tree[],
  /** A bound on all of them together (a group's attempts): past it, none is read. */
  total?: number,
  round = Number.POSITIVE_INFINITY,
): Promise<Map<string, Map<string, Buffer> | string>> {
  const listing = await listTrees(call, [...new Set(refs.map((r) => r.tree))]);
  const regular = (r: Tree) =>
    (listing.get(r.tree) ?? []).filter((f) => f.mode === '100644' || f.mode === '100755');
  const size = await blobSizes(call, new Set(refs.flatMap((r) => regular(r).map((f) => f.blob))));
  const bytes = (r: Tree) => regular(r).reduce((sum, f) => sum + (size.get(f.blob) ?? 0), 0);
  const all = [...size.values()].reduce((sum, n) => sum + n, 0);
  if (total !== undefined && all > total) {
    const why = `with the other attempts of its group, its files are larger than ${total / 1024 / 1024} MB`;
    return new Map(refs.map((r) => [r.run, why]));
  }
  const out = new Map<string, Map<string, Buffer> | string>();
  const read: Tree[] = [];
  let held = 0;
  for (const ref of refs) {
    const count = listing.get(ref.tree)?.length ?? 0;
    const n = bytes(ref);
    if (listing.get(ref.tree) === TOO_MANY || count > MAX_RUN_FILES)
      out.set(ref.run, `it holds more than ${MAX_RUN_FILES} files`);
    else if (n > MAX_RUN_BYTES)
      out.set(ref.run, `its files are larger than ${MAX_RUN_BYTES / 1024 / 1024} MB`);
    else if (held > 0 && held + n > round) break;
    else {
      held += n;
      read.push(ref);
      out.set(ref.run, new Map());
    }
  }
  const blobs = new Set(read.flatMap((r) => regular(r).map((f) => f.blob)));
  const objects = parseBatch(
    (await gitRaw({ ...call, input: [...blobs].join('\n') }, ['cat-file', '--batch'])).stdout,
  );
  for (const ref of read) {
    const files = out.get(ref.run) as Map<string, Buffer>;
    for (const f of regular(ref)) {
      const blob = objects.get(f.blob);
      if (blob) files.set(f.path, blob);
    }
  }
  return out;
}

/** A tree whose listing passed what MAX_RUN_FILES files take: it was not read further. */
const TOO_MANY: TreeFile[] = [];
/** One listed file at most: `:<mode> <mode> <id> <id> A\0<path>\0` with SHA-256 ids, a long path. */
const LINE_BYTES = 512;
const TREE_LISTING_MAX = (MAX_RUN_FILES + 1) * LINE_BYTES;

/**
 * Each tree's files (`git diff-tree -r` against the empty tree), each distinct tree once: 200 runs
 * of one tree of 5,000 files were 1,000,000 lines read at once. Past what MAX_RUN_FILES files take
 * together, git is stopped and each tree is listed alone, within its own bound: one past it is
 * TOO_MANY, whatever it holds.
 */
async function listTrees(call: GitCall, trees: readonly string[]): Promise<Map<string, TreeFile[]>> {
  const listed = async (some: readonly string[]) => {
    const input = some.map((tree) => `${EMPTY_TREE} ${tree}\n`).join('');
    const maxStdout = some.length * TREE_LISTING_MAX;
    const out = await gitRaw({ ...call, input, maxStdout }, ['diff-tree', '-r', '-z', '--stdin']);
    return out.cut ? null : parseTreeListing(out.stdout);
  };
  const all = await listed(trees);
  if (all !== null) return all;
  const each = new Map<string, TreeFile[]>();
  for (const tree of trees) each.set(tree, (await listed([tree]))?.get(tree) ?? TOO_MANY);
  return each;
}

async function blobSizes(call: GitCall, blobs: ReadonlySet<string>): Promise<Map<string, number>> {
  const out = await gitRaw({ ...call, input: [...blobs].join('\n') }, [
    'cat-file',
    '--batch-check=%(objectname) %(objectsize)',
  ]);
  const sizes = new Map<string, number>();
  for (const line of out.stdout.toString().split('\n')) {
    const [blob = '', n = ''] = line.split(' ');
    if (blobs.has(blob)) sizes.set(blob, Number(n) || 0);
  }
  return sizes;
}
