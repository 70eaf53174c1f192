import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { GitError, runGit } from '../git/exec.js';
import { hasCommit, resultTree } from '../git/result-commit.js';
import type { RunDetails } from '../ledger/index.js';

export interface DiffOptions {
  /** `git diff --stat`. */
  readonly stat?: boolean;
  /** `git diff --name-only`. */
  readonly nameOnly?: boolean;
  /** `--color=<when>`: auto (a terminal), always, never. */
  readonly color?: string;
  /** false: `--no-pager`. */
  readonly pager?: boolean;
}

const COLOR_WHEN = ['auto', 'always', 'never'] as const;

/**
 * The `git diff` arguments that show a run's change: from its start commit to its result. Pure.
 * The pins keep what a user's config could change about *what* is shown (prefixes, rename
 * detection) as merge sees it; colours, the pager and diff drivers stay the person's own.
 */
export function diffArgs(from: string, to: string, options: DiffOptions, paged: boolean): string[] {
  const when = options.color ?? 'auto';
  if (!(COLOR_WHEN as readonly string[]).includes(when)) {
    throw new AgentboxError('USAGE', `--color takes auto, always or never, not "${when}"`, {
      hint: 'e.g. agentbox diff <run> --color=always | less -R',
    });
  }
  if (options.stat && options.nameOnly) {
    throw new AgentboxError('USAGE', '--stat and --name-only do not go together', {
      hint: 'pass one of them, or neither for the whole diff',
    });
  }
  return [
    ...(paged ? ['--paginate'] : ['--no-pager']),
    '-c',
    'core.quotePath=false',
    'diff',
    `--color=${when}`,
    '--src-prefix=a/',
    '--dst-prefix=b/',
    '--find-renames',
    ...(options.stat ? ['--stat'] : options.nameOnly ? ['--name-only'] : []),
    from,
    to,
    '--',
  ];
}

/** What the run's change is in git: its result commit, or a tree built from changes.patch. */
async function resultOf(root: string, run: RunDetails): Promise<{ from: string; to: string }> {
  const base = run.meta.repo_sha_start;
  const patch = path.join(run.dir, 'changes.patch');
  if (run.meta.type !== 'fix') {
    throw new AgentboxError('USAGE', `run ${run.name} is a ${run.meta.type} run: it changes no files`, {
      hint: `read its answer: agentbox show ${run.meta.run_id}`,
    });
  }
  if (!base || !fs.existsSync(patch) || fs.statSync(patch).size === 0) {
    throw new AgentboxError('USAGE', `run ${run.name} has no changes (no changes.patch)`, {
      hint: `see what it did: agentbox show ${run.meta.run_id}`,
    });
  }
  const commit = run.state?.result_commit;
  if (commit && (await hasCommit(root, commit))) return { from: base, to: commit };
  return { from: base, to: await resultTree(root, base, patch) };
}

/**
 * Shows a run's change with git: through the person's pager and colours when the output is a
 * terminal (git's own rules: core.pager, GIT_PAGER, PAGER, color.diff), plain when piped.
 */
export async function showDiff(
  ctx: CommandContext,
  root: string,
  run: RunDetails,
  options: DiffOptions,
): Promise<void> {
  const { from, to } = await resultOf(root, run);
  const paged = ctx.io.isTTY && options.pager !== false;
  const args = diffArgs(from, to, options, paged);
  const call = { cwd: root, env: ctx.env, hint: 'the change is also in the run folder as changes.patch' };
  if (paged) {
    // The terminal goes to git and its pager as it is; nothing of ours sits in between (so no
    // execa runner here: it would capture the output).
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn('git', args, { cwd: root, stdio: 'inherit', env: ctx.env as NodeJS.ProcessEnv });
      child.once('error', reject);
      child.once('close', resolve);
    });
    if (code !== 0) throw new GitError(args, call, { exitCode: code ?? -1, stderr: '' });
    return;
  }
  const result = await runGit(args, { ...call, keepLocale: true, stripFinalNewline: false });
  if (result.exitCode !== 0) throw new GitError(args, call, result);
  ctx.io.out(result.stdout);
}
