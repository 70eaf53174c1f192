import fs from 'node:fs';
import path from 'node:path';
import { decidedHere } from '../ledger/claim.js';
import { appendIndexEvent, makeIndexEvent } from '../ledger/index-log.js';
import { type PointerName, pointerForStatus } from '../ledger/links.js';
import { META_FILE, parseMeta, readMeta, serializeMeta, writeMetaOnce } from '../ledger/meta.js';
import type { Ledger } from '../ledger/paths.js';
import { PATCH_FILE, patchSha256, recordUnreviewed } from '../ledger/reviewed.js';
import { parseState, readState, STATE_FILE, serializeState } from '../ledger/state.js';
import type { RunMeta, RunPublication, RunState } from '../ledger/types.js';
import { candidateNames, importedMeta, importedState, type Occupant, pickName } from './imported.js';
import { displayHost, PUBLICATION_FILE } from './refs.js';
import { EVENTS_FILE, type EventsUpdate, eventsAfter, writeRunFiles } from './run-files.js';

/** One published run, read from git: its files by path. */
export interface PublishedRun {
  readonly remote: string;
  readonly run: string;
  readonly files: ReadonlyMap<string, Buffer>;
  /** Its publication commit and who made it (git's identities); what its state claims is theirs. */
  readonly claim?: Claim;
}

export interface Claim {
  readonly commit: string;
  readonly author: string;
  readonly committer: string;
}

/** A publication that replaced a run's changes.patch: its sha256 before (null: none) and now. */
export interface PatchChange {
  readonly run: string;
  readonly from: string | null;
  /** null: the publication has no patch any more (its earlier one is gone from here too). */
  readonly to: string | null;
}

export type ImportOutcome =
  | { readonly kind: 'imported'; readonly local: string }
  | { readonly kind: 'updated'; readonly local: string; readonly patch?: PatchChange }
  /** A person merged or discarded it here: the gate's decision is not undone by a fetch. */
  | { readonly kind: 'kept'; readonly local: string }
  /** `final`: for what the publication holds, whatever this machine has (src/remote/registry.ts). */
  | { readonly kind: 'skipped'; readonly why: string; readonly final?: boolean };

/** Folders in use here: names, and the short ids they end with (ids are unique in a ledger). */
export interface Taken {
  readonly names: Set<string>;
  readonly ids: Set<string>;
}

/** The group an attempt is imported into, under its name and id here. */
export interface LocalGroup {
  readonly id: string;
  readonly name: string;
}

export interface ImportOptions {
  /** Imported as an attempt of this group (src/remote/import-group.ts). */
  readonly group?: LocalGroup;
  /** Groups the remote publishes: an attempt of one comes with its group, never alone. */
  readonly groupsPublished?: ReadonlySet<string>;
}

const skipped = (why: string): ImportOutcome => ({ kind: 'skipped', why });

