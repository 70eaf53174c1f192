import type { NetworkRefusal } from '../../endpoint/refuse-network.js';
import type { EventLog } from '../../ledger/events.js';
import type { Denial } from '../../supervisor/hooks.js';
import { LogSample } from './log-sample.js';

/**
 * What agentbox's proxy refused, logged: each refusal of a host into events.jsonl, tied to the Bash
 * call running then when there is one, and the first of each host (for each call) told as a
 * denial, which the run's report lists. An agent that loops must not fill the disk or the report:
 * a host's first 20 are logged, then every 100th with its count; past 500 in all, every 500th; past
 * 50 denials, no more; past 10,000 hosts, the rest count as one.
 */
export function networkRefusals(input: {
  readonly log: Pick<EventLog, 'append'>;
  readonly onDenial?: (denial: Denial) => void;
  readonly bashInFlight?: () => string | undefined;
}): (refusal: NetworkRefusal) => void {
  const sample = new LogSample({
    first: 20,
    every: 100,
    thinAfter: 500,
    later: 500,
    keys: 10_000,
    overflow: 'more hosts',
  });
  const toldOf = new Set<string>();
  return (refusal) => {
    const named = refusal.host ? `${refusal.host}:${refusal.port}` : 'a host it did not name';
    const { key: where, count, total, write } = sample.take(named);
    const toolUseId = input.bashInFlight?.();
    const denial: Denial = {
      ...(toolUseId ? { toolUseId } : {}),
      tool: 'Bash',
      rule: 'network',
      reason: `the run's proxy refused ${where} (${refusal.via}): not in sandbox.allowed_domains`,
      input: where,
      at: new Date().toISOString(),
    };
    if (write) input.log.append({ event: 'refused', source: 'sandbox', ...denial, ...refusal, count, total });
    const told = `${toolUseId ?? ''} ${where}`;
    if (!toldOf.has(told) && toldOf.size < 50) {
      toldOf.add(told);
      input.onDenial?.(denial);
    }
  };
}
