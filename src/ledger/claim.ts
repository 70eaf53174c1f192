import type { RunPublication, RunState } from './types.js';

/**
 * Who claims what a fetched run's state says, in one line: the publication commit's author, and
 * its committer when another identity. Git's identities as the pusher's git wrote them: nothing
 * here authenticates them (a signed commit would; agentbox does not check signatures). Pure.
 */
export function claimedBy(p: RunPublication): string {
  return p.committer === p.author ? p.author : `${p.author}, committed by ${p.committer}`;
}

/**
 * Whether a fetched run's status is the one its publication claimed: a MERGED or DISCARDED too,
 * which only a decision here makes a fact (src/remote/import.ts). Pure.
 */
export function statusClaimed(state: RunState | null | undefined): boolean {
  return (
    state?.publication?.claimed_status !== undefined && state.publication.claimed_status === state.status
  );
}

/**
 * Whether a person merged or discarded the run on this machine: a MERGED or DISCARDED that is the
 * one a fetched run's publication claimed was said on another machine, and decides nothing here
 * (the run can still be merged or discarded here, its claim shown). Pure.
 */
export function decidedHere(state: RunState | null | undefined): boolean {
  if (state?.status !== 'MERGED' && state?.status !== 'DISCARDED') return false;
  return state.publication?.claimed_status !== state.status;
}
