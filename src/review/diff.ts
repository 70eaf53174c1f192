import fs from 'node:fs';
import path from 'node:path';
import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { GitError, gitOnTerminal, runGit } from '../git/exec.js';
import { hasCommit, resultTree } from '../git/result-commit.js';
import type { RunDetails } from '../ledger/index.js';
import { patchSha256, recordShown, type ShownBy } from '../ledger/reviewed.js';
import { type LiveChanges, liveChanges } from './live.js';

export interface DiffOptions {
  /** `git diff --stat`. */
  readonly stat?: boolean;
  /** `git diff --name-only`. */
  readonly nameOnly?: boolean;
  /** `--color=<when>`: auto (a terminal), always, never. */
  readonly color?: string;
  /** false: `--no-pager`. */
  readonly pager?: boolean;
  /** The change as data: `{ run, in_progress, base, files, stat, patch }`. */
  readonly json?: boolean;
  /** What is showing it, recorded with the patch's hash (src/ledger/reviewed.ts): `diff` unless said. */
  readonly shownBy?: ShownBy;
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
export async function resultOf(root: string, run: RunDetails): Promise<{ from: string; to: string }> {
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

/** The line that marks a live diff: the run is ACTIVE, this is its worktree now. Pure. */
export function inProgressLine(run: RunDetails, live: Pick<LiveChanges, 'base' | 'files'>): string {
  const files = live.files.length === 1 ? '1 file' : `${live.files.length} files`;
  return `in progress: ${run.name} is ACTIVE — its worktree's changes so far against ${live.base.slice(0, 12)} (${files}); the final diff comes when it ends`;
}

/**
 * Shows a run's change with git: through the person's pager and colours when the output is a
 * terminal (git's own rules: core.pager, GIT_PAGER, PAGER, color.diff), plain when piped. An
 * ACTIVE fix run shows its worktree's changes so far (src/review/live.ts), marked in progress: a
 * header line on a terminal, a last line with --stat or --name-only, on stderr when a plain patch
 * is piped (it stays a patch), `in_progress` in --json.
 */
export async function showDiff(
  ctx: CommandContext,
  root: string,
  run: RunDetails,
  options: DiffOptions,
  /** Which run this is, when the person named something else (a group): said as the mark is. */
  which?: { readonly line: string; readonly json: Readonly<Record<string, unknown>> },
): Promise<void> {
  const live = await liveChanges(root, run, ctx.env);
  try {
    // Hashed before it is shown: a patch replaced meanwhile is then one merge refuses, not one it
    // takes for reviewed. Only the whole patch counts as shown, not --stat or --name-only.
    const sha256 = live || options.stat || options.nameOnly ? null : patchSha256(run.dir);
    if (options.json) {
      await showJson(ctx, run, live, { ...which?.json, ...(sha256 ? { patch_sha256: sha256 } : {}) });
      if (sha256) recordShown(run.dir, sha256, options.shownBy ?? 'diff');
      return;
    }
    const { from, to } = live ? { from: live.base, to: live.tree } : await resultOf(root, run);
    const marks = [...(which ? [which.line] : []), ...(live ? [inProgressLine(run, live)] : [])];
    // The hash on a terminal, above the patch; a pipe gets the patch alone (--json has it).
    const hash = sha256 && ctx.io.isTTY ? [`patch sha256 ${sha256}`] : [];
    await runDiff(ctx, root, {
      options,
      from,
      to,
      marks: [...marks, ...hash],
      ...(live ? { vars: live.objects } : {}),
    });
    if (sha256) recordShown(run.dir, sha256, options.shownBy ?? 'diff');
  } finally {
    live?.dispose();
  }
}

export interface DiffInput {
  readonly options: DiffOptions;
  readonly from: string;
  readonly to: string;
  /**
   * Lines that say what is shown (in progress, which attempt): before the diff on a terminal, after
   * a --stat or --name-only list, on stderr when a plain patch is piped (stdout stays a patch).
   */
  readonly marks: readonly string[];
  /** Where a live diff's objects are (src/review/live.ts). */
  readonly vars?: Readonly<Record<string, string>>;
}

/** git diff `from` `to` in the main repository: paged on a terminal, else captured and printed. */
export async function runDiff(ctx: CommandContext, root: string, input: DiffInput): Promise<void> {
  const { options, from, to, marks } = input;
  const paged = ctx.io.isTTY && options.pager !== false;
  const args = diffArgs(from, to, options, paged);
  const call = {
    cwd: root,
    env: ctx.env,
    hint: 'the change is also in the run folder as changes.patch',
    ...(input.vars ? { vars: input.vars } : {}),
  };
  const mark = marks.length > 0 ? marks.join('\n') : null;
  const listed = options.stat || options.nameOnly;
  if (mark && ctx.io.isTTY) ctx.io.out(`${mark}\n`);
  if (paged) {
    // The terminal goes to git and its pager as it is; nothing of ours sits in between. Inert as
    // every git agentbox runs (src/git/inert.ts), the pager aside.
    const code = await gitOnTerminal(args, call);
    if (code !== 0) throw new GitError(args, call, { exitCode: code, stderr: '' });
    return;
  }
  const result = await runGit(args, { ...call, keepLocale: true, stripFinalNewline: false });
  if (result.exitCode !== 0) throw new GitError(args, call, result);
  ctx.io.out(result.stdout);
  if (mark && !ctx.io.isTTY && listed) ctx.io.out(`${mark}\n`);
  else if (mark && !ctx.io.isTTY) ctx.io.err(`${mark}\n`);
}

/** `--json`: the change as data; a finished run's from changes.patch, an ACTIVE one's live. */
async function showJson(
  ctx: CommandContext,
  run: RunDetails,
  live: LiveChanges | null,
  which: Readonly<Record<string, unknown>> = {},
): Promise<void> {
  const data = live
    ? {
        in_progress: true,
        base: live.base,
        files: live.files,
        stat: live.stat,
        patch: live.patch.toString('utf8'),
      }
    : finishedJson(run);
  ctx.io.out(`${JSON.stringify({ ...which, run: run.name, id: run.meta.run_id, ...data }, null, 2)}\n`);
}

function finishedJson(run: RunDetails) {
  const file = path.join(run.dir, 'changes.patch');
  const patch = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
  return { in_progress: false, base: run.meta.repo_sha_start ?? null, patch };
}
