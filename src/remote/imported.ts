import { createHash } from 'node:crypto';
import { formatRunName, parseRunName } from '../ledger/names.js';
import { shortTask } from '../ledger/text.js';
import type { AttemptOf, RunMeta, RunOrigin, RunPublication, RunState } from '../ledger/types.js';

/*
 * What a fetched run becomes in this ledger, pure. Everything in a publication is untrusted: it
 * is parsed by the ledger's own parsers, and whatever would let this machine act on it (a pid to
 * signal, a worktree to remove, a socket, a process mark, a folder with slash commands) is dropped.
 */

/**
 * The state to store for a run that ran elsewhere. Its status, times, usage and outcome are kept
 * (what `status` and `show` report); nothing that names a process, a path or a commit there is:
 * the watchdog, `stop`, `discard` and `diff` must never act on another machine's values here.
 */
export function importedState(
  remote: RunState,
  meta: RunMeta,
  host?: string,
  /** Who published it (git's commit, read here): what makes the rest a claim. */
  publication: RunPublication | null = null,
): RunState {
  return {
    ...remote,
    // Never the publication's own say: a state.json may carry any `publication` it likes.
    publication,
    pid: null,
    pid_start: null,
    claude_pid: null,
    claude_pid_start: null,
    worktree_path: null,
    branch: null,
    endpoint_url: null,
    socket_path: null,
    process_mark: null,
    launch_dir: null,
    checkpoint: null,
    // `diff` and merge both use changes.patch then: what a person reviews is what merge applies.
    result_commit: null,
    config_hash: meta.config_hash,
    summary: {
      type: meta.type,
      task: shortTask(meta.task),
      ...(host === undefined ? {} : { ran_on: host }),
      ...attemptOf(meta),
    },
  };
}

/** An attempt's place in its group here, from its meta.yaml (set by importedMeta). */
function attemptOf(meta: RunMeta): { group?: AttemptOf } {
  const g = meta.options?.group as { id?: unknown; attempt?: unknown; attempts?: unknown } | undefined;
  if (!g || typeof g.id !== 'string' || typeof g.attempt !== 'number' || typeof g.attempts !== 'number')
    return {};
  return { group: { id: g.id, attempt: g.attempt, attempts: g.attempts } };
}

/** The meta.yaml of a fetched run: its own, under its name here, with where it came from. */
export function importedMeta(
  remote: RunMeta,
  local: string,
  origin: RunOrigin,
  group?: { readonly id: string; readonly name: string },
): RunMeta {
  // An attempt is one only with its group here: a run that says it belongs to a group it did not
  // come with (or to one of this machine's groups) is a plain run.
  const { group: own, ...options } = remote.options ?? {};
  const k = own as { attempt?: unknown; attempts?: unknown } | undefined;
  const attempt = group && k ? { group: { ...group, attempt: k.attempt, attempts: k.attempts } } : {};
  const kept = { ...options, ...attempt };
  // `rerun_of` names a run of the other machine's ledger: here it would name another run, or none.
  const { options: _, rerun_of: _rerunOf, ...rest } = remote;
  return {
    ...rest,
    ...(Object.keys(kept).length > 0 ? { options: kept } : {}),
    run_name: local,
    run_id: local.slice(-6),
    origin,
  };
}

const ALTERNATIVES = 8;

/**
 * The names a published run may take here, in order: its own, then the same minute and slug
 * with another id, derived from the remote and its name so that a second fetch picks the same
 * one. [] when `run` is not a run name.
 */
export function candidateNames(run: string, remote: string): string[] {
  const parsed = parseRunName(run);
  if (!parsed) return [];
  const others = Array.from({ length: ALTERNATIVES }, (_, k) => {
    const id = createHash('sha256').update(`${remote}\0${run}\0${k}`).digest('hex').slice(0, 6);
    return formatRunName(parsed.minute, parsed.slug, id);
  });
  return [run, ...others];
}

/** What is at a candidate name here already. */
export type Occupant = 'free' | 'same' | 'taken';

/** The first candidate that is free or already this run; null when all are taken. Pure. */
export function pickName(candidates: readonly string[], occupant: (name: string) => Occupant): string | null {
  for (const name of candidates) {
    const at = occupant(name);
    if (at !== 'taken') return name;
  }
  return null;
}
