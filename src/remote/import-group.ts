import fs from 'node:fs';
import path from 'node:path';
import { errnoCode } from '../errors.js';
import { groupDir, groupsDir, listGroupNames, readGroup } from '../group/store.js';
import { GROUP_FILE, GROUP_STATE_FILE } from '../group/types.js';
import { appendIndexEvent, makeIndexEvent } from '../ledger/index-log.js';
import type { PointerName } from '../ledger/links.js';
import { readMeta } from '../ledger/meta.js';
import { runIdOf } from '../ledger/names.js';
import type { Ledger } from '../ledger/paths.js';
import { readState } from '../ledger/state.js';
import { writeAtomic } from '../util/fs.js';
import { type Claim, type ImportOutcome, importRun, parsePublished, type Taken } from './import.js';
import { candidateNames, type Occupant, pickName } from './imported.js';
import { attemptMismatch, type GroupPlan, importedGroupMeta, importedGroupState } from './imported-group.js';
import { isGroupFile } from './refs.js';

/** One published group, read from git and checked (src/remote/imported-group.ts). */
export interface PublishedGroup {
  readonly remote: string;
  readonly group: string;
  readonly files: ReadonlyMap<string, Buffer>;
  readonly plan: GroupPlan;
  /** Each attempt's publication (its files), by its run's name there; a string: why it cannot be read. */
  readonly attempts: ReadonlyMap<string, ReadonlyMap<string, Buffer> | string>;
  /** Each attempt's publication commit and its identities, by commit (what its state claims is theirs). */
  readonly claims?: ReadonlyMap<string, Claim>;
}

export interface GroupImport {
  readonly outcome: ImportOutcome;
  /** Each attempt imported: its name there → its name here. */
  readonly runs: ReadonlyMap<string, string>;
  /** Each attempt's outcome (imported / updated / kept). */
  readonly attempts: readonly { readonly run: string; readonly outcome: ImportOutcome }[];
}

const refused = (why: string): GroupImport => ({
  outcome: { kind: 'skipped', why },
  runs: new Map(),
  attempts: [],
});

/** Why an attempt cannot be imported into its group; null when every one can. Reads nothing but `p`. */
function attemptsProblem(p: PublishedGroup): string | null {
  for (const a of p.plan.attempts) {
    const files = p.attempts.get(a.run);
    if (files === undefined || typeof files === 'string')
      return `attempt ${a.attempt} (${a.run}): ${files ?? 'its publication cannot be read'}`;
    const parsed = parsePublished({ remote: p.remote, run: a.run, files });
    if (typeof parsed === 'string') return `attempt ${a.attempt} (${a.run}): ${parsed}`;
    const mismatch = attemptMismatch(parsed.meta, p.plan.meta, a.attempt);
    if (mismatch) return mismatch;
  }
  return null;
}

/**
 * Brings a published group into the ledger whole: every attempt as a run (remapped like any
 * fetched run when its name is taken here), then the group's folder, its members naming the
 * attempts' names here. The publication is checked whole before anything is written; state.json
 * is written last, so the group is readable only once its attempts are there.
 */