/** Parses what a publication says about the run; a string is why it cannot be imported. */
export function parsePublished(p: PublishedRun): { meta: RunMeta; state: RunState; host: string } | string {
  const meta = p.files.get('meta.yaml');
  const state = p.files.get('state.json');
  if (!meta || !state) return 'it has no meta.yaml or state.json';
  try {
    const m = parseMeta(meta.toString('utf8'), `${p.remote}:${p.run}/meta.yaml`);
    if (m.run_name !== p.run || m.run_id !== p.run.slice(-6)) return 'its meta.yaml names another run';
    const s = parseState(state.toString('utf8'), `${p.remote}:${p.run}/state.json`);
    let host: unknown;
    try {
      host = JSON.parse(p.files.get(PUBLICATION_FILE)?.toString('utf8') ?? '{}')?.host;
    } catch {
      host = undefined;
    }
    return { meta: m, state: s, host: displayHost(host) };
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * Brings one published run into the ledger: new under its own name (or a free alternative when a
 * run here has it), or updated in place when it was fetched before. Files are written only below
 * the run's own folder, under paths checked one by one; state.json is written last.
 */
export async function importRun(
  ledger: Ledger,
  p: PublishedRun,
  taken: Taken,
  /** The newest run to point each pointer at: filled here, set once by the caller. */
  pointers: Map<PointerName, string>,
  now: Date,
  opts: ImportOptions = {},
): Promise<ImportOutcome> {
  const parsed = parsePublished(p);
  if (typeof parsed === 'string') return { kind: 'skipped', why: parsed, final: true };
  const ownGroup = groupNameOf(parsed.meta);
  const occupant = (name: string): Occupant => {
    if (taken.names.has(name)) {
      const origin = safeMeta(path.join(ledger.runsDir, name))?.origin;
      return origin?.remote === p.remote && origin.run === p.run ? 'same' : 'taken';
    }
    return taken.ids.has(name.slice(-6)) ? 'taken' : 'free';
  };
  const local = pickName(candidateNames(p.run, p.remote), occupant);
  if (local === null) return skipped('every name it could take here is in use');
  const dir = path.join(ledger.runsDir, local);
  const fresh = occupant(local) === 'free';
  if (fresh && !opts.group && ownGroup !== null && opts.groupsPublished?.has(ownGroup))
    return skipped(`an attempt of the group ${ownGroup}: it is imported with its group, or not at all`);
  const before = fresh ? null : readState(dir);
  if (decidedHere(before)) return { kind: 'kept', local };
  // An attempt of one group here is never taken into another by a later publication.
  const here = fresh || !opts.group ? null : groupNameOf(safeMeta(dir) ?? parsed.meta);
  if (here !== null && here !== opts.group?.name)
    return skipped(`it is an attempt of the group ${here} here`);
  const shaBefore = fresh ? null : patchSha256(dir);
  // The publication's log replaces the last one's; what this machine logged after it stays.
  const events = eventsAfter(dir, p.files.get(EVENTS_FILE), before);
  const failed = writePublication(dir, p, events, fresh);
  if (failed !== null) return skipped(failed);
  const patch = fresh ? null : patchChange(dir, local, shaBefore, p, now);
  const origin = { remote: p.remote, host: parsed.host, run: p.run };
  const meta = fresh
    ? importedMeta(parsed.meta, local, origin, opts.group)
    : regrouped(readMeta(dir) ?? parsed.meta, parsed.meta, opts.group);
  if (fresh) writeMetaOnce(dir, meta);
  // A run fetched alone before its group was published becomes its group's attempt here.
  else if (opts.group) replaceFile(path.join(dir, META_FILE), serializeMeta(meta));
  const publication = {
    ...publicationOf(p, now),
    claimed_status: parsed.state.status,
    events_bytes: events.own,
  };
  const state = importedState(parsed.state, meta, meta.origin?.host ?? parsed.host, publication);
  replaceFile(path.join(dir, STATE_FILE), serializeState(state));
  taken.names.add(local);
  taken.ids.add(local.slice(-6));
  const detail = `from ${p.remote} (${parsed.host})${local === p.run ? '' : `, published as ${p.run}`}`;
  appendIndexEvent(ledger, makeIndexEvent(meta, state, fresh ? 'fetched' : 'fetched_update', detail, now));
  const pointer = state.status !== before?.status ? pointerForStatus(state.status) : null;
  if (pointer && local > (pointers.get(pointer) ?? '')) pointers.set(pointer, local);
  if (fresh) return { kind: 'imported', local };
  return { kind: 'updated', local, ...(patch ? { patch } : {}) };
}

/** The publication's files into the run folder, its events.jsonl as `events` made it; why not. */
function writePublication(dir: string, p: PublishedRun, events: EventsUpdate, fresh: boolean): string | null {
  try {
    const failed = writeRunFiles(dir, new Map([...p.files, [EVENTS_FILE, events.bytes]]), fresh);
    // A publication is the run's files whole: a patch it no longer has is not left here to merge.
    if (failed === null && !fresh && !p.files.has(PATCH_FILE))
      fs.rmSync(path.join(dir, PATCH_FILE), { force: true });
    return failed;
  } finally {
    events.settle();
  }
}

/** Who published what the state claims: the commit's identities, never the publication's files. */
function publicationOf(p: PublishedRun, now: Date): RunPublication {
  const c = p.claim;
  return {
    commit: c?.commit ?? 'unknown',
    author: c?.author ?? 'unknown',
    committer: c?.committer ?? 'unknown',
    fetched_at: now.toISOString(),
  };
}

/**
 * A publication that replaced the patch a person may have reviewed here: recorded unreviewed
 * (src/ledger/reviewed.ts), so `merge` refuses it until it is shown again. null: the same patch.
 */
function patchChange(
  dir: string,
  local: string,
  from: string | null,
  p: PublishedRun,
  now: Date,
): PatchChange | null {
  const to = patchSha256(dir);
  if (to === from) return null;
  if (to === null) return { run: local, from, to };
  const by = p.claim ? ` ${p.claim.commit.slice(0, 12)} by ${p.claim.author}` : '';
  recordUnreviewed(dir, { from, to, why: `publication${by} from ${p.remote} replaced the patch` }, now);
  return { run: local, from, to };
}

/** The group a published run says it is an attempt of (its name there), or null. */
function groupNameOf(meta: RunMeta): string | null {
  const name = (meta.options?.group as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' ? name : null;
}

/** A fetched run's meta.yaml here, made an attempt of `group` when it is imported with one. */
function regrouped(local: RunMeta, published: RunMeta, group: LocalGroup | undefined): RunMeta {
  if (!group) return local;
  return importedMeta(published, local.run_name, local.origin ?? published.origin!, group);
}

function safeMeta(dir: string): RunMeta | undefined {
  try {
    return readMeta(dir);
  } catch {
    return undefined;
  }
}

/**
 * A temp file in the same folder, then rename(2): readers see the old file or the new one. NOTE:
 * no fsync, unlike the ledger's own writes: a fetch of 10,000 runs would spend minutes in it, and
 * a file a crash cut short is written again by the next fetch (the registry is saved after).
 */
function replaceFile(file: string, data: string | Buffer): void {
  const temp = `${file}.fetch-${process.pid}`;
  // A temp name left by a killed fetch of this pid, whatever it is, goes; never written through.
  fs.rmSync(temp, { recursive: true, force: true });
  fs.writeFileSync(temp, data, { flag: 'wx' });
  fs.renameSync(temp, file);
}
