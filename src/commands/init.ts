import path from 'node:path';
import type { CommandContext } from '../context.js';
import { planCi } from '../engines/files.js';
import { findRepo } from '../git/repo.js';
import type { SettingsScope } from '../settings/file.js';
import { planSetup } from '../setup/plan.js';
import { styler } from '../util/style.js';
import { FileTransaction } from '../util/transaction.js';
import { VERSION } from '../version.js';

export interface InitOptions {
  readonly local?: boolean;
  /** Also write a CI pipeline that runs agentbox: github or gitlab (see src/engines/files.ts). */
  readonly ci?: string;
  /** With --ci: replace a pipeline file that differs from the one agentbox writes. */
  readonly force?: boolean;
}

/**
 * Sets up agentbox in a repository. Idempotent: a second run finds nothing to do and writes
 * nothing. All-or-nothing: every check runs before the first write, and a write that fails
 * rolls back the ones before it.
 */
export async function init(ctx: CommandContext, options: InitOptions = {}): Promise<number> {
  const repo = await findRepo(ctx.cwd, ctx.env);
  const scope: SettingsScope = options.local ? 'local' : 'shared';
  const setup = await planSetup(repo, scope);
  const ci = options.ci ? planCi(repo.root, options.ci, VERSION, options.force === true) : null;
  const plan = { ...setup, steps: [...setup.steps, ...(ci?.steps ?? [])] };
  const s = styler(ctx.io);
  const notes = (ci?.notes ?? []).map((n) => `Next: ${n}\n`).join('');

  if (plan.steps.length === 0) {
    ctx.io.out(`agentbox is already set up in ${repo.root} — nothing changed.\n${notes}`);
    return 0;
  }
  FileTransaction.run((tx) => {
    for (const step of plan.steps) {
      if (step.kind === 'mkdir') tx.mkdir(step.path);
      else tx.write(step.path, step.content ?? '');
    }
  });
  ctx.io.out(`${s.ok('✓')} agentbox is set up in ${repo.root}\n`);
  for (const step of plan.steps) ctx.io.out(`  ${step.summary}\n`);
  const settingsRel = path.relative(repo.root, plan.settingsFile);
  ctx.io.out(
    `\n${scope === 'shared' ? `Commit ${settingsRel}, .gitignore and agentbox.yaml so teammates get the same guard rails.\n` : ''}` +
      `Next: ${s.bold('agentbox doctor')} to check everything, then ${s.bold('agentbox scout "<question>"')}.\n` +
      (ci ? `CI: commit the pipeline file and create the secrets it names (docs/ci.md).\n${notes}` : ''),
  );
  return 0;
}
