import { formatUsd } from '../budget/format.js';
import { claimedBy } from '../ledger/claim.js';
import type { RunDetails } from '../ledger/index.js';
import { runCost } from '../ledger/index-log.js';
import { terminalLine } from '../util/terminal-text.js';
import { lastVerify } from './merge-gate.js';

/*
 * What comes from another machine is a claim. A fetched run's state.json and events.jsonl are
 * what its publication says — anyone who can push to the remote writes them — so its status, its
 * verification and its cost are shown as claimed, by whom (the publication commit's identity),
 * and never as facts checked here: in `status`, `show`, the merge prompt and the web page; and
 * `merge --yes` of a fetched run needs --force. What is checked here, whoever published the run:
 * the patch itself (sensitive and refused changes, that it applies) and its hash.
 */

/** What a fetched run's publication claims, and who claims it. */
export interface Claim {
  /** `Name <email>` of the publication commit (its author; its committer too when another). */
  readonly by: string;
  /** The publication commit; null: fetched before agentbox recorded it. */
  readonly publication: string | null;
  readonly remote: string;
  /** The machine it says it ran on. */
  readonly host: string;
  readonly status: string;
  /** runs.verify's outcome as claimed; null: it claims none ran. */
  readonly verified: boolean | null;
  readonly cost_usd: number | null;
  /** `kind: message` of the failure it claims, or null. */
  readonly failure: string | null;
  /** Always false: nothing of the above was checked on this machine. */
  readonly checked_here: false;
}

/** The claim of a fetched run; null for a run of this machine. Pure. */
export function claimOf(run: RunDetails, events: readonly Record<string, unknown>[]): Claim | null {
  const origin = run.meta.origin;
  if (!origin) return null;
  const { state } = run;
  const p = state?.publication ?? null;
  const verify = lastVerify(events);
  return {
    by: p ? claimedBy(p) : 'unknown (fetched before agentbox recorded who published a run)',
    publication: p?.commit ?? null,
    remote: origin.remote,
    host: origin.host,
    status: state?.status ?? '(no state.json)',
    verified: state?.output?.verified ?? (verify ? verify.ok : null),
    cost_usd: runCost(state?.usage),
    failure: state?.failure ? `${state.failure.kind}: ${state.failure.message}` : null,
    checked_here: false,
  };
}

/**
 * `claims REVIEW · verify passed · $0.12 (claimed by Jane <j@x>, not checked here)`: one line,
 * terminal-safe (every part may be a stranger's text). Pure.
 */
export function claimLine(c: Claim): string {
  const verify = c.verified === null ? 'no verify run' : `verify ${c.verified ? 'passed' : 'FAILED'}`;
  const parts = [`claims ${c.status}`, verify, ...(c.cost_usd === null ? [] : [formatUsd(c.cost_usd)])];
  return terminalLine(`${parts.join(' · ')} (claimed by ${c.by}, not checked here)`);
}

/** `ran on ci-7 (fetched from origin): its publication claims REVIEW · … (claimed by …)`. Pure. */
export function claimedRunLine(claim: Claim): string {
  return terminalLine(
    `ran on ${claim.host} (fetched from ${claim.remote}): its publication ${claimLine(claim)}`,
  );
}
