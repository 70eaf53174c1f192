import path from 'node:path';
import { ignoredFolders, type NestedGit, nestedGitIn, setAsideNestedGit } from '../../git/nested.js';
import { EventLog } from '../../ledger/events.js';

/** A `.git` the agent left below its worktree's root, as events.jsonl records it (`nested_git`). */
export interface NestedRecord {
  readonly path: string;
  readonly kind: NestedGit['kind'];
  /** Where the `.git` went, relative to the run folder; null: it could not be moved (see `error`). */
  readonly moved_to: string | null;
  readonly error?: string;
}

/**
 * Finds every `.git` below the worktree's root, moves each into the run folder (raw/nested-git/),
 * and logs one `nested_git` event per path. Never throws: a `.git` that cannot be moved is logged
 * with why, and its folder still stays out of the patch (the caller excludes every path returned).
 */
export async function setAsideNested(runDir: string, worktree: string): Promise<NestedRecord[]> {
  const log = new EventLog(runDir);
  const records: NestedRecord[] = [];
  for (const nested of await nestedGitIn(worktree, () => ignoredFolders({ cwd: worktree }))) {
    let record: NestedRecord;
    try {
      const [movedTo] = setAsideNestedGit(worktree, [nested], path.join(runDir, 'raw', 'nested-git'));
      record = { ...nested, moved_to: movedTo ?? null };
    } catch (error) {
      record = { ...nested, moved_to: null, error: (error as Error).message };
    }
    log.append({ event: 'nested_git', ...record });
    records.push(record);
  }
  return records;
}

/** Every nested `.git` the run's ends have set aside (over all its resumes), each path once. */
export function nestedOfRun(runDir: string): NestedRecord[] {
  return nestedOfEvents(new EventLog(runDir).read());
}

/** The `nested_git` events of events.jsonl, each path once (the last word on it). Pure. */
export function nestedOfEvents(events: readonly Record<string, unknown>[]): NestedRecord[] {
  const byPath = new Map<string, NestedRecord>();
  for (const e of events) {
    if (e.event !== 'nested_git' || typeof e.path !== 'string') continue;
    byPath.set(e.path, {
      path: e.path,
      kind: e.kind === 'file' || e.kind === 'link' ? e.kind : 'folder',
      moved_to: typeof e.moved_to === 'string' ? e.moved_to : null,
      ...(typeof e.error === 'string' ? { error: e.error } : {}),
    });
  }
  return [...byPath.values()];
}
