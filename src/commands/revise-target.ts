import { AgentboxError } from '../errors.js';
import { groupAttempts } from '../group/attempts.js';
import { attemptGroup } from '../group/merge.js';
import { findGroup } from '../group/resolve.js';
import { readGroup } from '../group/store.js';
import { type Ledger, readRun, resolveRun, runIdOf } from '../ledger/index.js';

/**
 * The run `agentbox revise <ref> [--attempt k]` revises: a plain run, or one attempt of a group —
 * the one the person chose, named by `--attempt k` on the group or by the attempt's own run id. The
 * other attempts stay as they are. An attempt counts as one only when its group lists it.
 */
export function reviseTarget(ledger: Ledger, ref: string, rawAttempt: string | undefined): string {
  const attempt = attemptNumber(rawAttempt);
  const groupName = findGroup(ledger, ref);
  if (groupName) {
    const group = readGroup(ledger, groupName);
    const id = runIdOf(groupName);
    if (attempt === null) {
      throw new AgentboxError('USAGE', `${groupName} is a group: name the attempt to revise`, {
        hint: `agentbox revise ${id} --attempt <k> "…" (agentbox show ${id} ranks the attempts)`,
      });
    }
    const attempts = groupAttempts(ledger, group);
    const found = attempts.find((a) => a.attempt === attempt);
    if (!found) {
      throw new AgentboxError(
        'USAGE',
        `--attempt ${attempt}: group ${groupName} has attempts 1 to ${attempts.length}`,
        {
          hint: `agentbox show ${id} ranks them`,
        },
      );
    }
    if (!found.run) {
      throw new AgentboxError(
        'USAGE',
        `attempt ${attempt} of group ${groupName} has no run to revise (it never started, or its folder is gone)`,
        {
          hint: `agentbox show ${id} lists its attempts`,
        },
      );
    }
    return found.run.name;
  }
  const run = readRun(ledger, resolveRun(ledger, ref));
  const of = attemptGroup(ledger, run);
  if (attempt !== null && of?.attempt !== attempt) {
    const what = of ? `attempt ${of.attempt} of group ${runIdOf(of.group.name)}` : 'a run of its own';
    throw new AgentboxError('USAGE', `--attempt ${attempt} does not name ${run.name}: it is ${what}`, {
      hint: of
        ? `agentbox revise ${runIdOf(of.group.name)} --attempt ${attempt} "…"`
        : `agentbox revise ${run.meta.run_id} "…"`,
    });
  }
  return run.name;
}

function attemptNumber(raw: string | undefined): number | null {
  if (raw === undefined) return null;
  if (!/^[1-9]\d{0,3}$/.test(raw.trim())) {
    throw new AgentboxError('USAGE', `--attempt ${JSON.stringify(raw)} is not an attempt number`, {
      hint: 'attempts are numbered from 1: agentbox revise <group> --attempt 2 "…"',
    });
  }
  return Number(raw);
}
