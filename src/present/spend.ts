import { formatUsd } from '../budget/format.js';
import type { RunUsage, Spend } from '../ledger/types.js';
import { thousands } from '../util/number.js';

const tokens = (n: number) => thousands(n);

/** One side's spend on one line: calls, turns, time, tokens, cost. Pure. */
export function spendLine(spend: Spend, calls: 'process' | 'call'): string {
  const counted = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
  return [
    calls === 'process' ? counted(spend.calls, 'process', 'processes') : counted(spend.calls, 'call'),
    counted(spend.turns, 'turn'),
    `${(spend.duration_ms / 1000).toFixed(1)}s`,
    `${tokens(spend.input_tokens)} in`,
    `${tokens(spend.output_tokens)} out`,
    `${tokens(spend.cache_read_input_tokens)} cache read`,
    `${tokens(spend.cache_creation_input_tokens)} cache write`,
    `${formatUsd(spend.cost_usd)}${spend.estimated ? ' (estimated)' : ''}`,
  ].join(' · ');
}

/** The spend section: the agent, the supervisor's own calls, the total against the budget. Pure. */
export function spendLines(usage: RunUsage | null | undefined, maxCostUsd: number | null): string[] {
  const budget = maxCostUsd === null ? 'no budget' : `budget ${formatUsd(maxCostUsd, true)}`;
  if (!usage) return [`  ${'total'.padEnd(12)}— (nothing recorded) · ${budget}`];
  const total = usage.agent.cost_usd + usage.supervisor.cost_usd;
  return [
    `  ${'agent'.padEnd(12)}${spendLine(usage.agent, 'process')}`,
    `  ${'supervisor'.padEnd(12)}${spendLine(usage.supervisor, 'call')}`,
    `  ${'total'.padEnd(12)}${formatUsd(total, maxCostUsd !== null)} · ${budget}`,
  ];
}
