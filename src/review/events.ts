import { terminalLine } from '../util/terminal-text.js';

/*
 * What `agentbox show` reads from a run's events.jsonl: pure readers, each on its own event.
 */

/** One refused action of a run: who refused (guard, claude, sandbox, gate), the tool, what. */
export interface Refusal {
  readonly by: string;
  readonly tool: string;
  readonly what: string;
}

/** Who turned the run's sandbox off (its `sandbox_off` event), or null. Pure. */
export function sandboxOffOf(events: readonly Record<string, unknown>[]): string | null {
  const off = events.find((e) => e.event === 'sandbox_off');
  return off ? terminalLine(String(off.by ?? 'unknown')) : null;
}

/** The refusals in a run's events.jsonl, in order. Pure. */
export function refusalsOf(events: readonly Record<string, unknown>[]): Refusal[] {
  const text = (v: unknown) => (typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v));
  return events.flatMap((e): Refusal[] => {
    if (e.event === 'human_gate_refused') return [{ by: 'gate', tool: 'Bash', what: text(e.reason) }];
    if (e.event === 'refused')
      return [{ by: text(e.source) || 'claude', tool: text(e.tool), what: text(e.reason) }];
    if (e.decision === 'deny') return [{ by: 'guard', tool: text(e.tool), what: text(e.reason) }];
    return [];
  });
}
