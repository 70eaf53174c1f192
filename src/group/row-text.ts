import type { GroupSummary } from './status-rows.js';

const HALTED: Record<NonNullable<GroupSummary['halted']>, string> = {
  first_pass: 'stopped at the first pass',
  budget: 'stopped: over budget',
  stopped: 'stopped',
};

/**
 * A group's counts in one line, before its task in `agentbox status`: "fix ×4 · 2 passed · 1
 * running". Passed and failed are runs.verify's verdicts (when the project has none, the attempts
 * waiting for review are counted instead). Pure.
 */
export function groupDetail(row: GroupSummary): string {
  const count = (test: (a: GroupSummary['attempts'][number]) => boolean) => row.attempts.filter(test).length;
  const parts = [`${row.type} ×${row.attempts.length}`];
  const passed = count((a) => a.verified === true);
  const failed = count((a) => a.verified === false);
  const running = count((a) => a.status === 'ACTIVE' || a.status === 'STALLED');
  const unstarted = count((a) => a.run === null && a.error !== null);
  const waiting =
    row.status === 'ACTIVE' && row.halted === null ? count((a) => a.run === null && a.error === null) : 0;
  if (passed > 0 || failed > 0) {
    parts.push(`${passed} passed`);
    if (failed > 0) parts.push(`${failed} failed`);
  } else {
    const review = count((a) => a.status === 'REVIEW');
    if (review > 0) parts.push(`${review} to review`);
  }
  if (running > 0) parts.push(`${running} running`);
  if (waiting > 0) parts.push(`${waiting} waiting`);
  if (unstarted > 0) parts.push(`${unstarted} could not start`);
  if (row.merged !== null) parts.push(`attempt ${row.merged} merged`);
  else if (row.halted !== null) parts.push(HALTED[row.halted]);
  return parts.join(' · ');
}
