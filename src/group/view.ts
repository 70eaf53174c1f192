import { formatUsd } from '../budget/format.js';
import type { RunStatus } from '../ledger/types.js';
import type { Styler } from '../util/style.js';
import { terminalLine, terminalText } from '../util/terminal-text.js';
import { groupStatusClaimed } from './decided.js';
import { type Ranking, tierOf } from './rank.js';
import { CLAIM_MARK, rankingTable } from './ranking-table.js';
import type { GroupDetails } from './store.js';

/*
 * `agentbox show <group>`: the group, its attempts ranked with the reason for the order, and what
 * to do next. Pure.
 */

const HALTS: Record<string, string> = {
  first_pass: 'an attempt passed runs.verify (--first-pass): the others were stopped',
  budget: "the group's spend passed --max-cost: every attempt was stopped",
  stopped: 'agentbox stop',
};

/** Commands and what each does, aligned. */
const aligned = (steps: readonly (readonly [string, string])[]): string[] => {
  const width = Math.max(0, ...steps.map(([c]) => c.length));
  return steps.map(([c, what]) => `${c.padEnd(width)}  ${what}`);
};

/** What a person does next with the group: commands and what each does. Pure. */
export function groupNextSteps(group: GroupDetails, status: RunStatus, ranking: Ranking): string[] {
  const id = group.meta.group_id;
  const merged = group.state.merged;
  // A MERGED or DISCARDED a fetched group's publication claims decided nothing here.
  if (!groupStatusClaimed(group.state, status)) {
    if (status === 'MERGED' && merged)
      return [terminalLine(`attempt ${merged.attempt} was merged (run ${merged.run})`)];
    if (status === 'MERGED' || status === 'DISCARDED') return [];
  }
  if (status === 'ACTIVE') return [`it is still running — check again with: agentbox show ${id}`];
  const changed = ranking.attempts.filter((a) => tierOf(a) === 0 && a.diffLines !== null && a.diffLines > 0);
  const revised = ranking.attempts.filter((a) => a.revised);
  if (revised.length > 0) return revisedNextSteps(id, revised);
  if (ranking.tie.length > 1) {
    const [j, k] = ranking.tie;
    return aligned([
      [`agentbox diff ${id} --attempts ${j},${k}`, 'how the tied attempts differ'],
      [`agentbox merge ${id} --attempt ${j}`, 'the ranking ties: name the attempt to merge'],
    ]);
  }
  const best = ranking.best;
  if (best === null) {
    const steps: [string, string][] = [];
    if (status === 'CRASHED') steps.push([`agentbox recover ${id}`, 'start the attempts left']);
    const first = ranking.attempts.find((a) => a.id !== null);
    if (first) steps.push([`agentbox show ${first.id}`, `what attempt ${first.attempt} did`]);
    return aligned(steps);
  }
  const first = ranking.attempts[0]!;
  if (!changed.includes(first))
    return aligned([[`agentbox show ${first.id}`, `attempt ${best} ranks first and changed nothing`]]);
  const steps: [string, string][] = [[`agentbox diff ${id}`, `attempt ${best}'s change (ranked first)`]];
  const second = changed.find((a) => a.attempt !== best);
  if (second)
    steps.push([
      `agentbox diff ${id} --attempts ${best},${second.attempt}`,
      `how it differs from attempt ${second.attempt}'s`,
    ]);
  // `merge <group>` takes only an attempt that passed runs.verify: without one (no runs.verify, the
  // default), the attempt is named, or the suggestion was refused.
  steps.push(
    first.status === 'REVIEW' && first.verified === true
      ? [`agentbox merge ${id}`, `merge attempt ${best}`]
      : [
          `agentbox merge ${id} --attempt ${best}`,
          `merge attempt ${best} (none passed runs.verify: it is named)`,
        ],
  );
  return aligned(steps);
}

/**
 * Attempts the person revised are their choice, over the ranking (src/group/merge-select.ts): the
 * next steps are about them. Pure.
 */
