import { formatUsd } from '../budget/format.js';
import { formatDuration } from '../config/duration.js';
import { terminalLine } from '../util/terminal-text.js';
import type { RankedAttempt, Ranking } from './rank.js';

/*
 * A group's ranking as a table: the same cells in `agentbox show <group>` and in the group's
 * report.md. Pure.
 */

export const RANKING_HEADER = [
  'RANK',
  'ATTEMPT',
  'RUN',
  'MODEL',
  'STATUS',
  'VERIFY',
  'CONTRACT',
  'VIOLATIONS',
  'REFUSALS',
  'DIFF',
  'COST',
  'TIME',
] as const;

const ORDINAL = (n: number) => {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
};

/** "1st", or "1st=" for a place shared with another attempt. */
function placeCell(a: RankedAttempt, ranking: Ranking): string {
  const shared = ranking.attempts.filter((b) => b.place === a.place).length > 1;
  return `${ORDINAL(a.place)}${shared ? '=' : ''}`;
}

function statusCell(a: RankedAttempt): string {
  if (a.removed) return 'removed';
  if (a.status === null && !a.run && a.startError) return 'could not start';
  return a.status ?? (a.run ? 'starting' : 'waiting');
}

const verifyCell = (a: RankedAttempt) =>
  a.verified === true ? 'passed' : a.verified === false ? 'FAILED' : '—';
const contractCell = (a: RankedAttempt) => (a.applied === null ? '—' : a.applied ? 'applied' : 'not applied');
const started = (a: RankedAttempt) => a.status !== null;

/** The mark on a value a fetched attempt's publication claims (as `agentbox status` marks them). */
export const CLAIM_MARK = '*';
export const CLAIM_NOTE =
  '* claimed by the publication of a run fetched from another machine, not checked here (agentbox show <id> says who published it)';

/** The cells of one attempt's row, in RANKING_HEADER's order; a fetched attempt's claims marked. */
export function rankingCells(a: RankedAttempt, ranking: Ranking): string[] {
  // The patch (DIFF) is checked here, whoever published it; the rest comes from its state and log.
  const claim = (cell: string) => (a.claimedBy && cell !== '—' ? `${cell}${CLAIM_MARK}` : cell);
  return [
    placeCell(a, ranking),
    String(a.attempt),
    a.id ?? '—',
    a.model === null ? '(default)' : terminalLine(a.model),
    claim(statusCell(a)),
    claim(started(a) ? verifyCell(a) : '—'),
    claim(started(a) ? contractCell(a) : '—'),
    claim(started(a) ? String(a.violations) : '—'),
    claim(started(a) ? String(a.refusals) : '—'),
    a.diffLines === null ? '—' : `${a.diffLines} lines`,
    claim(a.costUsd === null ? '—' : formatUsd(a.costUsd)),
    claim(a.durationMs === null ? '—' : formatDuration(a.durationMs)),
  ];
}

/** The ranking as text columns, header first, each line indented by `indent`. */
export function rankingTable(ranking: Ranking, indent = '  '): string[] {
  const rows = [[...RANKING_HEADER], ...ranking.attempts.map((a) => rankingCells(a, ranking))];
  const widths = RANKING_HEADER.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const table = rows.map((r) => `${indent}${r.map((c, i) => c.padEnd(widths[i]!)).join('  ')}`.trimEnd());
  return ranking.attempts.some((a) => a.claimedBy) ? [...table, `${indent}${CLAIM_NOTE}`] : table;
}
