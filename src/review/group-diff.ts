import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { git } from '../git/exec.js';
import type { Attempt } from '../group/attempts.js';
import type { RankedAttempt } from '../group/rank.js';
import { rankGroup } from '../group/rank-facts.js';
import { readGroup } from '../group/store.js';
import type { Ledger } from '../ledger/paths.js';
import type { RunDetails } from '../ledger/read.js';
import { terminalJson } from '../util/json-out.js';
import { type DiffOptions, diffArgs, resultOf, runDiff, showDiff } from './diff.js';

/*
 * `agentbox diff <group>`: the best-ranked attempt's change, one attempt's (`--attempt k`), or how
 * two attempts' results differ (`--attempts j,k`: git diff from j's result to k's).
 */

export interface GroupDiffOptions extends DiffOptions {
  /** `--attempt k`, as typed. */
  readonly attempt?: string;
  /** `--attempts j,k`, as typed. */
  readonly attempts?: string;
}

type Ranked = ReturnType<typeof rankGroup>;

function usage(message: string, hint: string): AgentboxError {
  return new AgentboxError('USAGE', message, { hint });
}

/** `k` as typed, checked against the group's attempts. Pure. */
export function parseAttempt(text: string, count: number, id: string): number {
  const k = /^\d{1,3}$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!Number.isInteger(k) || k < 1 || k > count) {
    throw usage(
      `group ${id} has attempts 1 to ${count}, not ${JSON.stringify(text)}`,
      `see them ranked: agentbox show ${id}`,
    );
  }
  return k;
}

/** `j,k` as typed: two different attempts of the group. Pure. */
export function parseAttemptPair(text: string, count: number, id: string): [number, number] {
  const parts = text.split(',');
  if (parts.length !== 2) {
    throw usage(
      `--attempts takes two attempts as j,k, not ${JSON.stringify(text)}`,
      `e.g. agentbox diff ${id} --attempts 1,2`,
    );
  }
  const [j, k] = parts.map((p) => parseAttempt(p, count, id)) as [number, number];
  if (j === k)
    throw usage(`--attempts ${text} names attempt ${j} twice`, `e.g. agentbox diff ${id} --attempts 1,2`);
  return [j, k];
}

/** Attempt k's run, or why there is none to show. */
function attemptRun(ranked: Ranked, k: number): RunDetails {
  const id = ranked.group.meta.group_id;
  const a = ranked.runs.find((r) => r.attempt === k) as Attempt;
  if (a.name === null) {
    const why = ranked.group.state.halted
      ? `it never will: the group was stopped (${ranked.group.state.halted.reason})`
      : 'it waits its turn';
    throw usage(`attempt ${k} of group ${id} has not started: ${why}`, `see the others: agentbox show ${id}`);
  }
  if (a.run === null) {
    throw usage(
      `attempt ${k} of group ${id} has no run folder any more (${a.name}: removed by agentbox gc)`,
      `its patch is kept: ${ranked.group.name}/patches/agent_${k}.patch`,
    );
  }
  return a.run;
}

/** Attempt k's result in git; its start commit when it changed nothing; null while it runs. */
async function resultCommit(root: string, ranked: Ranked, k: number): Promise<string> {
  const run = attemptRun(ranked, k);
  const id = ranked.group.meta.group_id;
  if (run.state?.status === 'ACTIVE' || run.state?.status === 'STALLED') {
    throw usage(
      `attempt ${k} of group ${id} is still running: it has no result to compare yet`,
      `its change so far: agentbox diff ${id} --attempt ${k}`,
    );
  }
  const f = ranked.attempts.find((a) => a.attempt === k) as RankedAttempt;
  if (f.diffLines === null || f.diffLines === 0) return ranked.group.meta.repo_sha_start;
  return (await resultOf(root, run)).to;
}

/** One attempt's change, as `diff <run>` shows it, with a line saying which attempt it is. */
async function showAttempt(
  ctx: CommandContext,
  root: string,
  ranked: Ranked,
  k: number,
  options: DiffOptions,
  why: string,
) {
  const run = attemptRun(ranked, k);
  const id = ranked.group.meta.group_id;
  const f = ranked.attempts.find((a) => a.attempt === k) as RankedAttempt;
  const live = run.state?.status === 'ACTIVE';
  if (!live && (f.diffLines === null || f.diffLines === 0)) {
    throw usage(
      `attempt ${k} of group ${id} (run ${run.meta.run_id}) has no changes (no changes.patch)`,
      `see what it did: agentbox show ${run.meta.run_id}`,
    );
  }
  const line = `attempt ${k} of ${ranked.group.meta.attempts} in group ${id} (run ${run.meta.run_id})${why}`;
  await showDiff(ctx, root, run, options, { line, json: { group: ranked.group.name, attempt: k } });
}

/** How attempt j's result and attempt k's differ: git diff from j's to k's. */
async function showBetween(
  ctx: CommandContext,
  root: string,
  ranked: Ranked,
  pair: [number, number],
  options: DiffOptions,
) {
  const [j, k] = pair;
  const from = await resultCommit(root, ranked, j);
  const to = await resultCommit(root, ranked, k);
  const id = ranked.group.meta.group_id;
  if (options.json) {
    const args = diffArgs(from, to, { ...options, color: 'never' });
    const patch = await git(args, { cwd: root, env: ctx.env });
    const out = { group: ranked.group.name, attempts: [j, k], from, to, patch: patch ? `${patch}\n` : '' };
    ctx.io.out(`${terminalJson(out, 2)}\n`);
    return;
  }
  const line = `group ${id}: from attempt ${j}'s result (${from.slice(0, 12)}) to attempt ${k}'s (${to.slice(0, 12)})`;
  await runDiff(ctx, root, { options, from, to, marks: [line] });
}

/** `agentbox diff <group> [--attempt k | --attempts j,k]`. */
export async function showGroupDiff(
  ctx: CommandContext,
  root: string,
  ledger: Ledger,
  name: string,
  options: GroupDiffOptions,
): Promise<void> {
  const ranked = rankGroup(ledger, readGroup(ledger, name));
  const { meta } = ranked.group;
  const id = meta.group_id;
  if (options.attempt !== undefined && options.attempts !== undefined)
    throw usage(
      '--attempt and --attempts do not go together',
      `one attempt: agentbox diff ${id} --attempt 1`,
    );
  if (options.attempts !== undefined)
    return showBetween(ctx, root, ranked, parseAttemptPair(options.attempts, meta.attempts, id), options);
  if (options.attempt !== undefined)
    return showAttempt(ctx, root, ranked, parseAttempt(options.attempt, meta.attempts, id), options, '');
  // Merged: the change that was merged, not the first-ranked one (it showed a discarded attempt).
  const merged = ranked.group.state.merged;
  if (merged) return showAttempt(ctx, root, ranked, merged.attempt, options, ', the one merged');
  if (ranked.best === null) {
    throw usage(
      `no attempt of group ${id} has finished yet: none ranks first`,
      `see each attempt: agentbox show ${id}; one attempt's change (so far): agentbox diff ${id} --attempt 1`,
    );
  }
  const tie =
    ranked.tie.length > 1
      ? `; it ties with attempt ${ranked.tie.filter((t) => t !== ranked.best).join(', ')}`
      : '';
  await showAttempt(
    ctx,
    root,
    ranked,
    ranked.best,
    options,
    `, ranked first${tie} — agentbox show ${id} says why`,
  );
}
