import fs from 'node:fs';
import path from 'node:path';
import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { GitError, runGit } from '../git/exec.js';
import { gitPager, pagerSink } from '../git/pager.js';
import { patchResult } from '../git/result-commit.js';
import type { RunDetails } from '../ledger/index.js';
import { patchSha256, recordShown, type ShownBy } from '../ledger/reviewed.js';
import { terminalJson } from '../util/json-out.js';
import { diffForTerminal } from './diff-text.js';
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
 * detection) as merge sees it; colours stay the person's own, diff drivers run not. Never paged by git:
 * the pager is given text agentbox made safe (runDiff).
 */
export function diffArgs(from: string, to: string, options: DiffOptions): string[] {
  checkDiffOptions(options);
  return [
    '--no-pager',
    '-c',
    'core.quotePath=false',
    'diff',
    `--color=${options.color ?? 'auto'}`,
    // The change as git stores it: no diff driver or textconv of the person's runs on the run's
    // files (the main tree's attributes may be the agent's, after a merge), as in patch.ts.
    '--no-ext-diff',
    '--no-textconv',
    '--src-prefix=a/',
    '--dst-prefix=b/',
    '--find-renames',
    ...(options.stat ? ['--stat'] : options.nameOnly ? ['--name-only'] : []),
    // NOTE: a side may come from a fetched run's or group's records (its start commit): text a
    // stranger wrote, never an option (`--output=~/.bashrc` had git diff write there).
    '--end-of-options',
    from,
    to,
    '--',
  ];
}

/** Options that do not go together, or a colour git does not know, as a usage error. Pure. */
function checkDiffOptions(options: DiffOptions): void {
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
}

/** What the run's change is in git: the tree changes.patch makes of its start (patchResult). */
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
  // What merge applies (the patch), never the commit alone: a patch changed after the run ended is
  // refused here as at merge, not shown as the commit while its hash is recorded as seen.
  const commit = run.meta.origin === undefined ? (run.state?.result_commit ?? null) : null;
  const to = await patchResult(
    root,
    { name: run.name, id: run.meta.run_id },
    { base, patchFile: patch, commit },
  );
  return { from: base, to };
}

/** The line that marks a live diff: the run is ACTIVE, this is its worktree now. Pure. */
export function inProgressLine(run: RunDetails, live: Pick<LiveChanges, 'base' | 'files'>): string {
  const files = live.files.length === 1 ? '1 file' : `${live.files.length} files`;
  return `in progress: ${run.name} is ACTIVE — its worktree's changes so far against ${live.base.slice(0, 12)} (${files}); the final diff comes when it ends`;
}

/**
 * Shows a run's change with git: made safe for a terminal and through the person's pager and
 * colours when the output is one (git's own choice of pager and colour: GIT_PAGER, core.pager,
 * PAGER, color.diff, color.ui), the patch as it is when piped (runDiff). An
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
      // The patch as it is, once it is the run's result (resultOf refuses one changed after the run).
      if (!live && sha256 && run.meta.type === 'fix' && run.state?.result_commit) await resultOf(root, run);
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

/**
 * git diff `from` `to` in the main repository. For a terminal — stdout is one, or colours were
 * asked for (`--color=always`, for `less -R`) — it is text agentbox makes safe: the content shown
 * exact with only git's own colours passing (diff-text.ts), then through the person's pager unless
 * `--no-pager`, whatever that pager passes through. Piped without colours it is the patch byte for
 * byte, so it still applies.
 */
export async function runDiff(ctx: CommandContext, root: string, input: DiffInput): Promise<void> {
  const { options, marks } = input;
  checkDiffOptions(options);
  const mark = marks.length > 0 ? marks.join('\n') : null;
  const listed = options.stat || options.nameOnly;
  const forTerminal = ctx.io.isTTY || options.color === 'always';
  const text = forTerminal
    ? await diffText(ctx, root, input)
    : await captured(ctx, root, input, diffArgs(input.from, input.to, options));
  if (!ctx.io.isTTY) {
    ctx.io.out(text);
    if (mark && listed) ctx.io.out(`${mark}\n`);
    else if (mark) ctx.io.err(`${mark}\n`);
    return;
  }
  if (mark) ctx.io.out(`${mark}\n`);
  const pager = options.pager === false ? null : await gitPager(root, ctx.env);
  if (pager === null) return ctx.io.out(text);
  // Ctrl-C in the pager is the pager's (less takes it to stop a search): agentbox waits for it to
  // end, as git does, rather than dying under it.
  const unsubscribe = ctx.onInterrupt?.(() => {});
  try {
    const sink = pagerSink(pager, ctx.env);
    await sink.write(text);
    await sink.close();
  } finally {
    unsubscribe?.();
  }
}

/** The diff for a terminal: git's coloured and plain diffs, walked together (diff-text.ts). */
async function diffText(ctx: CommandContext, root: string, input: DiffInput): Promise<string> {
  const { options, from, to } = input;
  const colour = await wantsColour(root, ctx, options.color ?? 'auto');
  // git sizes a --stat to the terminal when it writes to one; captured, it reads COLUMNS.
  const columns: Record<string, string> =
    ctx.io.isTTY && ctx.io.columns ? { COLUMNS: String(ctx.io.columns) } : {};
  const sized = { ...input, vars: { ...input.vars, ...columns } };
  const [plain, coloured] = await Promise.all([
    captured(ctx, root, sized, diffArgs(from, to, { ...options, color: 'never' })),
    colour ? captured(ctx, root, sized, diffArgs(from, to, { ...options, color: 'always' })) : null,
  ]);
  return diffForTerminal(plain, coloured);
}

/** `--color=<when>` for a terminal, `auto` decided as git would for its own stdout (color.diff, color.ui). */
async function wantsColour(root: string, ctx: CommandContext, when: string): Promise<boolean> {
  if (when !== 'auto') return when === 'always';
  const answer = await runGit(['config', '--get-colorbool', 'color.diff', String(ctx.io.isTTY)], {
    cwd: root,
    env: ctx.env,
  });
  return answer.exitCode === 0 && answer.stdout.trim() === 'true';
}

/** git's output of one diff, as it wrote it. */
async function captured(
  ctx: CommandContext,
  root: string,
  input: DiffInput,
  args: string[],
): Promise<string> {
  const call = {
    cwd: root,
    env: ctx.env,
    hint: 'the change is also in the run folder as changes.patch',
    ...(input.vars ? { vars: input.vars } : {}),
  };
  const result = await runGit(args, { ...call, keepLocale: true, stripFinalNewline: false });
  if (result.exitCode !== 0) throw new GitError(args, call, result);
  return result.stdout;
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
  ctx.io.out(`${terminalJson({ ...which, run: run.name, id: run.meta.run_id, ...data }, 2)}\n`);
}

function finishedJson(run: RunDetails) {
  const file = path.join(run.dir, 'changes.patch');
  const patch = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
  return { in_progress: false, base: run.meta.repo_sha_start ?? null, patch };
}
