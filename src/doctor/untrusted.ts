import type { TrustEntry, TrustStatus } from '../trust/index.js';

const RUN_KEYS = ['runs.setup', 'runs.verify'];

/**
 * runs.setup and runs.verify as the repository sets them, awaiting the person's trust: left out of
 * the configuration doctor checks, so not checked and never run. Pure.
 */
export function untrustedRuns(trust: TrustStatus | undefined): TrustEntry[] {
  if (!trust || trust.trusted) return [];
  return trust.entries.filter((e) => RUN_KEYS.includes(e.key));
}

/**
 * `runs.verify is set in agentbox.yaml but not trusted yet, so not run: review it, then run
 * "agentbox trust"` (a check that says "not set" of them would send the person looking). Pure.
 */
export function untrustedRunsDetail(entries: readonly TrustEntry[]): string {
  const keys = [...new Set(entries.map((e) => e.key))].sort();
  const files = [...new Set(entries.map((e) => e.file))].join(' and ');
  const one = keys.length === 1;
  return `${keys.join(' and ')} ${one ? 'is' : 'are'} set in ${files} but not trusted yet, so not run: review ${one ? 'it' : 'them'}, then run "agentbox trust"`;
}
