import { AgentboxError } from '../errors.js';
import type { RunStatus } from '../ledger/types.js';

/*
 * Which attempt `agentbox merge <group>` takes, as data: the first in the ranking's order that
 * passed (REVIEW, and runs.verify passed), a tie the person settles, or none — then the person
 * names one with --attempt k. Pure; the ranking itself is src/group/rank.ts.
 */

/** What the choice needs of one attempt, in the ranking's order (best first). */
export interface Candidate {
  readonly attempt: number;
  /** The run's folder name; null: it never started. */
  readonly run: string | null;
  /** null: not started, or its folder is gone. */
  readonly status: RunStatus | null;
  /** state.output.verified: true passed runs.verify, false failed it, null none ran. */
  readonly verified: boolean | null;
  /** Its place in the ranking (1 is the best); attempts the ranking cannot tell apart share one. */
  readonly place: number;
  /** Why it sits there (the ranking's line), for the question on a tie. */
  readonly reason: string;
  /** A fetched attempt: its status is its publication's claim. */
  readonly claimed?: boolean;
  /** The revision it is on, when the person revised it (2 or more): their choice. */
  readonly revised?: number | null;
}

export interface Ranked {
  /** Every attempt, best first. */
  readonly order: readonly Candidate[];
}

export type Choice =
  | { readonly kind: 'pick'; readonly attempt: Candidate }
  | { readonly kind: 'tie'; readonly attempts: readonly Candidate[] }
  | { readonly kind: 'none'; readonly attempts: readonly Candidate[] };

export const passed = (c: Candidate): boolean =>
  c.run !== null && c.status === 'REVIEW' && c.verified === true;

/**
 * The best passing attempt, or the passing attempts that share its place, or none. A better
 * placed attempt that did not pass (DONE: nothing to merge) does not hide a tie behind it. An
 * attempt the person revised is their choice, over the ranking's: the one revised when it passed
 * (several: they tie; none of them passed: none, and the person names one), never another.
 */
export function chooseAttempt(ranked: Ranked): Choice {
  const revised = ranked.order.filter((c) => c.revised);
  if (revised.length > 0) {
    const kept = revised.filter(passed);
    if (kept.length === 0) return { kind: 'none', attempts: ranked.order };
    return kept.length > 1 ? { kind: 'tie', attempts: kept } : { kind: 'pick', attempt: kept[0]! };
  }
  const best = ranked.order.find(passed);
  if (!best) return { kind: 'none', attempts: ranked.order };
  const tied = ranked.order.filter((c) => passed(c) && c.place === best.place);
  return tied.length > 1 ? { kind: 'tie', attempts: tied } : { kind: 'pick', attempt: best };
}

/** How an attempt stands, in a few words: `REVIEW, runs.verify failed`, `not started`. */
export function standing(c: Candidate): string {
  if (c.run === null) return 'not started';
  if (c.status === null) return 'its run folder is gone';
  if (c.status !== 'REVIEW') return c.claimed ? `${c.status}, as its publication claims` : c.status;
  const revised = c.revised ? `, revised by you (revision ${c.revised})` : '';
  if (c.verified === null) return `REVIEW, no runs.verify ran${revised}`;
  return `REVIEW, runs.verify ${c.verified ? 'passed' : 'failed'}${revised}`;
}

/** `--attempt k`: that attempt, when it is one with changes waiting for the gate. */
export function namedAttempt(groupId: string, order: readonly Candidate[], k: number): Candidate {
  const found = order.find((c) => c.attempt === k);
  if (!found) {
    throw new AgentboxError('USAGE', `--attempt ${k}: group ${groupId} has attempts 1 to ${order.length}`, {
      hint: `see them ranked: agentbox show ${groupId}`,
    });
  }
  if (found.status !== 'REVIEW') {
    throw new AgentboxError(
      'USAGE',
      `attempt ${k} of group ${groupId} cannot be merged: ${standing(found)} (only a REVIEW attempt has changes waiting)`,
      { hint: `see the attempts: agentbox show ${groupId}` },
    );
  }
  return found;
}

/** No attempt passed: each one's standing, and how to take one anyway. */
export function nonePassed(groupId: string, order: readonly Candidate[]): AgentboxError {
  const lines = [...order]
    .sort((a, b) => a.attempt - b.attempt)
    .map((c) => `  attempt ${c.attempt}: ${standing(c)}`);
  const review = order.filter((c) => c.status === 'REVIEW').map((c) => c.attempt);
  const revised = order.filter((c) => c.revised).map((c) => c.attempt);
  if (revised.length > 0) {
    const which = revised.length === 1 ? `attempt ${revised[0]}` : `attempts ${revised.join(', ')}`;
    return new AgentboxError(
      'MERGE_REFUSED',
      `you revised ${which} of group ${groupId}, and it has not passed (REVIEW with runs.verify passed), so merge takes no other:\n${lines.join('\n')}`,
      {
        hint: `nothing was changed. Revise it again, or name the attempt to merge: agentbox merge ${groupId} --attempt ${revised[0]} (agentbox show ${groupId} ranks them all)`,
      },
    );
  }
  return new AgentboxError(
    'MERGE_REFUSED',
    `no attempt of group ${groupId} passed (REVIEW with runs.verify passed):\n${lines.join('\n')}`,
    {
      hint:
        review.length > 0
          ? `nothing was changed. See why: agentbox show ${groupId}; to merge one anyway: agentbox merge ${groupId} --attempt ${review[0]}`
          : `nothing was changed: no attempt has changes waiting. See why: agentbox show ${groupId}; drop them all: agentbox discard ${groupId}`,
    },
  );
}

/** A tie where nobody can be asked: the tied attempts and the command for each. */
export function tieError(groupId: string, tied: readonly Candidate[]): AgentboxError {
  const list = tied.map((c) => c.attempt).join(', ');
  return new AgentboxError('USAGE', `attempts ${list} of group ${groupId} tie for the best: choose one`, {
    hint: `compare them (agentbox show ${groupId}; agentbox diff ${groupId} --attempt ${tied[0]!.attempt}), then: ${tied
      .map((c) => `agentbox merge ${groupId} --attempt ${c.attempt}`)
      .join(' or ')}`,
  });
}
