/** The hooks bench's sessions, checked: the timed ones, and the preflight that proves the hooks fire as configured. */
import { isDeepStrictEqual } from 'node:util';
import type { Expected } from '../hooks-lib.js';
import { CALLS, HISTORY_KEPT, PREFLIGHT_CALLS } from './config.js';
import { MIXES, PROBES } from './fixture.js';
import { runOnce } from './session.js';
import { type Mix, type RunResult, VARIANTS, type Variant } from './variants.js';

export const fmtCounts = (m: Map<string, number>) =>
  [...m]
    .filter(([, n]) => n > 0)
    .map(([e, n]) => `${e} ${n}`)
    .join(', ') || 'none';

/** The endpoint saw exactly the hook calls the settings call for (SessionEnd: 0 or 1). */
function checkHandled(what: string, r: RunResult, expected: Expected): void {
  const seen = new Map([...r.handled].filter(([e]) => e !== 'SessionEnd'));
  const want = new Map([...expected.handled].filter(([, n]) => n > 0));
  const same = seen.size === want.size && [...want].every(([e, n]) => seen.get(e) === n);
  if (!same || (r.handled.get('SessionEnd') ?? 0) > 1) {
    throw new Error(`${what}: the endpoint saw ${fmtCounts(r.handled)}; expected ${fmtCounts(want)}`);
  }
}

/** A timed session: every call succeeded, nothing refused, the hooks fired as the settings say. */
export async function timedRun(
  variant: Variant,
  mix: Mix,
  count = CALLS,
  sandbox = false,
): Promise<RunResult> {
  const calls = Array.from({ length: count }, (_, n) => mix.call(n));
  const { result: r, expected, supervisor } = await runOnce(variant, mix, calls, { sandbox });
  const what = `${variant.name}${sandbox ? ' + sandbox' : ''} / ${mix.name} × ${count}`;
  const errors = r.toolErrors.filter(Boolean).length;
  if (r.toolErrors.length !== count || errors > 0) {
    throw new Error(`${what}: ${r.toolErrors.length} tool results (${errors} errors), expected ${count}`);
  }
  if (r.denials.length > 0)
    throw new Error(`${what}: the endpoint refused: ${r.denials.slice(0, 3).join('; ')}`);
  checkHandled(what, r, expected);
  if (supervisor) {
    if (supervisor.end?.kind !== 'complete')
      throw new Error(
        `${what}: the supervisor did not let the run complete: ${JSON.stringify(supervisor.end)}`,
      );
    if (supervisor.history.length !== Math.min(count, HISTORY_KEPT))
      throw new Error(`${what}: the supervisor's history holds ${supervisor.history.length} tool calls`);
  }
  return r;
}

/**
 * Preflight (and warm-up): every variant × mix once with --include-hook-events, a few mix calls and
 * the probes, comparing which hooks fired how often (and which calls the endpoint refused) with what
 * the settings say. Proves the settings were accepted (one bad entry makes Claude Code drop a whole
 * settings source without a word) and that every `if` condition fires where intended, and only there.
 */
export async function preflight(): Promise<string[]> {
  const notes: string[] = [];
  for (const mix of MIXES) {
    for (const variant of VARIANTS) {
      const calls = [...Array.from({ length: PREFLIGHT_CALLS }, (_, n) => mix.call(n)), ...PROBES];
      const { result: r, expected } = await runOnce(variant, mix, calls, { hookEvents: true });
      const what = `preflight ${variant.name} / ${mix.name}`;
      const want = new Map([...expected.responses].filter(([, n]) => n > 0));
      const seen = r.hookResponses;
      const same = seen.size === want.size && [...want].every(([e, n]) => seen.get(e) === n);
      if (!same) {
        throw new Error(
          `${what}: hook responses ${fmtCounts(seen)}; the settings call for ${fmtCounts(want)}`,
        );
      }
      const refused = expected.denied.filter(Boolean).length;
      if (!isDeepStrictEqual(r.toolErrors, expected.denied) || r.denials.length !== refused) {
        throw new Error(
          `${what}: tool errors ${JSON.stringify(r.toolErrors)}, endpoint refusals ${r.denials.length}; ` +
            `expected refusals ${JSON.stringify(expected.denied)} (${r.denials.join('; ')})`,
        );
      }
      checkHandled(what, r, expected);
      notes.push(`  ${variant.name} / ${mix.name}: ${fmtCounts(seen)}; refused ${refused}`);
    }
  }
  return notes;
}
