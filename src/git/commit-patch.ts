import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { conflictNames } from './apply.js';
import { git, runGit } from './exec.js';
import type { GitSettings } from './inert.js';
import { patchPaths } from './patch.js';

/*
 * `merge --commit`'s commit: HEAD plus exactly the patch, whatever else the person has in their
 * tree or index. `git commit --only <paths>` took each path as the working tree has it, so the
 * person's own uncommitted edits in a merged file went into the run's commit (found by a tester).
 * Plumbing instead, as the run's result commit (result-commit.ts): the patch is applied to HEAD in
 * a private index (GIT_INDEX_FILE in a temp folder), then `write-tree` and `commit-tree`; nothing
 * of the person's is touched until the commit exists. No hook runs (inert.ts). Landing it moves
 * the person's index entries of the merged paths to what they staged plus the patch — for a path
 * they staged nothing in, the commit's own entry — then HEAD, guarded by its old value.
 */

/** A commit made, not yet landed: nothing of the person's has changed. */
export interface PatchCommit {
  readonly commit: string;
  /** HEAD when it was made (null: an unborn branch): the branch moves only from there. */
  readonly parent: string | null;
  /** `update-index -z --index-info` records for the person's index: the merged paths after, and before. */
  readonly index: { readonly to: string; readonly back: string };
  readonly subject: string;
}

/** Where the patch does not apply: to HEAD, or to what the person staged of its files. */
export type PatchCommitRefusal = {
  readonly refused: 'head' | 'staged';
  readonly conflicts: readonly string[];
  readonly message: string;
};

const APPLY = ['apply', '--cached', '--binary', '--whitespace=nowarn', '--no-ignore-whitespace'];

/**
 * Makes the commit of HEAD plus `patchFile` (its `exclude` paths aside: a gitlink never lands)
 * and works out the person's index after it, changing nothing of theirs. A refusal when the patch
 * does not apply to HEAD or to a staged file; a GitError when git cannot commit (a signing program
 * that fails). `config`: settings over the inert ones (merge's filters off).
 */
export async function makePatchCommit(
  root: string,
  patchFile: string,
  opts: { readonly message: string; readonly exclude: readonly string[]; readonly config: GitSettings },
): Promise<PatchCommit | PatchCommitRefusal> {
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-commit-'));
  try {
    const on: Private = {
      root,
      patchFile,
      paths: patchPaths(fs.readFileSync(patchFile)),
      exclude: opts.exclude,
      config: opts.config,
      temp,
    };
    const parent =
      (await runGit(['rev-parse', '--verify', '-q', 'HEAD^{commit}'], { cwd: root })).stdout || null;
    const tree = await headWithPatch(on, parent);
    if (typeof tree !== 'string') return tree;
    const index = await stagedWithPatch(on);
    if ('refused' in index) return index;
    const { commit, subject } = await commitTree(on, tree, parent, opts.message);
    return {
      commit,
      parent,
      index: indexChange(index.before, index.after, '0'.repeat(commit.length)),
      subject,
    };
  } finally {
    fs.rmSync(temp, { recursive: true, force: true });
  }
}

/** What the private indexes are made with, in `temp`. */
interface Private {
  readonly root: string;
  readonly patchFile: string;
  readonly paths: readonly string[];
  readonly exclude: readonly string[];
  readonly config: GitSettings;
  readonly temp: string;
}

/** git in `root` on the private index `index` (a file in `temp`). */
function onIndex(on: Private, index: string, args: string[], input?: string): Promise<string> {
  const vars = { GIT_INDEX_FILE: path.join(on.temp, index) };
  return git(['--literal-pathspecs', ...args], { cwd: on.root, config: on.config, vars, input });
}

/** The patch applied to the private index `index`: null, or where it does not apply. */
async function applyTo(
  on: Private,
  index: string,
  against: 'head' | 'staged',
): Promise<PatchCommitRefusal | null> {
  const exclude = on.exclude.map((p) => `--exclude=${wildmatchLiteral(p)}`);
  const vars = { GIT_INDEX_FILE: path.join(on.temp, index) };
  const result = await runGit([...APPLY, ...exclude, '--', on.patchFile], {
    cwd: on.root,
    config: on.config,
    vars,
  });
  if (result.exitCode === 0) return null;
  return {
    refused: against,
    conflicts: conflictNames(result.stderr, on.paths),
    message: result.stderr.trim(),
  };
}

/** The tree of HEAD (none: an unborn branch) with the patch applied. */
async function headWithPatch(on: Private, parent: string | null): Promise<string | PatchCommitRefusal> {
  await onIndex(on, 'head', ['read-tree', ...(parent ? [`${parent}^{tree}`] : ['--empty'])]);
  return (await applyTo(on, 'head', 'head')) ?? onIndex(on, 'head', ['write-tree']);
}

/**
 * The person's index entries of the patch's paths, before and after the patch: applied to them
 * alone, in an index of their own. A path they staged nothing in ends as the commit has it.
 */
