import type { Styler } from '../util/style.js';
import { type Claim, claimedRunLine } from './claims.js';
import { type NotPassing, notPassingLine } from './merge-gate.js';
import { changedSinceLine, type PatchSeen } from './patch-seen.js';

/** What is known of a run's trust: a fetched run's claim, and its patch against what was shown. */
export interface Trust {
  readonly claim: Claim | null;
  readonly seen: PatchSeen | null;
}

/**
 * First, before anything a person might read as a go-ahead: this run did not pass, or only claims
 * it did (a fetched run), and its patch is not the one shown here. Pure.
 */
export function gateLines(trust: Trust, failed: NotPassing | null, style: Styler): string[] {
  const { claim, seen } = trust;
  return [
    ...(claim ? [style.warn(`  ! ${claimedRunLine(claim)}`)] : []),
    ...(failed ? [style.bad(`  ✗ ${claim ? 'claims it ' : ''}did not pass: ${notPassingLine(failed)}`)] : []),
    ...(seen?.changed ? [style.bad(`  ✗ ${changedSinceLine(seen)}`)] : []),
  ];
}
