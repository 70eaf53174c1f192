import { formatUsd } from '../budget/format.js';
import { runCost } from '../ledger/index-log.js';
import { runIdOf } from '../ledger/names.js';
import type { Ledger } from '../ledger/paths.js';
import { readState } from '../ledger/state.js';
import type { RunState } from '../ledger/types.js';
import type { Finalized } from '../run/end/finalize.js';
import { terminalName, terminalText } from '../util/terminal-text.js';
import type { GroupDetails } from './store.js';
import type { GroupHalt } from './types.js';

// What a group's process prints as its attempts end, and when it ends. Pure but for reading the
// attempts' state.json.

/** The checks' word on a run: passed, failed, not run. */
export function verdict(state: RunState | null): string {
  const v = state?.output?.verified;
  return v === true ? 'verify passed' : v === false ? 'verify failed' : 'not verified';
}

export function attemptEndLine(k: number, n: number, done: Finalized, state: RunState | null): string {
  const cost = runCost(state?.usage);
  const why = done.failure ? ` (${done.failure.kind}): ${terminalText(done.failure.message)}` : '';
  // What is not in the patch is said where the attempt's end is.
  const nested = done.nested?.length
    ? ` · left out of the patch: nested repositories ${done.nested.map((r) => terminalName(`${r.path}/`)).join(', ')}`
    : '';
  const left = done.changes?.leftOut?.length
    ? ` · left out of the patch as too large: ${done.changes.leftOut.length} file(s) (agentbox show ${done.name})`
    : '';
  return `attempt ${k}/${n} ended: ${done.name} — ${done.status}${why} · ${verdict(state)}${cost === null ? '' : ` · ${formatUsd(cost)}`}${nested}${left}\n`;
}

export function groupEndLines(ledger: Ledger, group: GroupDetails, halted: GroupHalt | null): string {
  const id = group.meta.group_id;
  const rows = group.state.members.map((m) => {
    if (!m.run) return `  ${m.attempt}  ${m.error ? `not started: ${terminalText(m.error)}` : 'not started'}`;
    const state = readState(`${ledger.runsDir}/${m.run}`);
    const cost = runCost(state?.usage);
    return `  ${m.attempt}  ${runIdOf(m.run)}  ${state?.status ?? '?'}  ${verdict(state)}${cost === null ? '' : `  ${formatUsd(cost)}`}`;
  });
  const stop = halted
    ? `  ${halted.reason === 'first_pass' ? 'first pass' : halted.reason}: ${terminalText(halted.detail)}\n`
    : '';
  // `merge <group>` takes an attempt that passed runs.verify; with none, show names the one to take.
  const passed = group.state.members.some((m) => {
    const state = m.run ? readState(`${ledger.runsDir}/${m.run}`) : null;
    return state?.status === 'REVIEW' && state.output?.verified === true;
  });
  const next = passed
    ? `agentbox show ${id} · agentbox merge ${id}`
    : `agentbox show ${id} (it names the attempt to merge)`;
  return `group ${group.name} — ${group.meta.attempts} attempts\n${rows.join('\n')}\n${stop}  next: ${next}\n`;
}
