import type { RunPublication } from './types.js';

/**
 * Who claims what a fetched run's state says, in one line: the publication commit's author, and
 * its committer when another identity. Git's identities as the pusher's git wrote them: nothing
 * here authenticates them (a signed commit would; agentbox does not check signatures). Pure.
 */
export function claimedBy(p: RunPublication): string {
  return p.committer === p.author ? p.author : `${p.author}, committed by ${p.committer}`;
}