function revisedNextSteps(id: string, revised: Ranking['attempts']): string[] {
  const steps: [string, string][] = revised.map((a) => [
    `agentbox diff ${id} --attempt ${a.attempt}`,
    `attempt ${a.attempt}'s change (you revised it: revision ${a.revised})`,
  ]);
  const [one] = revised;
  if (revised.length === 1 && one!.status === 'REVIEW' && one!.verified === true)
    steps.push([`agentbox merge ${id}`, `merge attempt ${one!.attempt}, the one you revised`]);
  else
    for (const a of revised)
      steps.push([
        `agentbox merge ${id} --attempt ${a.attempt}`,
        `merge attempt ${a.attempt} (${verdictOf(a)}: it is named)`,
      ]);
  return aligned(steps);
}

const verdictOf = (a: Ranking['attempts'][number]) =>
  a.status !== 'REVIEW'
    ? (a.status ?? 'not started')
    : a.verified === true
      ? 'passed runs.verify'
      : a.verified === false
        ? 'FAILED runs.verify'
        : 'no runs.verify ran';

/** The group's header fields. */
function headerLines(group: GroupDetails, status: RunStatus, spent: number | null, style: Styler): string[] {
  const { meta, state } = group;
  const lines: string[] = [];
  const field = (label: string, value: string) => lines.push(`  ${label.padEnd(12)}${value}`);
  field('id', meta.group_id);
  field('type', `${meta.type} ×${meta.attempts} (a group: agentbox fix --attempts ${meta.attempts})`);
  // A fetched group's MERGED or DISCARDED was said on another machine: nothing was decided here.
  const origin = meta.origin;
  const claimed = origin && groupStatusClaimed(state, status);
  field(
    'status',
    claimed
      ? `${status}${CLAIM_MARK} — ${terminalLine(`claimed by its publication (ran on ${origin.host}, fetched from ${origin.remote})`)}, not decided here`
      : status,
  );
  field('task', terminalText(meta.task).replace(/\n/g, `\n${' '.repeat(14)}`));
  // NOTE: group.json and state.json are untrusted text (a fetched group, a hand edit): every field
  // printed is made safe for the terminal, times included.
  field('created', terminalLine(meta.created_at));
  field('ended', terminalLine(state.ended_at ?? '—'));
  field('attempts', `${meta.attempts} · at most ${meta.max_parallel} at once`);
  field('models', meta.models ? meta.models.map(terminalLine).join(', ') : '(default)');
  field('first pass', meta.first_pass ? 'yes: the first attempt to pass runs.verify stops the others' : 'no');
  const total = spent === null ? 'nothing recorded' : formatUsd(spent);
  field(
    'spend',
    `${total} · ${meta.max_cost_usd === null ? 'no budget' : `budget ${formatUsd(meta.max_cost_usd, true)}`}`,
  );
  if (state.halted)
    field(
      'halted',
      style.warn(
        terminalLine(
          `${HALTS[state.halted.reason] ?? state.halted.reason} (${state.halted.detail}, ${state.halted.at})`,
        ),
      ),
    );
  if (state.merged)
    field(
      'merged',
      terminalLine(`attempt ${state.merged.attempt} (${state.merged.run}) at ${state.merged.at}`),
    );
  return lines;
}

/** The human view of `agentbox show <group>`. Pure. */
export function renderGroupDetails(
  group: GroupDetails,
  status: RunStatus,
  ranking: Ranking,
  style: Styler,
  report: string | null = null,
): string {
  const costs = ranking.attempts.map((a) => a.costUsd).filter((c): c is number => c !== null);
  const spent = costs.length > 0 ? costs.reduce((t, c) => t + c, 0) : null;
  const lines = [style.bold(group.name), ...headerLines(group, status, spent, style)];
  lines.push('', `ranking — ${ranking.why}`, ...rankingTable(ranking));
  // Why an attempt could not start, under the table (its cell says only that it could not).
  for (const a of ranking.attempts)
    if (a.status === null && !a.run && a.startError)
      lines.push(`  attempt ${a.attempt} could not start: ${terminalLine(a.startError)}`);
  if (report) lines.push('', `report: ${report}`);
  const next = groupNextSteps(group, status, ranking);
  if (next.length > 0) lines.push('', 'next:', ...next.map((s) => `  ${s}`));
  return `${lines.join('\n')}\n`;
}
