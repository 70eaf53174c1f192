import fs from 'node:fs';
import path from 'node:path';
import { projectConfigPath } from '../config/load.js';
import { PROJECT_CONFIG_TEMPLATE } from '../config/template.js';
import type { CommandContext } from '../context.js';
import { AgentboxError, fsError } from '../errors.js';
import { assertHuman } from '../gate/gate.js';
import {
  findTraces,
  type PurgeItem,
  removePurgeItems,
  type Traces,
  type Unsettled,
  unsettledChanges,
} from '../gate/purge.js';
import { ignoreFilePath, LEDGER_IGNORES, planIgnoreRemoval, unignored } from '../git/ignore.js';
import { findRepo, type Repo } from '../git/repo.js';
import { ledgerPaths } from '../ledger/index.js';
import { runIdOf } from '../ledger/names.js';
import { readSettings, settingsPath } from '../settings/file.js';
import { planUninstall } from '../settings/managed.js';
import { readRepoText, readTextIfExists } from '../util/fs.js';
import { styler } from '../util/style.js';
import { FileTransaction } from '../util/transaction.js';
import { countItems, describe, progressLabel, seconds } from './uninstall-lines.js';

export interface UninstallOptions {
  readonly purge?: boolean;
  /** With --purge: also delete runs whose changes were never merged or discarded. */
  readonly force?: boolean;
}

interface Step {
  readonly summary: string;
  readonly apply: (tx: FileTransaction) => void;
}

const [LEDGER_RULE, COMMANDS_RULE] = LEDGER_IGNORES as [
  (typeof LEDGER_IGNORES)[0],
  (typeof LEDGER_IGNORES)[1],
];

/**
 * Takes out exactly what init added: agentbox's entries in the Claude settings files (the
 * user's own hooks, rules and keys stay), its block in the ignore files, and agentbox.yaml if it
 * was never edited. The ledger stays, still ignored, unless --purge, which also removes every
 * worktree, branch and ref agentbox made — and refuses, changing nothing, while that would lose
 * changes that exist nowhere else (unless --force) or while a run is still running.
 */
export async function uninstall(ctx: CommandContext, options: UninstallOptions = {}): Promise<number> {
  assertHuman(ctx.env, 'uninstall', ctx.cwd);
  const purge = options.purge === true;
  if (options.force && !purge) {
    throw new AgentboxError('USAGE', '--force only goes with --purge', {
      hint: 'agentbox uninstall --purge --force deletes the runs and their unmerged changes',
    });
  }
  const repo = await findRepo(ctx.cwd, ctx.env);
  const root = repo.root;
  const rel = (p: string) => (p.startsWith(`${root}/`) ? path.relative(root, p) : p);
  const ledger = ledgerPaths(root);
  const hasLedger = fs.existsSync(ledger.dir);
  // Plan everything first: a settings file that cannot be parsed, a running run or changes that
  // would be lost stop us before any change.
  const traces = await findTraces(root, ledger);
  const lost = purge ? await assertPurgeable(root, traces, options.force === true) : [];
  const notes: string[] = [];
  const { steps, removedCreatedSettings } = settingsSteps(root, rel);
  const keep = purge
    ? []
    : [
        ...(hasLedger ? [LEDGER_RULE.pattern] : []),
        ...(traces.items.some((i) => i.what === 'commands' && i.path.startsWith(`${root}/`))
          ? [COMMANDS_RULE.pattern]
          : []),
      ];
  steps.push(...ignoreSteps(repo, keep, rel));

  const config = configStep(root, rel);
  if (typeof config === 'string') notes.push(config);
  else if (config) steps.push(config);
  const s = styler(ctx.io);
  if (steps.length === 0 && !(purge && (hasLedger || traces.items.length > 0))) {
    ctx.io.out(`agentbox is not installed in ${root} — nothing to uninstall.\n`);
    for (const note of [...notes, ...(await leftovers(root, hasLedger, traces))]) ctx.io.out(`  ${note}\n`);
    return 0;
  }
  const done: string[] = [];
  if (purge && traces.items.length > 0) done.push(await removeTraces(ctx, traces.items, root, rel));
  FileTransaction.run((tx) => {
    for (const step of steps) step.apply(tx);
    // init made .claude/ only when it made the settings file in it.
    if (removedCreatedSettings) tx.removeEmptyDir(path.join(root, '.claude'));
  });
  done.push(...steps.map((step) => step.summary));
  // Deleting the ledger cannot be undone, so it comes last, after everything else succeeded.
  if (purge && hasLedger) done.push(...deleteLedger(ledger.dir, traces, lost, rel));
  if (!purge) notes.push(...(await leftovers(root, hasLedger, traces)));
  const ccWrites = claudeIgnoreNote(ctx.env);
  if (ccWrites) notes.push(ccWrites);
  ctx.io.out(`${s.ok('✓')} agentbox uninstalled from ${root}\n`);
  for (const line of [...done, ...notes]) ctx.io.out(`  ${line}\n`);
  return 0;
}

