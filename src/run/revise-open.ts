import type { CommandContext } from '../context.js';
import { AgentboxError, isAgentboxError } from '../errors.js';
import { assertOwnWorktree } from '../git/own-traces.js';
import { EventLog } from '../ledger/events.js';
import { type RunDetails, readRun } from '../ledger/index.js';
import { patchSha256 } from '../ledger/reviewed.js';
import { clearKeptReview, collectReview } from '../review/feedback/collect.js';
import type { SandboxProbe } from '../sandbox/available.js';
import { assertSandboxUsable, assertVerifyUsable } from '../sandbox/prepare.js';
import { assertProjectSettings } from '../settings/startup.js';
import { terminalLine } from '../util/terminal-text.js';
import type { RunContext } from './begin/context.js';
import { refuseUntrustedChecks } from './begin/context.js';
import { checkContinue } from './continue.js';
import { beginRevision, composeRevision, reviseBlocker, revisionOf, sessionBlocker } from './revise.js';

export interface RevisionAsk {
  readonly feedback?: string | undefined;
  /** `--comment` values in order: place, text, place, text… */
  readonly comments?: readonly string[] | undefined;
  readonly edit?: boolean | undefined;
  readonly force?: boolean | undefined;
  /** Who asked: the page (`ui`) or the command line (unset). */
  readonly by?: 'ui' | undefined;
  /** The sandbox's trial when the caller started it earlier (probeSandboxAsync); else it runs here. */
  readonly box?: Promise<SandboxProbe> | undefined;
  /**
   * The sha256 of the patch the review was written against (the page sends the one it drew): a run
   * whose change is another now is refused, so no comment lands on a line it was not written for.
   */
  readonly patchShown?: string | undefined;
}

/** A review written against another patch than the run's now: refused, naming both. */
function assertSamePatch(run: RunDetails, shown: string): void {
  const now = patchSha256(run.dir);
  if (now === shown) return;
  throw new AgentboxError(
    'USAGE',
    `the change of ${run.name} is not the one this review was written on (patch ${terminalLine(shown.slice(0, 12))}, now ${now?.slice(0, 12) ?? 'none'}): nothing was sent`,
    { hint: `look at the change again (it is on revision ${revisionOf(run.state)}), then send the review` },
  );
}

/** Which check refused a revision: the run's own state (a conflict) or what was asked (bad input). */
export type RefusalKind = 'blocked' | 'refused';

/**
 * Opens revision k+1 of `name`, everything `agentbox revise` does before the run goes on (in this
 * process or detached): the run's blockers, the checks of any run, the review collected and
 * rendered, revisions/<k>/ written and the run ACTIVE. The CLI and the page (POST
 * /api/runs/<run>/revise) both call it. Every refusal is logged in the run's events.jsonl
 * (`revise_refused`); `onRefused` says which kind it was (the page answers 409 or 400).
 */
export async function openRevision(
  ctx: CommandContext,
  rc: RunContext,
  name: string,
  ask: RevisionAsk,
  onRefused: (kind: RefusalKind) => void = () => {},
) {
  const run = readRun(rc.ledger, name);
  const refused = (kind: RefusalKind) => (error: unknown) => {
    if (isAgentboxError(error)) {
      const by = ask.by ? { by: ask.by } : {};
      new EventLog(run.dir).append({ event: 'revise_refused', reason: error.message, ...by });
      onRefused(kind);
    }
    throw error;
  };
  try {
    reviseBlocker(run);
    sessionBlocker(run, ctx.env);
    if (ask.patchShown !== undefined) assertSamePatch(run, ask.patchShown);
    await assertOwnWorktree(rc.repo.root, name, run.state?.worktree_path ?? null);
  } catch (error) {
    refused('blocked')(error);
  }
  const id = run.meta.run_id;
  // Ctrl-C in the editor is the editor's: agentbox waits for it, as git does, rather than dying under it.
  const unsubscribe = ask.edit ? ctx.onInterrupt?.(() => {}) : undefined;
  const next = await (async () => {
    // Everything a run checks before it starts, before anything changes.
    checkContinue(ctx, rc, name, { command: `agentbox revise ${id} "…"`, force: ask.force === true });
    assertProjectSettings(rc.repo.root);
    assertSandboxUsable(ctx.env, rc.config.sandbox, 'fix', await ask.box);
    refuseUntrustedChecks(rc);
    assertVerifyUsable(ctx.env, rc.config.sandbox, rc.config.runs.verify);
    const { review, rendered } = await collectReview(ctx.env, {
      runDir: run.dir,
      runName: name,
      revision: revisionOf(run.state) + 1,
      feedback: ask.feedback,
      comments: ask.comments,
      edit: ask.edit,
      worktree: run.state?.worktree_path ?? null,
    }).finally(() => unsubscribe?.());
    return { ...composeRevision(ctx.env, rc, run, rendered), review, rendered };
  })().catch(refused('refused'));
  try {
    await beginRevision(rc, run, next);
  } catch (error) {
    // Another command took the run between the checks and now (two revises at once: one wins).
    refused('blocked')(error);
  }
  if (ask.edit) clearKeptReview(run.dir);
  return { run, next };
}
