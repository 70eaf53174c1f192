import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { claudeConfigDir, findTranscript } from '../claude/transcript.js';
import type { Env } from '../context.js';
import { AgentboxError } from '../errors.js';
import { takeCheckpoint } from '../git/checkpoint.js';
import { EventLog } from '../ledger/events.js';
import { type RunDetails, type RunState, reactivated, runIdOf, updateState } from '../ledger/index.js';
import { costOf, revisionDir } from '../ledger/revisions.js';
import { isAlive } from '../process/reap.js';
import type { Review } from '../review/feedback/comments.js';
import { templateDirs } from '../templates/locate.js';
import { loadReviseTemplate, revisionMarker, revisionMessage } from '../templates/revise.js';
import { readTextIfExists, writeAtomic } from '../util/fs.js';
import { templateValues } from './begin/compose.js';
import type { RunContext } from './begin/context.js';
import { AGENT_RUN_DIR } from './end/artifacts.js';
import { recordFirstRevision } from './end/revision.js';

/*
 * A revision (`agentbox revise`): a fix run that waits for review goes on in its own Claude Code
 * session, in its worktree and envelope, with the person's review as its next user turn. It is the
 * run, active again: the same supervisor, checks, budget, detach, stop and recovery as any run.
 */

/** Why `run` cannot be revised (throws, naming the next command), or nothing when it can. */
export function reviseBlocker(run: RunDetails): void {
  const { name, meta, state } = run;
  const id = meta.run_id;
  const refuse = (message: string, hint: string) => new AgentboxError('USAGE', message, { hint });
  if (!state) throw new AgentboxError('RUN_CORRUPT', `run ${name} has no state.json`);
  if (meta.origin) {
    throw refuse(
      `run ${name} ran on ${meta.origin.host}: its Claude Code session is there, so it cannot be revised here`,
      `revise it on ${meta.origin.host}, or merge it (agentbox merge ${id}), or start its task anew here: agentbox rerun ${id}`,
    );
  }
  if (meta.type !== 'fix') {
    throw refuse(
      `run ${name} is a ${meta.type} run: only a fix run (its change waiting for review) can be revised`,
      `start a new run: agentbox ${meta.type} "…"`,
    );
  }
  if (state.status !== 'REVIEW') throw refuse(...notInReview(name, id, state));
  if (!state.session_id) {
    throw refuse(
      `run ${name} never started a Claude Code session: there is none to revise in`,
      'start a new run: agentbox fix "…"',
    );
  }
  if (!state.worktree_path || !fs.existsSync(state.worktree_path)) {
    throw refuse(
      `the worktree of ${name} is gone: ${state.worktree_path ?? '(none recorded)'}`,
      `its change is kept in changes.patch: merge it (agentbox merge ${id}), or start a new run: agentbox fix "…"`,
    );
  }
}

/**
 * A run whose Claude Code session has no transcript left (its config folder was cleaned, or it ran
 * under another one): `claude --resume` would fail, so it is refused before anything changes.
 */
export function sessionBlocker(run: RunDetails, env: Env): void {
  const session = run.state?.session_id;
  if (!session) return;
  const dir = claudeConfigDir(env, os.homedir());
  if (findTranscript(dir, session)) return;
  throw new AgentboxError(
    'USAGE',
    `the Claude Code session of ${run.name} is gone: no transcript of ${session} under ${path.join(dir, 'projects')}`,
    {
      hint: `its change is kept: merge it (agentbox merge ${run.meta.run_id}), or start a new run: agentbox fix "…"`,
    },
  );
}

/** The refusal of a fix run that is not waiting for review: its message and hint. Pure apart from the pid check. */
function notInReview(name: string, id: string, state: RunState): [string, string] {
  const { status } = state;
  const now = `run ${name} is ${status}; only a run in REVIEW can be revised`;
  if ((status === 'ACTIVE' || status === 'STALLED') && isAlive(state.pid, state.pid_start))
    return [
      `run ${name} is still running`,
      `wait for it (agentbox watch ${id}), or stop it (agentbox stop ${id})`,
    ];
  if (status === 'MERGED' || status === 'DISCARDED')
    return [`run ${name} is already ${status}`, 'start a new run for more work: agentbox fix "…"'];
  if (status === 'CRASHED' || status === 'ABORTED' || status === 'STALLED' || status === 'ACTIVE')
    return [
      now,
      `go on in its session with: agentbox resume ${id} "<instructions>" (or agentbox recover ${id})`,
    ];
  return [now, 'start a new run: agentbox fix "…"'];
}

