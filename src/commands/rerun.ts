import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { findRepo } from '../git/repo.js';
import { findGroup } from '../group/resolve.js';
import { claimedBy } from '../ledger/claim.js';
import { EventLog } from '../ledger/events.js';
import { openLedger, type RunDetails, readRun, resolveRun, runIdOf } from '../ledger/index.js';
import { type PushFlags, pushAfter } from '../remote/after-run.js';
import { carriedText, type RerunPlan, rerunOptions, rerunPlanHere } from '../run/rerun.js';
import { type RunOptions, startRun } from '../run/start.js';
import { styler } from '../util/style.js';
import { terminalLine, terminalText } from '../util/terminal-text.js';
import { withCiExit } from './ci-exit.js';

export interface RerunFlags extends RunOptions, PushFlags {
  /** A fetched run: start its task without asking (the task is still printed). */
  readonly yes?: boolean;
}

/**
 * `agentbox rerun <run>`: the run's task started anew as a new run of its type, with today's
 * templates and configuration, from today's HEAD (src/run/rerun.ts says what carries over). The
 * old run is read only. A fetched run's task is its publication's word: shown, and confirmed.
 */
export async function rerun(ctx: CommandContext, ref: string, options: RerunFlags): Promise<number> {
  const repo = await findRepo(ctx.cwd, ctx.env);
  const ledger = openLedger(repo.root);
  const group = findGroup(ledger, ref);
  if (group) {
    throw new AgentboxError('USAGE', `${group} is a group of attempts: agentbox rerun takes one run`, {
      hint: `rerun one attempt on its own: agentbox rerun <attempt's id> (agentbox show ${runIdOf(group)} lists them); or the whole task again: agentbox fix "<task>" --attempts <n>`,
    });
  }
  const old = readRun(ledger, resolveRun(ledger, ref));
  const plan = rerunPlanHere(repo.root, ctx.env, old.meta);
  const { yes, ...flags } = options;
  if (
    plan.fetched &&
    !(await confirmed(ctx, old, plan, { yes: yes === true, json: options.json === true }))
  ) {
    ctx.io.out('Nothing started.\n');
    return 1;
  }
  if (!options.json) ctx.io.out(rerunLine(ctx, plan, flags, (old.state?.revision?.number ?? 1) - 1));
  return withCiExit(ctx, () =>
    pushAfter(ctx, rerunOptions(plan, flags), (o) => startRun(ctx, plan.type, plan.task, o, old.name)),
  );
}

/**
 * `rerun of <old> (fix) · carried over: model opus · timeout 45m`; and, for a run that was revised,
 * that its reviews stay with it (the task alone starts anew).
 */
function rerunLine(ctx: CommandContext, plan: RerunPlan, typed: RunOptions, reviews: number): string {
  const carried = carriedText(plan, typed);
  // A model's name comes from meta.yaml, a file a person may have edited: shown safe.
  const more = carried ? ` · carried over: ${terminalLine(carried)}` : '';
  const kept =
    reviews > 0
      ? ` · not its ${reviews === 1 ? 'review' : `${reviews} reviews`} (revise sends those; they stay in its revisions/)`
      : '';
  return `${styler(ctx.io).dim(`rerun of ${plan.of} (${plan.type}), with today's templates and configuration${more}${kept}`)}\n`;
}

/**
 * A fetched run's task was written by whoever can push to its remote. It is shown whole (made safe
 * for the terminal), then asked about; without a terminal it takes --yes, and a refusal is logged
 * in the old run's events.jsonl, as a refused merge is.
 */
async function confirmed(
  ctx: CommandContext,
  old: RunDetails,
  plan: RerunPlan,
  { yes, json }: { yes: boolean; json: boolean },
): Promise<boolean> {
  const origin = plan.fetched!;
  const by = old.state?.publication
    ? ` and published by ${terminalLine(claimedBy(old.state.publication))}`
    : '';
  const task = terminalText(plan.task).trimEnd().replace(/^/gm, '  ');
  // With --json, stdout is one JSON document: the notice goes to stderr.
  const say = json ? ctx.io.err : ctx.io.out;
  say(
    `${old.name} was fetched from ${terminalLine(origin.remote)}: it ran on ${terminalLine(origin.host)}${by}. Its task is that publication's word, not checked here:\n${task}\n`,
  );
  if (yes) return true;
  if (!ctx.io.ask) {
    const detail = `a fetched run's task, not confirmed (from ${origin.remote}, ran on ${origin.host})`;
    new EventLog(old.dir).append({ event: 'rerun_refused', reason: 'unconfirmed', detail, by: 'cli' });
    throw new AgentboxError('USAGE', `refusing to rerun ${old.name} without a confirmation: ${detail}`, {
      hint: `read the task above; run it in a terminal to be asked, or pass --yes: agentbox rerun ${runIdOf(old.name)} --yes`,
    });
  }
  const answer = await ctx.io.ask(
    `Start this task here as a new ${plan.type} run, with your configuration and sandbox? [y/N] `,
  );
  return /^y(es)?$/i.test(answer.trim());
}
