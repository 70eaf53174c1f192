import fs from 'node:fs';
import path from 'node:path';
import type { Env } from '../context.js';
import { listGroupNames } from '../group/store.js';
import { activeDir } from '../ledger/active.js';
import { readDecided } from '../ledger/decided.js';
import { regenerateIndexMd } from '../ledger/index-md.js';
import { type PointerName, readLinkedRun, setPointer } from '../ledger/links.js';
import { listRunNames } from '../ledger/list.js';
import { isRunName } from '../ledger/names.js';
import type { Ledger } from '../ledger/paths.js';
import { readState } from '../ledger/state.js';
import { fetchGroups, type GroupFetchContext, type GroupsFetched } from './fetch-groups.js';
import { type GitCall, git } from './git.js';
import { type ImportOutcome, importRun, type PatchChange, type Taken } from './import.js';
import { ROUND_BYTES, readPublications } from './read.js';
import { displayIdentity, RUNS_NS, trackingRuns } from './refs.js';
import { logRefusal } from './refusals.js';
import { type Refused, readRefused, readRegistry, writeRegistry } from './registry.js';
import { fetchRefs } from './transport.js';

export interface FetchResult {
  readonly remote: string;
  /** Published runs the remote holds. */
  readonly published: number;
  readonly imported: string[];
  readonly updated: string[];
  /** Updated runs whose changes.patch the publication replaced: marked unreviewed here. */
  readonly changed: PatchChange[];
  /** Merged or discarded here: left as the person decided. */
  readonly kept: string[];
  /** Runs this clone published itself. */
  readonly own: number;
  readonly skipped: { readonly run: string; readonly why: string }[];
  /** Publications refused by an earlier fetch and unchanged since: neither read nor logged again. */
  readonly refused_before: number;
  /** Groups (`fix --attempts N`): each imported whole, its attempts counted with the runs above. */
  readonly groups: Omit<GroupsFetched, 'names' | 'runs'>;
}

interface RefEntry {
  readonly run: string;
  readonly commit: string;
  readonly tree: string;
  /** The publication commit's author and committer, `Name <email>` (what the pusher's git said). */
  readonly author: string;
  readonly committer: string;
}

/** Runs read from git per round at most (with ROUND_BYTES): bounds the memory a fetch of many runs takes. */
const CHUNK = 200;

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
  const refused = readRefused(ledger, remote);
  const decided = readDecided(ledger, remote);
  const names = listRunNames(ledger);
  const ids = [...names, ...listGroupNames(ledger)].map((n) => n.slice(-6));
  const taken: Taken = { names: new Set(names), ids: new Set(ids) };
  // NOTE: a fetched run never gets an active marker (the watchdog must not judge another
  // machine's pid); the folder must exist so the watchdog does not scan every state.json instead.
  fs.mkdirSync(activeDir(ledger), { recursive: true });
  const pointers = new Map<PointerName, string>();
  // Groups first: their attempts come with them (and are then known to the registry below).
  const context: GroupFetchContext = { ledger, call, remote, registry, taken, pointers, now };
  const { names: groupNames, runs: attempts, ...groups } = await fetchGroups(context);
  await writeRegistry(ledger, remote, registry, 'runs', refused);
  const result: FetchResult = {
    remote,
    published: refs.length,
    imported: [...attempts.imported],
    updated: [...attempts.updated],
    changed: [...attempts.changed],
    kept: [],
    own: 0,
    skipped: [],
    refused_before: 0,
    groups,
  };
  const published = new Set(refs.map((r) => r.run));
  for (const run of refused.keys()) if (!published.has(run)) refused.delete(run);
  const todo: RefEntry[] = [];
  for (const ref of refs) {
    if (own.has(ref.run) && taken.names.has(ref.run)) (result as { own: number }).own++;
    else if (refused.get(ref.run) === ref.commit) (result as { refused_before: number }).refused_before++;
    else if (decided.has(ref.run) && !taken.names.has(decided.get(ref.run)!.local))
      result.kept.push(decided.get(ref.run)!.local);
    else if (!isRunName(ref.run)) skip(ledger, result, { ref, why: 'not a run name', final: true }, refused);
    else if (registry.get(ref.run)?.commit !== ref.commit) todo.push(ref);
  }
  await importRuns(context, todo, groupNames, result, refused);
  await writeRegistry(ledger, remote, registry, 'runs', refused);
  for (const [pointer, name] of pointers)
    if (laterThanPointer(ledger, pointer, name, now)) setPointer(ledger, pointer, name);
  if (result.imported.length + result.updated.length > 0) await regenerateIndexMd(ledger);
  return result;
}

