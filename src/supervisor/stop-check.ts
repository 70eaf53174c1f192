import type { EventLog } from '../ledger/events.js';
import { correctionText } from '../templates/contract.js';
import { block, type CheckRecord, type Decision, type LogBase } from './decision.js';
import { judgeViolations, type StopChecks, violationMessage } from './violations.js';

/** What the checks of one Stop found, for the supervisor to add to its record. */
export interface StopCheckResult {
  /** undefined: nothing to object to, the Stop goes on to the next decision. */
  readonly decision: Decision | undefined;
  readonly violations: number;
  /** The agent was told what is wrong and goes on (a correction). */
  readonly corrected: boolean;
  /** The verification's outcome, when it ran. */
  readonly verify: CheckRecord['verify'];
}

/**
 * The agent wants to end: its final answer against the output contract, then (when that holds)
 * the project's verification. A violation is logged, then corrected (the agent is told exactly
 * what is wrong and goes on), or it fails the run.
 */
export async function checkStop(
  checks: StopChecks,
  lastMessage: string,
  correctionsSoFar: number,
  log: Pick<EventLog, 'append'>,
  base: LogBase,
  /** Aborted when the run ends: no verification starts, one under way is ended and not counted. */
  signal: AbortSignal,
): Promise<StopCheckResult> {
  let found = checks.answer ? await checks.answer(lastMessage) : [];
  let verify: CheckRecord['verify'] = null;
  if (found.length === 0 && checks.verify && !signal.aborted) {
    verify = await checks.verify(signal);
    if (signal.aborted) return { decision: undefined, violations: 0, corrected: false, verify: null };
    // How long it took, for the run page's steps (src/web: a slow verification is seen at a glance).
    log.append({
      event: 'verify',
      ok: verify.ok,
      detail: verify.detail,
      ...(verify.duration_ms === undefined ? {} : { duration_ms: verify.duration_ms }),
    });
    if (!verify.ok) found = [{ type: 'verify_failed', detail: verify.detail }];
  }
  const none = { decision: undefined, violations: found.length, corrected: false, verify };
  if (found.length === 0) return none;
  const verdict = judgeViolations(checks, found, correctionsSoFar);
  const action = verdict.kind === 'correct' ? 'correct' : verdict.kind === 'fail' ? 'fail' : 'logged';
  for (const v of found)
    log.append({
      event: 'violation',
      type: v.type,
      detail: v.detail,
      action,
      ...(action === 'correct'
        ? { correction: correctionsSoFar + 1, max_corrections: checks.maxCorrections }
        : {}),
    });
  if (verdict.kind === 'logged') return none;
  if (verdict.kind === 'fail') {
    const reason = violationMessage(verdict.type);
    log.append({ ...base, decision: 'abort', source: 'rules', reason, warning: true });
    return { ...none, decision: { answer: {}, end: { kind: 'abort', failure: 'violation', reason } } };
  }
  const text = correctionText(found, checks.requiredSections);
  log.append({ ...base, decision: 'continue', source: 'rules', reason: 'correction', text });
  return { ...none, decision: { answer: block(text) }, corrected: true };
}