/** The revision a run is on: 1 until it is first revised. */
export const revisionOf = (state: Pick<RunState, 'revision'> | null): number => state?.revision?.number ?? 1;

/**
 * The next revision's message, from the run's revise template filled with `review` (the person's
 * review, rendered). Read and checked now: a bad template is an error before anything changes.
 */
export function composeRevision(env: Env, rc: RunContext, run: RunDetails, review: string) {
  const number = revisionOf(run.state) + 1;
  const template = loadReviseTemplate(templateDirs(env, rc.repo.root), run.meta.type);
  const values = templateValues({
    meta: run.meta,
    worktree: run.state?.worktree_path ?? null,
    branch: run.state?.branch ?? `agentbox/${run.name}`,
    revision: { number, review },
  });
  return { number, message: revisionMessage(template, values), template: template.path };
}

/**
 * Starts revision k: records revision 1 when this is the first, writes revisions/<k>/ (the review
 * and the message), checkpoints the worktree (a crash rolls back no further than here), and makes
 * the run ACTIVE in this process — only while it is still in REVIEW (two revises at once: one wins).
 */
export async function beginRevision(
  rc: RunContext,
  run: RunDetails,
  next: {
    readonly number: number;
    readonly message: string;
    readonly review: Review;
    readonly rendered: string;
  },
): Promise<void> {
  const state = run.state!;
  const worktree = state.worktree_path!;
  await recordFirstRevision(rc.ledger.root, run.dir, run.meta, state);
  const dir = revisionDir(run.dir, next.number);
  fs.mkdirSync(dir, { recursive: true });
  // The review as the agent got it ({{review}}), and as data (its message and line comments); the
  // worktree's checkpoint meanwhile (independent of these files, each waited for on the disk).
  const [taken] = await Promise.all([
    takeCheckpoint(worktree, run.name, { exclude: [AGENT_RUN_DIR] }),
    writeAtomic(path.join(dir, 'feedback.md'), `${next.rendered.trimEnd()}\n`),
    writeAtomic(path.join(dir, 'review.json'), `${JSON.stringify(next.review, null, 2)}\n`),
    writeAtomic(path.join(dir, 'prompt.md'), next.message),
  ]);
  const at = new Date();
  await updateState(
    rc.ledger,
    run.name,
    (current) => {
      if (current.status !== 'REVIEW') {
        throw new AgentboxError(
          'USAGE',
          `run ${run.name} is ${current.status} now: another command took it`,
          {
            hint: `see it: agentbox show ${runIdOf(run.name)}`,
          },
        );
      }
      return {
        ...reactivated(at),
        revision: {
          number: next.number,
          started_at: at.toISOString(),
          from_commit: current.result_commit ?? null,
          cost_before_usd: costOf(current.usage),
        },
        checkpoint: { ...taken, at: at.toISOString(), iteration: 0 },
      };
    },
    { event: 'revise', detail: `revision ${next.number}` },
  );
  new EventLog(run.dir).append({
    event: 'revise',
    revision: next.number,
    review: next.review.message,
    comments: next.review.comments.length,
  });
}

/** Revision k's message, as recorded when it began (the detached worker and recovery send it). */
export function revisionTurn(runDir: string, k: number): string {
  return fs.readFileSync(path.join(revisionDir(runDir, k), 'prompt.md'), 'utf8');
}

/**
 * What a run taken up again in the middle of revision k must be sent (resume, recover): nothing
 * more when its session already holds the revision's message (claude recorded it before it
 * died), else that message — so a revision cut off before its first turn is not lost.
 */
export function pendingRevisionTurn(runDir: string, state: RunState, env: Env): string | undefined {
  const k = state.revision?.number;
  if (!k || !state.session_id) return undefined;
  const file = findTranscript(claudeConfigDir(env, os.homedir()), state.session_id);
  const text = file ? readTextIfExists(file) : undefined;
  if (text?.includes(revisionMarker(k))) return undefined;
  try {
    return revisionTurn(runDir, k);
  } catch {
    return undefined;
  }
}
