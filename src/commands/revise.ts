import { formatUsd } from '../budget/format.js';
import { formatDuration } from '../config/duration.js';
import type { CommandContext } from '../context.js';
import { assertHuman } from '../gate/gate.js';
import { type RevisionRecord, readRevision } from '../ledger/revisions.js';
import { loadRunContext } from '../run/begin/context.js';
import { detachRun } from '../run/detach.js';
import { openRevision } from '../run/revise-open.js';
import { runHere } from '../run/start.js';
import { probeSandboxAsync } from '../sandbox/available.js';
import { reviseTarget } from './revise-target.js';

export interface ReviseOptions {
  /** `--comment <file>:<line> "<text>"`, repeatable: every value in order. */
  readonly comment?: readonly string[];
  readonly edit?: boolean;
  readonly detach?: boolean;
  readonly json?: boolean;
  readonly force?: boolean;
  /** `--attempt k`: which attempt of a group (the ref names the group). */
  readonly attempt?: string;
}

/**
 * `agentbox revise <run> "<feedback>"`: a fix run waiting for review goes on in its own Claude Code
 * session (`--resume <session id>`), worktree, envelope and tier, with the person's review as its
 * next user turn, and returns to REVIEW with a new commit on its branch (docs/commands.md).
 */
export async function revise(
  ctx: CommandContext,
  ref: string,
  feedback: string | undefined,
  options: ReviseOptions,
): Promise<number> {
  assertHuman(ctx.env, 'revise', ctx.cwd);
  // bubblewrap is tried while the configuration and the run are read (~5-10 ms otherwise waited for).
  const box = probeSandboxAsync(ctx.env);
  const rc = await loadRunContext(ctx);
  const name = reviseTarget(rc.ledger, ref, options.attempt);
  const { run, next } = await openRevision(ctx, rc, name, {
    ...options,
    box,
    feedback,
    comments: options.comment,
  });
  const id = run.meta.run_id;
  const json = options.json === true;
  if (options.detach) return detachRun(ctx, rc.ledger, name, json, ['--revision']);
  const code = await runHere(ctx, rc, name, json, {
    message: next.message,
    header: `revising ${name} — revision ${next.number}`,
  });
  const record = readRevision(run.dir, next.number);
  if (!json && record) ctx.io.out(revisionLine(record, id));
  return code;
}

/**
 * How a revision went, after the run's summary: its verification first (merge --yes refuses a
 * failed one), and what to do next as the run's status allows (only a run in REVIEW is revised;
 * one the supervisor ended on the failure is resumed). Pure.
 */
export function revisionLine(r: RevisionRecord, id: string): string {
  const verify =
    r.verified === null ? 'runs.verify not run' : r.verified ? 'runs.verify passed' : 'runs.verify FAILED';
  const own = `its own change: agentbox diff ${id} --revision ${r.revision}`;
  const line = `revision ${r.revision} · ${verify} · ${formatUsd(r.cost_usd)} · ${formatDuration(r.duration_ms)} — ${own}\n`;
  if (r.verified !== false) return line;
  const next =
    r.status === 'REVIEW'
      ? `revise it again (agentbox revise ${id} "…")`
      : `the run is ${r.status}: go on with agentbox resume ${id} "<what to fix>"`;
  return `${line}✗ revision ${r.revision} broke runs.verify: merge --yes refuses it — ${next} or see why: agentbox show ${id}\n`;
}
