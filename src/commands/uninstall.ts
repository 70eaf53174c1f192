import fs from 'node:fs';
import path from 'node:path';
import type { CommandContext } from '../cli/context.js';
import { styler } from '../cli/style.js';
import { projectConfigPath } from '../config/load.js';
import { PROJECT_CONFIG_TEMPLATE } from '../config/template.js';
import { fsError } from '../errors.js';
import { ignoreFilePath, LEDGER_IGNORES, removeIgnoreBlock } from '../git/ignore.js';
import { findRepo } from '../git/repo.js';
import { ledgerPaths } from '../ledger/index.js';
import { assertHuman } from '../run/gate.js';
import { readSettings, settingsPath } from '../settings/file.js';
import { planUninstall } from '../settings/managed.js';
import { readTextIfExists } from '../util/fs.js';
import { FileTransaction } from '../util/transaction.js';

export interface UninstallOptions {
  readonly purge?: boolean;
}

interface Step {
  readonly summary: string;
  readonly apply: (tx: FileTransaction) => void;
}

/**
 * Takes out exactly what init added: agentbox's entries in the Claude settings files (the
 * user's own hooks, rules and keys stay), its block in the ignore files, and agentbox.yaml if it
 * was never edited. The ledger stays unless --purge.
 */
export async function uninstall(ctx: CommandContext, options: UninstallOptions = {}): Promise<number> {
  assertHuman(ctx.env, 'uninstall', ctx.cwd);
  const repo = await findRepo(ctx.cwd);
  const root = repo.root;
  const rel = (p: string) => path.relative(root, p);
  const steps: Step[] = [];
  const notes: string[] = [];
  let removedCreatedSettings = false;

  // Plan everything first: a settings file that cannot be parsed stops us before any change.
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

  const known = [...LEDGER_IGNORES.map((r) => r.pattern), 'agentbox.yaml'];
  for (const scope of ['shared', 'local'] as const) {
    const file = ignoreFilePath(repo, scope);
    const text = readTextIfExists(file);
    if (text === undefined) continue;
    const { text: next, removed } = removeIgnoreBlock(text, known);
    if (removed.length === 0 && next === text) continue;
    const remove = next.trim() === '' && scope === 'shared';
    steps.push({
      summary: `removed ${removed.join(', ') || 'the agentbox mark'} from ${rel(file)}${remove ? ' (now empty: deleted)' : ''}`,
      apply: (tx) => (remove ? tx.remove(file) : tx.write(file, next)),
    });
  }

  const config = projectConfigPath(root);
  const configText = readTextIfExists(config);
  if (configText !== undefined) {
    if (configText === PROJECT_CONFIG_TEMPLATE) {
      steps.push({
        summary: `removed ${rel(config)} (unchanged since init)`,
        apply: (tx) => tx.remove(config),
      });
    } else {
      notes.push(`kept ${rel(config)}: it has your changes — delete it by hand if you no longer need it`);
    }
  }

  const ledger = ledgerPaths(root);
  const hasLedger = fs.existsSync(ledger.dir);
  if (hasLedger && !options.purge)
    notes.push(`kept ${rel(ledger.dir)}/ with your runs — "agentbox uninstall --purge" deletes it`);

  const s = styler(ctx.io);
  if (steps.length === 0 && !(options.purge && hasLedger)) {
    ctx.io.out(`agentbox is not installed in ${root} — nothing to uninstall.\n`);
    for (const note of notes) ctx.io.out(`  ${note}\n`);
    return 0;
  }
  FileTransaction.run((tx) => {
    for (const step of steps) step.apply(tx);
    // init made .claude/ only when it made the settings file in it.
    if (removedCreatedSettings) tx.removeEmptyDir(path.join(root, '.claude'));
  });
  // Deleting the ledger cannot be undone, so it comes last, after everything else succeeded.
  if (options.purge && hasLedger) {
    try {
      fs.rmSync(ledger.dir, { recursive: true });
    } catch (error) {
      throw fsError(error, 'delete', ledger.dir);
    }
    steps.push({ summary: `deleted ${rel(ledger.dir)}/ and every run in it`, apply: () => {} });
  }
  ctx.io.out(`${s.ok('✓')} agentbox uninstalled from ${root}\n`);
  for (const step of steps) ctx.io.out(`  ${step.summary}\n`);
  for (const note of notes) ctx.io.out(`  ${note}\n`);
  return 0;
}