async function stagedWithPatch(
  on: Private,
): Promise<{ before: Map<string, string>; after: Map<string, string> } | PatchCommitRefusal> {
  const paths = new Set(on.paths);
  const before = entriesOf(await git(['ls-files', '-s', '-z'], { cwd: on.root, config: on.config }), paths);
  await onIndex(on, 'staged', ['read-tree', '--empty']);
  if (before.size > 0) await onIndex(on, 'staged', ['update-index', '-z', '--index-info'], records(before));
  const refused = await applyTo(on, 'staged', 'staged');
  if (refused) return refused;
  return { before, after: entriesOf(await onIndex(on, 'staged', ['ls-files', '-s', '-z']), paths) };
}

/**
 * The commit object, made as `git commit -m` makes one: the message's whitespace cleaned, signed
 * when the person signs their commits (commit-tree reads no commit.gpgSign), the identity theirs.
 */
async function commitTree(
  on: Private,
  tree: string,
  parent: string | null,
  text: string,
): Promise<{ commit: string; subject: string }> {
  const call = { cwd: on.root, config: on.config };
  const message = await git(['stripspace'], { ...call, input: text, stripFinalNewline: false });
  const sign = (await runGit(['config', '--type=bool', 'commit.gpgSign'], call)).stdout === 'true';
  const args = ['commit-tree', tree, ...(parent ? ['-p', parent] : []), ...(sign ? ['-S'] : []), '-F', '-'];
  const commit = await git(args, { ...call, input: message });
  return { commit, subject: message.split('\n')[0] ?? '' };
}

/**
 * Lands a commit made by makePatchCommit: the person's index entries of the merged paths, then
 * HEAD (refused by git when it moved since). When HEAD cannot move, the index is put back as it
 * was and the error thrown: nothing but the working tree has changed.
 */
export async function landPatchCommit(root: string, made: PatchCommit, config: GitSettings): Promise<void> {
  const index = (input: string) =>
    input === ''
      ? Promise.resolve('')
      : git(['update-index', '-z', '--index-info'], { cwd: root, config, input });
  await index(made.index.to);
  try {
    await git(['update-ref', '-m', `commit: ${made.subject}`, 'HEAD', made.commit, made.parent ?? ''], {
      cwd: root,
      config,
    });
  } catch (error) {
    await index(made.index.back).catch(() => {});
    throw error;
  }
}

/** A merged path the person still has uncommitted edits in, staged or not (after the commit). */
export interface Uncommitted {
  readonly path: string;
  readonly staged: boolean;
  readonly unstaged: boolean;
}

/** Which of `files` differ from HEAD in the index (staged) or the working tree (unstaged). */
export async function uncommittedIn(
  root: string,
  files: readonly string[],
  config: GitSettings,
): Promise<Uncommitted[]> {
  if (files.length === 0) return [];
  const args = [
    '--literal-pathspecs',
    'status',
    '--porcelain=v1',
    '-z',
    '--untracked-files=no',
    '--',
    ...files,
  ];
  const out = await git(args, { cwd: root, config });
  return statusRecords(out);
}

/** `status --porcelain=v1 -z` records as Uncommitted (a rename's source record skipped). Pure. */
export function statusRecords(out: string): Uncommitted[] {
  const found: Uncommitted[] = [];
  const fields = out.split('\0');
  for (let i = 0; i < fields.length; i++) {
    const record = fields[i]!;
    if (record.length < 4) continue;
    const [x, y] = [record[0]!, record[1]!];
    found.push({ path: record.slice(3), staged: x !== ' ' && x !== '?', unstaged: y !== ' ' && y !== '?' });
    if (x === 'R' || x === 'C') i++;
  }
  return found;
}

/** `ls-files -s -z` output: path → `mode oid stage`, for `paths` only. Pure. */
export function entriesOf(listing: string, paths: ReadonlySet<string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const record of listing.split('\0')) {
    const tab = record.indexOf('\t');
    if (tab < 0) continue;
    const file = record.slice(tab + 1);
    if (paths.has(file)) out.set(file, record.slice(0, tab));
  }
  return out;
}

/** The index records that take `before` to `after`, and back; mode 0 removes a path. Pure. */
export function indexChange(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
  zero: string,
): { to: string; back: string } {
  const gone = `0 ${zero} 0`;
  const to = new Map<string, string>();
  const back = new Map<string, string>();
  for (const file of new Set([...before.keys(), ...after.keys()])) {
    if (before.get(file) === after.get(file)) continue;
    to.set(file, after.get(file) ?? gone);
    back.set(file, before.get(file) ?? gone);
  }
  return { to: records(to), back: records(back) };
}

const records = (entries: ReadonlyMap<string, string>) =>
  [...entries].map(([file, entry]) => `${entry}\t${file}\0`).join('');

/** A path as a `git apply --exclude` pattern (wildmatch) that matches it alone. Pure. */
export function wildmatchLiteral(file: string): string {
  return file.replace(/[\\*?[\]]/g, '\\$&');
}
