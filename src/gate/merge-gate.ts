import type { RunDetails } from '../ledger/index.js';
import { terminalLine } from '../util/terminal-text.js';

/*
 * The merge gate tells the truth: a run's patch is offered for merging whatever way the run ended
 * (an ABORTED or CRASHED run keeps its patch, and taking part of a stopped run is legitimate), but
 * a run that did not end REVIEW with its checks passing says so first — in `merge`'s prompt, in
 * `show`, in the web UI — and `merge --yes` refuses it without `--force`.
 */

/** Why a run is not a passing one: its status, and each reason, in words a person reads first. */
export interface NotPassing {
  readonly status: string;
  /** `agent_abort: the agent gave up`, `runs.verify FAILED: npm test exited 1`… (terminal-safe). */
  readonly reasons: readonly string[];
}

const MAX = 160;
const cut = (text: string) => {
  const line = terminalLine(text.trim().split('\n')[0] ?? '');
  return line.length > MAX ? `${line.slice(0, MAX - 1)}…` : line;
};

/**
 * A verification's detail in one line: its first (`\`npm test\` failed (exit code 1):`) and the
 * end of the command's output after it, where a test runner says what failed; the first line
 * alone ended in a colon with nothing after it. Cut from the front of the output, never its end.
 */
function verifyLine(detail: string): string {
  const [head = '', ...rest] = detail.trim().split('\n');
  const first = terminalLine(head.trim().replace(/:$/, ''));
  const output = rest
    .map((line) => line.trim())
    .filter(Boolean)
    .slice(-3)
    .map(terminalLine)
    .join(' ⏎ ');
  if (!output) return cut(first);
  const room = MAX - first.length - 2;
  const tail = output.length > room ? `…${output.slice(output.length - room + 1)}` : output;
  return `${first}: ${tail}`;
}

/** The last `verify` event's verdict, for a run that ended before it recorded its output. */
export function lastVerify(
  events: readonly Record<string, unknown>[],
): { ok: boolean; detail: string } | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.event === 'verify') return { ok: e.ok === true, detail: String(e.detail ?? '') };
  }
  return null;
}

/**
 * null: the run ended REVIEW (or DONE, with nothing to merge) and no check it ran failed (runs.setup, runs.verify). Otherwise its
 * status and why. NOTE: a failed runs.verify counts even when the status reads REVIEW: the status
 * says how the agent's session ended, the verification whether its change works. Pure.
 */
export function notPassing(run: RunDetails, events: readonly Record<string, unknown>[]): NotPassing | null {
  const { state } = run;
  const status = state?.status ?? '(no state.json)';
  const reasons: string[] = [];
  if (state?.failure) reasons.push(cut(`${state.failure.kind}: ${state.failure.message}`));
  const verify = lastVerify(events);
  const verified = state?.output?.verified ?? (verify ? verify.ok : null);
  if (verified === false)
    reasons.push(`runs.verify FAILED${verify?.detail ? `: ${verifyLine(verify.detail)}` : ''}`);
  if (state?.setup && !state.setup.ok) reasons.push(cut(`runs.setup FAILED: ${state.setup.command}`));
  // DONE: a fix run that changed nothing ended well; there is nothing to merge, nothing failed.
  if ((status === 'REVIEW' || status === 'DONE') && reasons.length === 0) return null;
  return { status: terminalLine(status), reasons };
}

/** What the gate says of a fix run still waiting for it (not of a merged, discarded or running one). */
export function gateOf(run: RunDetails, events: readonly Record<string, unknown>[]): NotPassing | null {
  const status = run.state?.status;
  if (run.meta.type !== 'fix' || !status || ['ACTIVE', 'MERGED', 'DISCARDED'].includes(status)) return null;
  return notPassing(run, events);
}

/** `it ended ABORTED — agent_abort: …; runs.verify FAILED: …` in one line. Pure. */
export function notPassingLine(np: NotPassing): string {
  const what = np.status === 'REVIEW' ? 'it ended REVIEW but its checks failed' : `it ended ${np.status}`;
  return `${what}${np.reasons.length > 0 ? ` — ${np.reasons.join('; ')}` : ''}`;
}