export async function importGroup(
  ledger: Ledger,
  p: PublishedGroup,
  taken: Taken,
  pointers: Map<PointerName, string>,
  now: Date,
): Promise<GroupImport> {
  const problem = attemptsProblem(p);
  if (problem !== null) return refused(problem);
  const groups = new Set(listGroupNames(ledger));
  const occupant = (name: string): Occupant => {
    if (groups.has(name)) {
      const origin = safeGroup(ledger, name)?.meta.origin;
      return origin?.remote === p.remote && origin.run === p.group ? 'same' : 'taken';
    }
    return taken.ids.has(runIdOf(name)) ? 'taken' : 'free';
  };
  const local = pickName(candidateNames(p.group, p.remote), occupant);
  if (local === null) return refused('every name it could take here is in use');
  const fresh = occupant(local) === 'free';
  const before = fresh ? null : safeGroup(ledger, local);
  // A merge or discard here is kept; a MERGED its publication claimed is not a decision here.
  const decided = before?.state.status === 'MERGED' || before?.state.status === 'DISCARDED';
  if (decided && before.state.claimed_status !== before.state.status)
    return { outcome: { kind: 'kept', local }, runs: new Map(), attempts: [] };
  taken.ids.add(runIdOf(local));
  const runs = new Map<string, string>();
  const attempts: { run: string; outcome: ImportOutcome }[] = [];
  const group = { id: runIdOf(local), name: local };
  for (const a of p.plan.attempts) {
    const files = p.attempts.get(a.run) as ReadonlyMap<string, Buffer>;
    const claim = p.claims?.get(a.commit);
    const published = { remote: p.remote, run: a.run, files, ...(claim ? { claim } : {}) };
    const outcome = await importRun(ledger, published, taken, pointers, now, { group });
    if (outcome.kind === 'skipped') {
      dropNew(ledger, attempts, { taken, pointers, now });
      return refused(`attempt ${a.attempt} (${a.run}): ${outcome.why}`);
    }
    runs.set(a.run, outcome.local);
    attempts.push({ run: a.run, outcome });
  }
  const written = await writeGroupFolder(ledger, p, local, fresh, runs);
  if (written !== null) {
    dropNew(ledger, attempts, { taken, pointers, now });
    return refused(written);
  }
  return { outcome: { kind: fresh ? 'imported' : 'updated', local }, runs, attempts };
}

/** The group's folder here: its files, group.json once, state.json last. A string: why it failed. */
async function writeGroupFolder(
  ledger: Ledger,
  p: PublishedGroup,
  local: string,
  fresh: boolean,
  runs: ReadonlyMap<string, string>,
): Promise<string | null> {
  const dir = groupDir(ledger, local);
  try {
    if (fresh) fs.mkdirSync(groupsDir(ledger), { recursive: true });
    if (fresh) fs.mkdirSync(dir);
    for (const [file, bytes] of p.files) {
      if (file === GROUP_FILE || file === GROUP_STATE_FILE || !isGroupFile(file, p.plan.meta.attempts))
        continue;
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      await writeAtomic(path.join(dir, file), bytes);
    }
    if (fresh) {
      const origin = { remote: p.remote, host: p.plan.host, run: p.group };
      const meta = importedGroupMeta(p.plan.meta, local, origin);
      fs.writeFileSync(path.join(dir, GROUP_FILE), `${JSON.stringify(meta, null, 2)}\n`, { flag: 'wx' });
    }
    const state = importedGroupState(p.plan.state, runs);
    await writeAtomic(path.join(dir, GROUP_STATE_FILE), `${JSON.stringify(state, null, 2)}\n`);
    return null;
  } catch (error) {
    if (fresh) fs.rmSync(dir, { recursive: true, force: true });
    return `its files could not be written to ${dir} (${errnoCode(error) ?? (error as Error).message})`;
  }
}

/**
 * A group refused once some of its attempts were written (a later one could not be: its names all
 * taken here, its files refused by the file system): the attempts new here go again — folder,
 * INDEX row, pointer — so no attempt of a group that is not here stays on its own, mergeable alone.
 */
function dropNew(
  ledger: Ledger,
  attempts: readonly { readonly outcome: ImportOutcome }[],
  c: { readonly taken: Taken; readonly pointers: Map<PointerName, string>; readonly now: Date },
): void {
  for (const { outcome } of attempts) {
    if (outcome.kind !== 'imported') continue;
    const dir = path.join(ledger.runsDir, outcome.local);
    const [meta, state] = [readMeta(dir), readState(dir)];
    if (meta && state)
      appendIndexEvent(ledger, makeIndexEvent(meta, state, 'deleted', 'its group was not imported', c.now));
    fs.rmSync(dir, { recursive: true, force: true });
    c.taken.names.delete(outcome.local);
    c.taken.ids.delete(runIdOf(outcome.local));
    for (const [pointer, name] of c.pointers) if (name === outcome.local) c.pointers.delete(pointer);
  }
}

function safeGroup(ledger: Ledger, name: string) {
  try {
    return readGroup(ledger, name);
  } catch {
    return null;
  }
}