/**
 * Whether a fetched run reached its status after the run `pointer` names now (last-review: the run
 * that became REVIEW last, here or where it ran): by when each ended, a fetched run's claim no later
 * than the fetch. A pointer naming nothing, or a run that is gone, gives way.
 */
function laterThanPointer(ledger: Ledger, pointer: PointerName, name: string, now: Date): boolean {
  const current = readLinkedRun(path.join(ledger.pointersDir, pointer));
  if (current === null || current === name) return true;
  // A fetched run's claim counts no later than the fetch that brought it (a claim of the future,
  // a clock ahead): a run fetched before cannot hold the pointer against what ends after it.
  const ended = (run: string) => {
    const state = readState(path.join(ledger.runsDir, run));
    if (!state) return Number.NaN;
    const cap = (state.publication && Date.parse(state.publication.fetched_at)) || now.getTime();
    const at = Date.parse(state.ended_at ?? state.updated_at);
    return Number.isNaN(at) ? cap : Math.min(at, cap);
  };
  const theirs = ended(name);
  const ours = ended(current);
  return Number.isNaN(ours) || theirs >= ours;
}

/** Imports the runs whose publication changed, CHUNK at a time; the registry is saved after each. */
async function importRuns(
  c: GroupFetchContext,
  todo: readonly RefEntry[],
  groupNames: ReadonlySet<string>,
  result: FetchResult,
  refused: Refused,
): Promise<void> {
  const { ledger, call, remote, registry, taken, pointers, now } = c;
  for (let at = 0; at < todo.length; ) {
    // A round is CHUNK runs at most, and what ROUND_BYTES holds: the first ones, one at least.
    const files = await readPublications(call, todo.slice(at, at + CHUNK), undefined, ROUND_BYTES);
    const round = todo.slice(at, at + Math.max(1, files.size));
    at += round.length;
    let imported = false;
    for (const ref of round) {
      const published = files.get(ref.run);
      const outcome: ImportOutcome =
        typeof published === 'string'
          ? { kind: 'skipped', why: published, final: true }
          : await importRun(
              ledger,
              {
                remote,
                run: ref.run,
                files: published ?? new Map(),
                claim: { commit: ref.commit, author: ref.author, committer: ref.committer },
              },
              taken,
              pointers,
              now,
              { groupsPublished: groupNames },
            );
      if (outcome.kind === 'skipped') skip(ledger, result, { ref, ...outcome }, refused);
      else record(result, outcome);
      if (outcome.kind !== 'skipped') registry.set(ref.run, { local: outcome.local, commit: ref.commit });
      imported ||= outcome.kind !== 'skipped';
    }
    // A round that imported saves what it did; refusals alone wait for the end of the fetch (a
    // file of 100,000 of them written again after each round was gigabytes).
    if (imported) await writeRegistry(ledger, remote, registry, 'runs', refused);
  }
}

function record(result: FetchResult, outcome: Exclude<ImportOutcome, { kind: 'skipped' }>): void {
  result[outcome.kind].push(outcome.local);
  if (outcome.kind === 'updated' && outcome.patch) result.changed.push(outcome.patch);
}

/**
 * A run not imported: reported, and logged (src/remote/refusals.ts). `final`: refused for what its
 * publication holds, so that publication is not read again (src/remote/registry.ts).
 */
function skip(
  ledger: Ledger,
  result: FetchResult,
  s: { readonly ref: RefEntry; readonly why: string; readonly final?: boolean },
  refused: Refused,
): void {
  result.skipped.push({ run: s.ref.run, why: s.why });
  logRefusal(ledger, { remote: result.remote, kind: 'run', name: s.ref.run, why: s.why });
  if (s.final) refused.set(s.ref.run, s.ref.commit);
}

export async function listRefs(call: GitCall, prefix: string): Promise<RefEntry[]> {
  // NUL between fields: a name in an identity has spaces; git keeps newlines out of identities.
  const format =
    '%(objectname) %(tree) %(refname)%00%(authorname) %(authoremail)%00%(committername) %(committeremail)';
  const out = await git(call, ['for-each-ref', `--format=${format}`, prefix]);
  return out
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [head = '', author, committer] = line.split('\0');
      const [commit = '', tree = '', ref = ''] = head.split(' ');
      return {
        commit,
        tree,
        run: ref.slice(prefix.length),
        author: displayIdentity(author),
        committer: displayIdentity(committer),
      };
    });
}
