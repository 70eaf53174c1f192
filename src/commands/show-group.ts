import fs from 'node:fs';
import path from 'node:path';
import type { CommandContext } from '../context.js';
import { groupStatus } from '../group/attempts.js';
import { rankGroup } from '../group/rank-facts.js';
import { GROUP_REPORT } from '../group/report.js';
import { readGroup } from '../group/store.js';
import { renderGroupDetails } from '../group/view.js';
import type { Ledger } from '../ledger/paths.js';
import { isAlive } from '../process/reap.js';
import { terminalJson } from '../util/json-out.js';
import { styler } from '../util/style.js';

/** `agentbox show <group>`: the group, its attempts ranked with the reason for the order, what next. */
export function showGroup(ctx: CommandContext, ledger: Ledger, name: string, json: boolean): number {
  const group = readGroup(ledger, name);
  const ranking = rankGroup(ledger, group);
  const alive = group.state.status === 'ACTIVE' && isAlive(group.state.pid, group.state.pid_start);
  const status = groupStatus(group, ranking.runs, alive);
  const reportFile = path.join(group.dir, GROUP_REPORT);
  const hasReport = fs.existsSync(reportFile);
  if (json) {
    const { attempts, best, tie, why } = ranking;
    const report = hasReport ? fs.readFileSync(reportFile, 'utf8') : null;
    const out = { kind: 'group', name, dir: group.dir, meta: group.meta, state: group.state, status };
    ctx.io.out(`${terminalJson({ ...out, ranking: { why, best, tie, attempts }, report }, 2)}\n`);
    return 0;
  }
  ctx.io.out(renderGroupDetails(group, status, ranking, styler(ctx.io), hasReport ? reportFile : null));
  return 0;
}
