import { AgentboxError } from '../errors.js';
import type { Spend } from '../ledger/types.js';
import { formatUsd } from './format.js';

/** `--max-cost 2.50` (a leading `$` allowed): a positive amount in USD. */
export function parseMaxCost(text: string): number {
  const clean = text.trim().replace(/^\$/, '');
  const value = Number(clean);
  if (!/^\d+(\.\d+)?$|^\.\d+$/.test(clean) || !(value > 0) || !Number.isFinite(value)) {
    throw new AgentboxError(
      'USAGE',
      `invalid --max-cost ${JSON.stringify(text)}: expected an amount in USD`,
      {
        hint: 'use a positive number of dollars, e.g. --max-cost 2.50',
      },
    );
  }
  return value;
}

/**
 * The cost budget: null while the run is within it, else why it ends (ABORTED, `budget`). The
 * agent's and the supervisor's spend count together; passing means spending more than the budget.
 */
export function budgetPassed(maxCostUsd: number | null, agent: Spend, supervisor: Spend): string | null {
  if (maxCostUsd === null) return null;
  const spent = agent.cost_usd + supervisor.cost_usd;
  if (!(spent > maxCostUsd)) return null;
  const estimated = agent.estimated || supervisor.estimated ? ', partly estimated' : '';
  const usd = (n: number) => formatUsd(n, true);
  return `cost budget of ${usd(maxCostUsd)} passed: the run has cost ${usd(spent)} (agent ${usd(agent.cost_usd)}, supervisor ${usd(supervisor.cost_usd)}${estimated})`;
}
