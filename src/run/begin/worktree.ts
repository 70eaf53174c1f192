import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { canonical } from '../../airlock/paths.js';
import type { CommandContext } from '../../context.js';
import { addWorktree } from '../../git/worktree.js';
import { type RunHandle, updateState } from '../../ledger/index.js';
import { writeAtomic } from '../../util/fs.js';
import { renderEndReport } from '../end/report.js';
import type { RunContext } from './context.js';

/**
 * Where a fix run's worktree goes: `runs.worktree_dir` (relative to the repository root), else
 * outside the repository in the user's data folder, one folder per repository (named after it and
 * a hash of its path, so two clones never share).
 */
export function worktreeBase(rc: RunContext, env: CommandContext['env']): string {
  const configured = rc.config.runs.worktree_dir;
  if (configured) return path.resolve(rc.repo.root, configured);
  const data = env.XDG_DATA_HOME || (env.HOME ? path.join(env.HOME, '.local', 'share') : null);
  if (!data) return path.join(rc.ledger.dir, 'worktrees');
  const id = `${path.basename(rc.repo.root)}-${createHash('sha256').update(rc.repo.root).digest('hex').slice(0, 8)}`;
  return path.join(data, 'agentbox', 'worktrees', id);
}

/** A fix run's worktree, by its run name (canonical: the airlock compares real paths). */
export function worktreePath(rc: RunContext, env: CommandContext['env'], name: string): string {
  return canonical(path.join(worktreeBase(rc, env), name));
}

/**
 * Gives a new fix run its worktree on branch `agentbox/<run>`, from `base`. A worktree that cannot
 * be made ends the run CRASHED, with a report saying why, before the error is thrown on.
 */
export async function addRunWorktree(
  rc: RunContext,
  run: RunHandle,
  worktree: string,
  base: string,
): Promise<void> {
  const branch = `agentbox/${run.name}`;
  try {
    fs.mkdirSync(path.dirname(worktree), { recursive: true });
    await addWorktree(rc.repo.root, { path: worktree, branch, base });
  } catch (error) {
    const message = `could not create the worktree: ${(error as Error).message}`;
    await writeAtomic(
      path.join(run.dir, 'report.md'),
      renderEndReport({ meta: run.meta, status: 'CRASHED', detail: `crashed: ${message}`, next: null }),
    );
    await updateState(rc.ledger, run.name, {
      status: 'CRASHED',
      ended_at: new Date().toISOString(),
      failure: { kind: 'crashed', message },
    });
    throw error;
  }
  await updateState(
    rc.ledger,
    run.name,
    { worktree_path: worktree, branch },
    { event: 'worktree', detail: branch },
  );
}
