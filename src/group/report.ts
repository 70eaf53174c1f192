import fs from 'node:fs';
import path from 'node:path';
import { formatUsd } from '../budget/format.js';
import type { Ledger } from '../ledger/paths.js';
import { oneLine } from '../ledger/text.js';
import { writeAtomic } from '../util/fs.js';
import { type Ranking, tierOf } from './rank.js';
import { rankGroup } from './rank-facts.js';
import { RANKING_HEADER, rankingCells } from './ranking-table.js';
import { type GroupDetails, readGroup } from './store.js';
import { PATCHES_DIR } from './types.js';

export const GROUP_REPORT = 'report.md';

/** A table cell: one line, no `|` to break the table. Pure. */
const cell = (text: string) => oneLine(text).replace(/\|/g, '\\|');

/** The group's report.md: the task, its attempts ranked with the reason for each place. Pure. */
export function renderGroupReport(group: GroupDetails, ranking: Ranking, patches: readonly string[]): string {
  const { meta, state } = group;
  const lines = [
    `# Best of ${meta.attempts}: ${cell(meta.task)}`,
    '',
    `Group \`${group.name}\` · ${meta.attempts} attempts · ${state.status.toLowerCase()}` +
      (meta.models ? ` · models ${meta.models.map(cell).join(', ')}` : '') +
      (meta.max_cost_usd === null ? '' : ` · budget ${formatUsd(meta.max_cost_usd, true)}`),
  ];
  if (state.halted) lines.push('', `Halted (${state.halted.reason}): ${cell(state.halted.detail)}`);
  if (state.merged)
    lines.push('', `Merged: attempt ${state.merged.attempt} (\`${cell(state.merged.run)}\`).`);
  lines.push('', '## Ranking', '', `${ranking.why}.`, '');
  lines.push(`| ${RANKING_HEADER.join(' | ')} |`, `|${RANKING_HEADER.map(() => '---|').join('')}`);
  for (const a of ranking.attempts) lines.push(`| ${rankingCells(a, ranking).map(cell).join(' | ')} |`);
  lines.push('', '## Why each attempt sits where it does', '');
  for (const a of ranking.attempts)
    lines.push(`${a.place}. attempt ${a.attempt}${a.id ? ` (\`${a.id}\`)` : ''}: ${cell(a.reason)}`);
  lines.push(
    '',
    'Order: finished (REVIEW or DONE) first; then runs.verify (passed, not run, failed); the output',
    'contract (template applied, fewer violations); fewer refusals; a change to merge, and a smaller',
    'one; lower cost (to the cent); shorter duration (to the second). Equal on all: a tie.',
  );
  if (patches.length > 0) {
    lines.push('', '## Patches', '');
    for (const p of patches) lines.push(`- \`${PATCHES_DIR}/${p}\``);
  }
  const unfinished = ranking.attempts.filter((a) => tierOf(a) !== 0).length;
  if (unfinished === ranking.attempts.length)
    lines.push('', 'No attempt finished: there is nothing to merge.');
  return `${lines.join('\n')}\n`;
}

function patchFiles(dir: string): string[] {
  try {
    return fs
      .readdirSync(path.join(dir, PATCHES_DIR))
      .filter((f) => /^agent_\d+\.patch$/.test(f))
      .sort((a, b) => Number(a.slice(6, -6)) - Number(b.slice(6, -6)));
  } catch {
    return [];
  }
}

/**
 * Writes the group's report.md from its attempts as they are now (the runner when the group ends,
 * merge again after it decided); returns the ranking it wrote.
 */
export async function writeGroupReport(ledger: Ledger, group: GroupDetails | string): Promise<Ranking> {
  const fresh = readGroup(ledger, typeof group === 'string' ? group : group.name);
  const ranking = rankGroup(ledger, fresh);
  await writeAtomic(
    path.join(fresh.dir, GROUP_REPORT),
    renderGroupReport(fresh, ranking, patchFiles(fresh.dir)),
  );
  return ranking;
}
