import fs from 'node:fs';
import path from 'node:path';
import { loadPersonConfig } from '../config/load.js';
import type { CommandContext } from '../context.js';
import { type CiPlan, checkPlatform, planCi, sourceRecordedIn } from '../engines/files.js';
import { defaultSourceOrStop } from '../engines/resolve.js';
import { checkSource, PATH_NOTE, sourcePath } from '../engines/source.js';
import { AgentboxError } from '../errors.js';
import { findRepo, type Repo } from '../git/repo.js';
import type { SettingsScope } from '../settings/file.js';
import { planSetup } from '../setup/plan.js';
import { entryLine, type TrustStatus, trustStatus } from '../trust/index.js';
import { refuseWriteOut } from '../util/fs.js';
import { styler } from '../util/style.js';
import { FileTransaction } from '../util/transaction.js';
import { VERSION } from '../version.js';

export interface InitOptions {
  readonly local?: boolean;
  /** Also write a CI pipeline that runs agentbox: github or gitlab (see src/engines/files.ts). */
  readonly ci?: string;
  /** With --ci: replace a pipeline file that differs from the one agentbox writes. */
  readonly force?: boolean;
  /** With --ci: where runners install agentbox from (an npm spec, a tarball or git URL, an absolute path). */
  readonly agentboxFrom?: string;
}

/**
 * Sets up agentbox in a repository. Idempotent: a second run finds nothing to do and writes
 * nothing. All-or-nothing: every check runs before the first write, and a write that fails
 * rolls back the ones before it.
 */
export async function init(ctx: CommandContext, options: InitOptions = {}): Promise<number> {
  if (options.force && !options.ci)
    throw new AgentboxError('USAGE', '--force goes with --ci: it replaces a pipeline file', {
      hint: 'agentbox init --ci github --force; init alone never needs it (it writes only what is missing)',
    });
  if (options.agentboxFrom !== undefined && !options.ci)
    throw new AgentboxError(
      'USAGE',
      '--agentbox-from goes with --ci: it says where CI runners install agentbox from',
      {
        hint: `agentbox init --ci github --agentbox-from ${JSON.stringify(options.agentboxFrom)}`,
      },
    );
  const repo = await findRepo(ctx.cwd, ctx.env);
  const scope: SettingsScope = options.local ? 'local' : 'shared';
  const setup = await planSetup(repo, scope);
  // The person's own file is read to tell what of the repository's awaits trust (a value looser than
  // theirs): a broken one is said now, before anything is written, not after.
  loadPersonConfig(ctx.env);
  const ci = options.ci ? await ciPlan(ctx, repo, options.ci, options) : null;
  const plan = { ...setup, steps: [...setup.steps, ...(ci?.steps ?? [])] };
  const s = styler(ctx.io);
  // Said each time, also when nothing changed: a cloned repository's file may name a source of its own.
  const installFrom = ci
    ? `CI runners install agentbox from ${ci.source} (--agentbox-from changes it).\n${ci.path ? `Note: ${PATH_NOTE}.\n` : ''}`
    : '';
  const notes = installFrom + (ci?.notes ?? []).map((n) => `Next: ${n}\n`).join('');

  if (plan.steps.length === 0) {
    ctx.io.out(`agentbox is already set up in ${repo.root} — nothing changed.\n${notes}`);
    ctx.io.out(awaitingTrust(trustStatus(repo.root, ctx.env)));
    return 0;
  }
  // Checked for all before any is written: a cloned repository's links must not lead init out of it.
  for (const step of plan.steps) refuseWriteOut(step.path, repo.root);
  FileTransaction.run((tx) => {
    for (const step of plan.steps) {
      if (step.kind === 'mkdir') tx.mkdir(step.path);
      else tx.write(step.path, step.content ?? '');
    }
  });
  ctx.io.out(`${s.ok('✓')} agentbox is set up in ${repo.root}\n`);
  const settingsRel = path.relative(repo.root, plan.settingsFile);
  const trust = trustStatus(repo.root, ctx.env);
  const beside = trust.trusted ? 0 : trust.entries.filter((e) => e.file === settingsRel).length;
  for (const step of plan.steps) {
    const note =
      step.path === plan.settingsFile && beside > 0
        ? ` (beside ${beside} entries of that file that await your trust, listed below)`
        : '';
    ctx.io.out(`  ${step.summary}${note}\n`);
  }
  ctx.io.out(
    `\n${scope === 'shared' ? `Commit ${settingsRel}, .gitignore and agentbox.yaml so teammates get the same guard rails.\n` : ''}` +
      `Next: ${s.bold('agentbox doctor')} to check everything, then ${s.bold('agentbox scout "<question>"')}.\n` +
      (ci ? `CI: commit the pipeline file and create the secrets it names (docs/ci.md).\n${notes}` : ''),
  );
  ctx.io.out(awaitingTrust(trust));
  return 0;
}

/**
 * The pipeline files, installing agentbox from: --agentbox-from, else what the file an earlier
 * init wrote records, else `agentbox@<version>` once the registry has it.
 */
async function ciPlan(
  ctx: CommandContext,
  repo: Repo,
  ci: string,
  options: InitOptions,
): Promise<CiPlan & { readonly source: string; readonly path: string | undefined }> {
  const platform = checkPlatform(ci);
  if (options.agentboxFrom !== undefined) checkSource(options.agentboxFrom, ctx.cwd);
  const source =
    options.agentboxFrom ??
    sourceRecordedIn(repo.root, platform) ??
    (await defaultSourceOrStop(VERSION, `agentbox init --ci ${platform}`, repo.root, ctx.env));
  // Not refused: a runner may have what this machine does not (a self-hosted runner's own disk).
  const local = sourcePath(source);
  if (local !== undefined && !fs.existsSync(local))
    ctx.io.err(
      `agentbox: warning: ${local} does not exist on this machine: runners must have it at that path\n`,
    );
  const plan = planCi(repo.root, platform, { version: VERSION, source }, options.force === true);
  return { ...plan, source, path: local };
}

/** What the repository carries that agentbox will not use until the person trusts it; '' when nothing. */
function awaitingTrust(trust: TrustStatus): string {
  if (trust.trusted) return '';
  return [
    '',
    `This repository carries ${trust.entries.length} entries that run commands or weaken the box; agentbox does not use them until you trust them:`,
    ...trust.entries.map((e) => entryLine(e)),
    'Review them, then run "agentbox trust".',
    '',
  ].join('\n');
}
