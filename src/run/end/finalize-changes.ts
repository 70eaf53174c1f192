import fs from 'node:fs';
import path from 'node:path';
import { inspectPatchFile } from '../../git/apply.js';
import { type ExportedPatch, exportPatch } from '../../git/patch.js';
import { recordResultCommit } from '../../git/result-commit.js';
import type { Inspection } from '../../git/sensitive.js';
import { EventLog } from '../../ledger/events.js';
import { type Ledger, type RunMeta, type RunStatus, readState } from '../../ledger/index.js';
import { resultMessage } from '../../present/result-message.js';
import { commandDirName } from '../../slash/index.js';
import { writeAtomic } from '../../util/fs.js';
import { AGENT_RUN_DIR } from './artifacts.js';
import { nestedOfRun, setAsideNested } from './finalize-nested.js';
import { logLeftOut } from './left-out.js';

/** What a fix run changed, as finalisation keeps it: changes.patch and a commit on the run's branch. */
export interface RunPlace {
  readonly ledger: Ledger;
  readonly meta: RunMeta;
  readonly runDir: string;
  readonly worktree: string | null;
}

/**
 * What a fix run's patch leaves out, relative to its worktree: the run's own slash commands and
 * artifacts folder, and each nested repository's folder. The live diff (src/review/live.ts) uses it
 * too, so what it shows is what changes.patch will hold. Pure.
 */
export function changesExcludes(runId: string, nested: readonly string[]): string[] {
  return [path.join('.claude', 'commands', commandDirName(runId)), AGENT_RUN_DIR, ...nested];
}

/**
 * A fix run's changes as changes.patch, inspected for what is sensitive; an error is kept, not
 * thrown. The inspection goes on while the caller makes the result commit (both only read the patch).
 */
export async function exportChanges(input: RunPlace): Promise<{
  changes: ExportedPatch | null;
  files: string[];
  inspection?: Promise<Inspection | undefined>;
  error?: string;
  /** A revision undid the whole change: the run folder's patch (the revision before's) was removed. */
  emptied?: boolean;
}> {
  const { meta, runDir } = input;
  if (meta.type !== 'fix' || !input.worktree || !meta.repo_sha_start) return { changes: null, files: [] };
  // Before any git runs in the worktree: a nested `.git` is never followed (src/git/nested.ts), and
  // its folder stays out of the patch also after its `.git` was set aside at an earlier end.
  await setAsideNested(runDir, input.worktree);
  const nested = nestedOfRun(runDir).map((n) => n.path);
  try {
    const changes = await exportPatch(input.worktree, {
      base: meta.repo_sha_start,
      exclude: changesExcludes(meta.run_id, nested),
    });
    logLeftOut(new EventLog(runDir), changes.leftOut ?? []);
    const file = path.join(runDir, 'changes.patch');
    if (changes.patch.length === 0) {
      // NOTE: in a revision (agentbox revise) the patch of the revision before is stale now: left, it
      // would be merged as the run's change although the worktree no longer holds any. Only then:
      // after a crash a replay may start from an empty worktree, and the earlier patch is what is kept.
      const emptied = Boolean(readState(runDir)?.revision) && fs.existsSync(file);
      if (emptied) fs.rmSync(file, { force: true });
      return { changes, files: [], emptied };
    }
    await writeAtomic(file, changes.patch);
    // Against the main tree (its hooksPath and symlinks), where merge will apply it. Not
    // knowing leaves the report silent; merge inspects again and is what refuses.
    const inspection = inspectPatchFile(input.ledger.root, file).catch(() => undefined);
    return { changes, files: ['changes.patch'], inspection };
  } catch (error) {
    return { changes: null, files: [], error: (error as Error).message };
  }
}

/**
 * The result as a commit on the run's branch (src/git/result-commit.ts), so `git log/diff/push`
 * and a pull request work. The patch stays the artifact: a commit that cannot be made is logged
 * and the run goes on without one.
 */
export async function commitResult(
  input: RunPlace,
  status: RunStatus,
  answer: string | null,
): Promise<string | null> {
  const { meta, runDir } = input;
  const state = readState(runDir);
  const branch = state?.branch ?? `agentbox/${meta.run_name}`;
  if (!meta.repo_sha_start) return null;
  const log = new EventLog(runDir);
  try {
    const done = await recordResultCommit({
      repoRoot: input.ledger.root,
      branch,
      base: meta.repo_sha_start,
      previous: state?.result_commit ?? null,
      patchFile: path.join(runDir, 'changes.patch'),
      message: resultMessage({ name: meta.run_name, task: meta.task, status, answer }),
    });
    if (done.created)
      log.append({
        event: 'result_committed',
        commit: done.commit,
        branch,
        parent: done.parent,
        ...(done.replaced ? { replaced: done.replaced } : {}),
      });
    return done.commit;
  } catch (error) {
    log.append({ event: 'result_commit_failed', branch, message: (error as Error).message });
    // NOTE: not the last result commit: changes.patch is newer than it, and `diff` shows the
    // commit while merge applies (and the gate hashes) the patch. With none, both are the patch.
    return null;
  }
}