/** The line Claude Code's sandbox adds to the person's global git ignore file (measured, 2.1.330). */
export const CC_WRITES_IGNORE = '**/.claude/.cc-writes/';

/**
 * A note when the person's global git ignore file holds Claude Code's line. It stays: Claude Code
 * wrote it, for every repository it sandboxes a session in (agentbox or not), and writes it again
 * at its next sandboxed session; without it, its bookkeeping folders show up in `git status`.
 */
function claudeIgnoreNote(env: CommandContext['env']): string | null {
  const config = env.XDG_CONFIG_HOME || (env.HOME ? path.join(env.HOME, '.config') : null);
  if (!config) return null;
  const file = path.join(config, 'git', 'ignore');
  const lines = readTextIfExists(file)?.split('\n') ?? [];
  if (!lines.includes(CC_WRITES_IGNORE)) return null;
  return `kept "${CC_WRITES_IGNORE}" in ${file}: Claude Code's sandbox added it, not agentbox (it keeps Claude Code's own folders out of git in every repository) — delete that line by hand if you no longer use Claude Code's sandbox`;
}

/** `--purge`'s removals in git, listed first, then a line as each goes; the summary line. */
async function removeTraces(
  ctx: CommandContext,
  items: readonly PurgeItem[],
  root: string,
  rel: (p: string) => string,
): Promise<string> {
  // Listed before anything goes, so a removal that fails half way leaves a record of the rest.
  ctx.io.out(`removing what agentbox made in git:\n`);
  for (const item of items) ctx.io.out(`  ${describe(item, rel)}\n`);
  // Plain lines as each goes, on a terminal and in a pipe alike: a worktree holding node_modules
  // takes seconds, and a silent minute reads as a hang.
  let removed = 0;
  await removePurgeItems(root, items, (item, ms) => {
    removed++;
    ctx.io.out(`  removed ${progressLabel(item)} (${removed}/${items.length}, ${seconds(ms)})\n`);
  });
  return `removed ${countItems(items)} agentbox made`;
}

/** agentbox.yaml goes when it is still init's template; a note says why when it stays. */
function configStep(root: string, rel: (p: string) => string): Step | string | null {
  const config = projectConfigPath(root);
  const configText = readTextIfExists(config);
  if (configText === undefined) return null;
  if (configText !== PROJECT_CONFIG_TEMPLATE)
    return `kept ${rel(config)}: it has your changes — delete it by hand if you no longer need it`;
  return { summary: `removed ${rel(config)} (unchanged since init)`, apply: (tx) => tx.remove(config) };
}

/** `--purge`'s last step: the ledger, every run in it; what it deleted, for the summary. */
function deleteLedger(
  dir: string,
  traces: Traces,
  lost: readonly Unsettled[],
  rel: (p: string) => string,
): string[] {
  try {
    fs.rmSync(dir, { recursive: true });
  } catch (error) {
    throw fsError(error, 'delete', dir);
  }
  return [
    `deleted ${rel(dir)}/ and every run in it (${traces.states.size} run(s))`,
    ...lost.map(
      (u) => `deleted the unmerged changes of ${runIdOf(u.run)} (--force): ${u.reasons.join('; ')}`,
    ),
  ];
}

function settingsSteps(
  root: string,
  rel: (p: string) => string,
): { steps: Step[]; removedCreatedSettings: boolean } {
  const steps: Step[] = [];
  let removedCreatedSettings = false;
  for (const scope of ['shared', 'local'] as const) {
    const file = settingsPath(root, scope);
    const settings = readSettings(file);
    if (settings.text === undefined) continue;
    const plan = planUninstall(settings.text, settings.value);
    if (!plan.changed) continue;
    const what = `${plan.removedHooks} hook entr${plan.removedHooks === 1 ? 'y' : 'ies'}, ${plan.removedDeny.length} deny rule(s)`;
    if (plan.text === null) {
      removedCreatedSettings = true;
      steps.push({
        summary: `removed ${rel(file)} (init created it; ${what})`,
        apply: (tx) => tx.remove(file),
      });
    } else {
      const text = plan.text;
      steps.push({ summary: `removed ${what} from ${rel(file)}`, apply: (tx) => tx.write(file, text) });
    }
  }
  return { steps, removedCreatedSettings };
}

