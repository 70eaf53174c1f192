import type { GroupState } from './types.js';

/**
 * Whether the gate decided the group on this machine: a MERGED or DISCARDED that a fetched group's
 * publication claims was said elsewhere, and decides nothing here (its attempts can still be
 * merged here, their claims shown). Pure.
 */
export function groupDecidedHere(state: GroupState): boolean {
  if (state.status !== 'MERGED' && state.status !== 'DISCARDED') return false;
  return state.claimed_status !== state.status;
}

/**
 * Whether the group's status — or `shown`, the one it shows as — is the one its publication
 * claimed (a fetched group). Pure.
 */
export function groupStatusClaimed(state: GroupState, shown: string = state.status): boolean {
  return (
    state.claimed_status !== undefined && state.claimed_status === state.status && shown === state.status
  );
}
