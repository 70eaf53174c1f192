import fs from 'node:fs';
import { groupDir } from '../group/store.js';
import type { PointerName } from '../ledger/links.js';
import { isRunName } from '../ledger/names.js';
import type { Ledger } from '../ledger/paths.js';
import { type GitCall, git } from './git.js';
import type { Claim, PatchChange, Taken } from './import.js';
import { importGroup } from './import-group.js';
import { checkGroupPublication } from './imported-group.js';
import { MAX_GROUP_BYTES, readPublications } from './read.js';
import { displayIdentity, GROUPS_NS, trackingGroups } from './refs.js';
import { logRefusal } from './refusals.js';
import { type Registry, readRefused, readRegistry, writeRegistry } from './registry.js';

export interface GroupsFetched {
  /** Published groups the remote holds. */
  readonly published: number;
  readonly imported: string[];
  readonly updated: string[];
  readonly kept: string[];
  /** Groups this clone published itself. */
  readonly own: number;
  readonly skipped: { readonly group: string; readonly why: string }[];
  /** Publications refused by an earlier fetch for what they hold, unchanged since: not read again. */
  readonly refused_before: number;
  /** The names (there) of every group the remote publishes: their attempts come with them only. */
  readonly names: ReadonlySet<string>;
  /** Attempts imported with their groups: their names there → here; those whose patch changed. */
  readonly runs: { readonly imported: string[]; readonly updated: string[]; readonly changed: PatchChange[] };
}

export interface GroupFetchContext {
  readonly ledger: Ledger;
  readonly call: GitCall;
  readonly remote: string;
  /** The runs' registry: each attempt imported with its group is recorded in it. */
  readonly registry: Registry;
  readonly taken: Taken;
  readonly pointers: Map<PointerName, string>;
  readonly now: Date;
}

interface Commit extends Claim {
  readonly name: string;
  readonly tree: string;
  readonly parents: string[];
}

/** Commits' trees, parents and identities, one git process for all of them. */
async function commits(call: GitCall, ids: readonly string[]): Promise<Map<string, Commit>> {
  if (ids.length === 0) return new Map();
  const format = '--format=%H %T %P%x00%an <%ae>%x00%cn <%ce>';
  const out = await git(call, ['log', '--no-walk=unsorted', format, ...ids, '--']);
  const map = new Map<string, Commit>();
  for (const line of out.split('\n').filter(Boolean)) {
    const [head = '', author = '', committer = ''] = line.split('\0');
    const [commit = '', tree = '', ...parents] = head.split(' ');
    map.set(commit, {
      name: '',
      commit,
      tree,
      parents,
      author: displayIdentity(author),
      committer: displayIdentity(committer),
    });
  }
  return map;
}

interface GroupRef {
  readonly name: string;
  readonly commit: string;
  /** A ref a remote may point at a tree or a blob: only a commit is a publication. */
  readonly type: string;
}

async function listGroupRefs(call: GitCall, prefix: string): Promise<GroupRef[]> {
  const out = await git(call, ['for-each-ref', '--format=%(objectname) %(objecttype) %(refname)', prefix]);
  return out
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [commit = '', type = '', ref = ''] = line.split(' ');
      return { commit, type, name: ref.slice(prefix.length) };
    });
}

/**
 * The groups phase of `agentbox fetch`, before the runs: each group whose publication changed is
 * imported whole (src/remote/import-group.ts) or refused whole, and every refusal is logged.
 */
export async function fetchGroups(c: GroupFetchContext): Promise<GroupsFetched> {
  const refs = await listGroupRefs(c.call, trackingGroups(c.remote));
  const own = new Set((await listGroupRefs(c.call, GROUPS_NS)).map((r) => r.name));
  const registry = readRegistry(c.ledger, c.remote, 'groups');
  const refused = readRefused(c.ledger, c.remote, 'groups');
  const result: GroupsFetched = {
    published: refs.length,
    imported: [],
    updated: [],
    kept: [],
    own: 0,
    skipped: [],
    refused_before: 0,
    names: new Set(refs.map((r) => r.name)),
    runs: { imported: [], updated: [], changed: [] },
  };
  // `final`: refused for what the publication holds, so it is not read again until it changes.
  const refuse = (ref: GroupRef, why: string, final: boolean) => {
    result.skipped.push({ group: ref.name, why });
    logRefusal(c.ledger, { remote: c.remote, kind: 'group', name: ref.name, why });
    if (final) refused.set(ref.name, ref.commit);
  };
  for (const run of refused.keys()) if (!result.names.has(run)) refused.delete(run);
  for (const ref of refs) {
    if (own.has(ref.name) && fs.existsSync(groupDir(c.ledger, ref.name))) (result as { own: number }).own++;
    else if (refused.get(ref.name) === ref.commit) (result as { refused_before: number }).refused_before++;
    else if (!isRunName(ref.name)) refuse(ref, 'not a group name', true);
    else if (ref.type !== 'commit') refuse(ref, `its ref names a ${ref.type}, not a commit`, true);
    else if (registry.get(ref.name)?.commit !== ref.commit) {
      const done = await fetchOne(c, ref, result);
      if ('why' in done) refuse(ref, done.why, done.final);
      else registry.set(ref.name, { local: done.local, commit: ref.commit });
    }
  }
  await writeRegistry(c.ledger, c.remote, registry, 'groups', refused);
  return result;
}

/** One group: read, checked, imported; or why it is refused (`final`: for what it holds). */
async function fetchOne(
  c: GroupFetchContext,
  ref: { readonly name: string; readonly commit: string },
  result: GroupsFetched,
): Promise<{ local: string } | { why: string; final: boolean }> {
  const held = (why: string) => ({ why, final: true });
  const head = (await commits(c.call, [ref.commit])).get(ref.commit);
  if (!head) return held('its commit cannot be read');
  const files = (await readPublications(c.call, [{ run: ref.name, tree: head.tree }])).get(ref.name);
  if (files === undefined || typeof files === 'string') return held(files ?? 'its files cannot be read');
  const plan = checkGroupPublication(ref.name, files, head.parents);
  if (typeof plan === 'string') return held(plan);
  const made = await commits(
    c.call,
    plan.attempts.map((a) => a.commit),
  );
  const trees = plan.attempts.map((a) => ({ run: a.run, tree: made.get(a.commit)?.tree ?? '' }));
  const attempts = await readPublications(c.call, trees, MAX_GROUP_BYTES);
  const done = await importGroup(
    c.ledger,
    { remote: c.remote, group: ref.name, files, plan, attempts, claims: made },
    c.taken,
    c.pointers,
    c.now,
  );
  // Its attempts' refusals may be this machine's (a name in use, a disk full): tried again.
  if (done.outcome.kind === 'skipped') return { why: done.outcome.why, final: false };
  for (const a of plan.attempts) {
    const local = done.runs.get(a.run);
    if (local !== undefined) c.registry.set(a.run, { local, commit: a.commit });
  }
  for (const a of done.attempts) {
    if (a.outcome.kind === 'imported' || a.outcome.kind === 'updated')
      result.runs[a.outcome.kind].push(a.outcome.local);
    if (a.outcome.kind === 'updated' && a.outcome.patch) result.runs.changed.push(a.outcome.patch);
  }
  result[done.outcome.kind].push(done.outcome.local);
  return { local: done.outcome.local };
}
