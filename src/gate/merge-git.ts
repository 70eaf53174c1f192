import path from 'node:path';
import { AgentboxError } from '../errors.js';
import type { GitSettings } from '../git/inert.js';
import { patchPaths } from '../git/patch.js';
import {
  configFilesInTree,
  definedFilters,
  filteredFiles,
  filtersOff,
  personHooks,
} from '../git/person-git.js';
import { EventLog } from '../ledger/events.js';
import type { RunDetails } from '../ledger/index.js';

/*
 * The git that merge runs in the person's own tree — as them, outside any box — runs nothing of
 * theirs on the run's files: the one rule of every merge route (CLI, `--commit`, a group's, the
 * web UI's), since each goes through src/gate/merge.ts.
 * - no hook: a commit hook runs the repository's files (`npm test`, lint-staged, `make lint`, a
 *   script), which the agent may have rewritten. The person is told which of theirs did not run
 *   and the command that runs them, once they have read the change (RUN_HOOKS);
 * - no filter driver: each one the config defines is switched off by name for the check, the
 *   apply and the commit (read again after the apply, for a config file git includes from the
 *   tree). A change to a file the person's attributes already filter is refused: without the
 *   driver git would apply or commit the wrong bytes (an LFS pointer, say);
 * - no config of the agent's: a change to a file in the tree that the person's git config
 *   includes (`include.path = ../tools/git.config`) is refused — it could set `gpg.program` with
 *   `commit.gpgSign`, or a filter, for the commit;
 * - no fsmonitor and no hooks folder for any git agentbox runs (src/git/inert.ts); merge's git
 *   runs no diff, so no diff driver or textconv.
 */

/** Runs the person's commit hooks on the commit merge made, without taking anything else they staged. */
export const RUN_HOOKS = 'git commit --amend --no-edit --only';

export interface MergeGit {
  /** The person's hooks folder, as git finds it (relative to the root when inside it). */
  readonly hooksDir: string;
  /** The commit hooks there that would have run, sorted. */
  readonly hooks: readonly string[];
  /** The filter drivers the person's config defines: each switched off. */
  readonly filters: readonly string[];
  readonly config: GitSettings;
}

/** What the person's git would run in `root`, and the settings that keep it from running. */
export async function mergeGit(root: string): Promise<MergeGit> {
  const [hooks, filters] = await Promise.all([personHooks(root), definedFilters({ cwd: root })]);
  return { hooksDir: hooks.dir, hooks: hooks.hooks, filters, config: filtersOff(filters) };
}

/**
 * Refuses a patch that changes a file the attributes in `root` now give a defined filter, or a
 * file the person's git config includes: each named, logged as `merge_refused` (reason `filter`
 * or `git_config`). Nothing has changed yet.
 */
export async function refuseRunnable(
  root: string,
  run: RunDetails,
  patch: Buffer,
  git: MergeGit,
): Promise<void> {
  const files = patchPaths(patch);
  const [filtered, configs] = await Promise.all([
    filteredFiles(root, files, git.filters),
    configFilesInTree(root),
  ]);
  const config = files.filter((f) => configs.includes(f));
  const file = path.join(run.dir, 'changes.patch');
  const byHand = `apply it yourself (git apply ${file}), then: agentbox merge ${run.meta.run_id} --mark-merged`;
  if (config.length > 0) {
    new EventLog(run.dir).append({ event: 'merge_refused', reason: 'git_config', detail: config.join(', ') });
    throw new AgentboxError(
      'MERGE_REFUSED',
      `refusing to merge ${run.name}: it changes a file your git config includes\n${config.map((f) => `  ${f}  git config (include.path)`).join('\n')}`,
      {
        hint: `nothing was changed. That file can make git run a program at merge's commit (gpg.program, a filter). Read it; if you trust the change, ${byHand}`,
      },
    );
  }
  if (filtered.length === 0) return;
  const detail = filtered.map((f) => `${f.path} (${f.driver})`).join(', ');
  new EventLog(run.dir).append({ event: 'merge_refused', reason: 'filter', detail });
  const width = Math.max(...filtered.map((f) => f.path.length));
  const lines = filtered.map((f) => `  ${f.path.padEnd(width)}  filter ${f.driver}`);
  throw new AgentboxError(
    'MERGE_REFUSED',
    `refusing to merge ${run.name}: your git filter would run on what the run wrote\n${lines.join('\n')}`,
    {
      hint:
        `nothing was changed. agentbox runs no git filter on a run's files: its program runs as you and may load ` +
        `the repository's files. If you trust it with this change, ${byHand}`,
    },
  );
}

/**
 * After the apply: the settings for the commit (the drivers read again), and which of `files` the
 * attributes as merged give a driver that did not run. `log(committed)` writes it as `merge_git`,
 * with what did not run, once the commit is made or not (`committed`: whether there is one).
 */
export async function afterApply(
  root: string,
  run: RunDetails,
  files: readonly string[],
  before: MergeGit,
): Promise<{
  config: GitSettings;
  unfiltered: { path: string; driver: string }[];
  log: (committed: boolean) => void;
}> {
  const filters = [...new Set([...before.filters, ...(await definedFilters({ cwd: root }))])].sort();
  const unfiltered = await filteredFiles(root, files, filters);
  const log = (committed: boolean) =>
    new EventLog(run.dir).append({
      event: 'merge_git',
      committed,
      hooks_not_run: committed ? before.hooks : [],
      hooks_dir: before.hooksDir,
      filters_off: filters,
      unfiltered,
      ...(committed && before.hooks.length > 0 ? { run_hooks: RUN_HOOKS } : {}),
    });
  return { config: filtersOff(filters), unfiltered, log };
}
