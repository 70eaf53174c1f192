import { checkGroupMeta, checkGroupState } from '../group/check.js';
import type { GroupMeta, GroupState } from '../group/types.js';
import { isObj } from '../ledger/check.js';
import { isRunName, runIdOf } from '../ledger/names.js';
import type { RunMeta, RunOrigin } from '../ledger/types.js';
import type { PublishedAttempt } from './publish-group.js';
import { displayHost, PUBLICATION_FILE } from './refs.js';

/*
 * What a fetched group becomes here, pure. A group's publication is untrusted as a run's is: its
 * files are parsed by the group's own checks, its members must be exactly the attempts it carries
 * (each one's commit a parent of the group's, so git fetched it with the group), and nothing that
 * would let this machine act on it (a pid) is kept.
 */

/** The most attempts a group has (`fix --attempts` takes at most 16). */
export const MAX_GROUP_ATTEMPTS = 16;

/** A group's publication, checked: what to import. */
export interface GroupPlan {
  readonly meta: GroupMeta;
  readonly state: GroupState;
  readonly host: string;
  /** The attempts that started, each with the commit of its run's publication. */
  readonly attempts: readonly PublishedAttempt[];
}

const HEX40 = /^[0-9a-f]{40}$/;

function parseJson(bytes: Buffer | undefined): unknown {
  if (bytes === undefined) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** publication.json's list of attempts; a string is why it is not one. */
function manifest(raw: unknown): PublishedAttempt[] | string {
  const list = isObj(raw) ? raw.attempts : undefined;
  if (!Array.isArray(list) || list.length > MAX_GROUP_ATTEMPTS)
    return `its ${PUBLICATION_FILE} lists no attempts`;
  const out: PublishedAttempt[] = [];
  for (const a of list) {
    if (
      !isObj(a) ||
      typeof a.attempt !== 'number' ||
      typeof a.run !== 'string' ||
      typeof a.commit !== 'string'
    )
      return `its ${PUBLICATION_FILE} lists an attempt that is not { attempt, run, commit }`;
    if (!HEX40.test(a.commit)) return `its ${PUBLICATION_FILE} names a commit that is not one`;
    out.push({ attempt: a.attempt, run: a.run, commit: a.commit });
  }
  return out;
}

/**
 * Checks a published group (`name` as published, its files, its commit's parents). A string is
 * why the whole group is refused: a group is imported whole or not at all, so that its ranking
 * and `merge <group>` never choose among fewer attempts than ran.
 */
export function checkGroupPublication(
  name: string,
  files: ReadonlyMap<string, Buffer>,
  parents: readonly string[],
): GroupPlan | string {
  if (!isRunName(name)) return 'not a group name';
  let meta: GroupMeta;
  let state: GroupState;
  try {
    meta = checkGroupMeta(parseJson(files.get('group.json')), 'group.json');
    state = checkGroupState(parseJson(files.get('state.json')), 'state.json');
  } catch (error) {
    return (error as Error).message;
  }
  if (meta.group_name !== name || meta.group_id !== runIdOf(name))
    return 'its group.json names another group';
  if (meta.attempts > MAX_GROUP_ATTEMPTS)
    return `it has ${meta.attempts} attempts (at most ${MAX_GROUP_ATTEMPTS})`;
  if (state.members.length !== meta.attempts || state.members.some((m, i) => m.attempt !== i + 1))
    return `its members are not attempts 1 to ${meta.attempts}`;
  const runs = state.members.flatMap((m) => (m.run === null ? [] : [m.run]));
  const bad = runs.find((run) => !isRunName(run));
  if (bad !== undefined) return `a member names ${JSON.stringify(bad.slice(0, 80))}: not a run name`;
  if (new Set(runs).size !== runs.length) return 'two members name the same run';
  if (state.merged && !runs.includes(state.merged.run)) return 'it says it merged a run that is not a member';
  const raw = parseJson(files.get(PUBLICATION_FILE));
  const listed = manifest(raw);
  if (typeof listed === 'string') return listed;
  const attempts: PublishedAttempt[] = [];
  for (const m of state.members) {
    if (m.run === null) continue;
    const entry = listed.find((a) => a.attempt === m.attempt);
    if (!entry || entry.run !== m.run || !parents.includes(entry.commit))
      return `attempt ${m.attempt} (${m.run}) is not in the publication: a partial group is not imported`;
    attempts.push(entry);
  }
  if (listed.length !== attempts.length) return 'its publication lists attempts its members do not name';
  return { meta, state, host: displayHost(isObj(raw) ? raw.host : undefined), attempts };
}

/** Why an attempt's own meta.yaml does not belong to the group at `attempt`; null when it does. Pure. */
export function attemptMismatch(run: RunMeta, meta: GroupMeta, attempt: number): string | null {
  const g = run.options?.group;
  const own = isObj(g) ? g : {};
  if (run.type !== 'fix') return `attempt ${attempt} (${run.run_name}) is a ${run.type} run, not a fix run`;
  if (own.id !== meta.group_id || own.name !== meta.group_name || own.attempt !== attempt)
    return `attempt ${attempt} (${run.run_name}) is not this group's attempt ${attempt}: its meta.yaml names another group`;
  if (own.attempts !== meta.attempts)
    return `attempt ${attempt} (${run.run_name}) counts another number of attempts`;
  return null;
}

/** group.json of a fetched group: its own, under its name here, with where it came from. Pure. */
export function importedGroupMeta(remote: GroupMeta, local: string, origin: RunOrigin): GroupMeta {
  return { ...remote, group_name: local, group_id: runIdOf(local), origin };
}

/**
 * The state of a group that ran elsewhere: its members under their names here, and never ACTIVE
 * (its pid is another machine's; a group still running there shows ACTIVE by its attempts). Pure.
 */
export function importedGroupState(remote: GroupState, locals: ReadonlyMap<string, string>): GroupState {
  const local = (run: string | null) => (run === null ? null : (locals.get(run) ?? null));
  const merged = remote.merged ? { ...remote.merged, run: local(remote.merged.run) } : null;
  const status = remote.status === 'ACTIVE' ? 'ENDED' : remote.status;
  return {
    ...remote,
    status,
    // What this machine decides is never taken from a publication: its status is its claim.
    claimed_status: status,
    pid: null,
    pid_start: null,
    members: remote.members.map((m) => ({ ...m, run: local(m.run) })),
    merged: merged?.run ? { ...merged, run: merged.run } : null,
  };
}