/** agentbox's ignore lines out; those in `keep` stay ignored, in the local exclude file. */
function ignoreSteps(repo: Repo, keep: readonly string[], rel: (p: string) => string): Step[] {
  const known = [...LEDGER_IGNORES.map((r) => r.pattern), 'agentbox.yaml'];
  const sharedFile = ignoreFilePath(repo, 'shared');
  const localFile = ignoreFilePath(repo, 'local');
  const edits = planIgnoreRemoval(
    // The committed file, read only from inside the repository (a link out is refused, as init does).
    { shared: readRepoText(sharedFile, repo.root), local: readTextIfExists(localFile) },
    known,
    keep,
  );
  const steps: Step[] = [];
  if (edits.shared) {
    const { text, removed } = edits.shared;
    const remove = text.trim() === '';
    steps.push({
      summary: `removed ${removed.join(', ') || 'the agentbox mark'} from ${rel(sharedFile)}${remove ? ' (now empty: deleted)' : ''}`,
      apply: (tx) => (remove ? tx.remove(sharedFile) : tx.write(sharedFile, text)),
    });
  }
  if (edits.local) {
    const { text, removed, added } = edits.local;
    const parts = [
      ...(removed.length > 0 ? [`removed ${removed.join(', ')} from ${rel(localFile)}`] : []),
      ...(added.length > 0
        ? [`moved ${added.join(', ')} to ${rel(localFile)}: what stays is still ignored, in this clone only`]
        : []),
    ];
    steps.push({
      summary: parts.join('; ') || `updated ${rel(localFile)}`,
      apply: (tx) => tx.write(localFile, text),
    });
  }
  return steps;
}

/** Throws when purging would remove something under a running run, or lose changes without --force. */
async function assertPurgeable(root: string, traces: Traces, force: boolean): Promise<Unsettled[]> {
  if (traces.running.length > 0) {
    const ids = traces.running.map(runIdOf).join(', ');
    throw new AgentboxError(
      'RUN_ACTIVE',
      `cannot purge: ${traces.running.length} run(s) still running (${ids})`,
      {
        hint: `let them finish, or stop them (Ctrl-C where they run; agentbox stop ${runIdOf(traces.running[0]!)} for a session), then run agentbox uninstall --purge again`,
      },
    );
  }
  const unsettled = await unsettledChanges(root, ledgerPaths(root), traces);
  if (unsettled.length === 0 || force) return unsettled;
  const lines = unsettled.map((u) => `    ${runIdOf(u.run)}  ${u.run}: ${u.reasons.join('; ')}`).join('\n');
  const first = runIdOf(unsettled[0]!.run);
  throw new AgentboxError(
    'UNSAVED_CHANGES',
    `--purge would lose changes that exist nowhere else (nothing was removed):\n${lines}`,
    {
      hint: `merge or discard each first (agentbox merge ${first} / agentbox discard ${first}), or delete them too: agentbox uninstall --purge --force`,
    },
  );
}

/** What a plain uninstall leaves behind on purpose, and how to remove it. */
async function leftovers(root: string, hasLedger: boolean, traces: Traces): Promise<string[]> {
  const notes: string[] = [];
  if (hasLedger) {
    const ignored = (await unignored(root, [LEDGER_RULE])).length === 0;
    notes.push(
      `kept .agents/ with your runs${ignored ? ' (still ignored by git)' : ''} — "agentbox uninstall --purge" deletes it`,
    );
    if (!ignored)
      notes.push('git does not ignore .agents/ now: add ".agents/" to .git/info/exclude, or purge it');
  }
  const inGit = traces.items.filter((i) => i.what !== 'commands');
  if (inGit.length > 0) {
    notes.push(
      `kept ${countItems(inGit)} of runs — "agentbox uninstall --purge" removes them (listed first), "agentbox gc" those of settled runs (merged, discarded, a fix with no change)`,
    );
  }
  return notes;
}
