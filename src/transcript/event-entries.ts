import { isObject, type Json } from '../claude/stream/fields.js';
import { CUT_AT, type Entry } from './entry.js';

/**
 * The entry of one line of a run's events.jsonl, or null for what the transcript already shows
 * from claude's own lines (a hook's PostToolUse) or says nothing to a person. Pure; never throws.
 */
export function eventEntry(text: string, offset: number): Entry | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(value)) return null;
  const ts = typeof value.ts === 'string' && !Number.isNaN(Date.parse(value.ts)) ? value.ts : null;
  const base = { id: `e${offset}`, at: ts };
  const draft = draftOf(value);
  return draft ? ({ ...base, ...draft } as Entry) : null;
}

const s = (v: unknown): string =>
  (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v)).slice(0, CUT_AT);

/** Events that repeat what claude's own lines say, or are the supervisor's plumbing. */
const QUIET = new Set([
  'PostToolUse',
  'PostToolBatch',
  'UserPromptSubmit',
  'SessionStart',
  'SessionEnd',
  'Stop',
]);

function draftOf(e: Json): Record<string, unknown> | null {
  const event = s(e.event);
  // Written at the run's end from the stream: its tool_result shows the refusal in place. Not the
  // sandbox's hidden reads and the proxy's refused hosts, which agentbox saw beside the call: the
  // call ran, and its result says nothing of them (found by QA: "0 refused" over two).
  const besideTheCall = e.rule === 'read-fence' || e.rule === 'network';
  if (
    (event === 'refused' || event === 'human_gate_refused') &&
    typeof e.toolUseId === 'string' &&
    !besideTheCall
  )
    return null;
  if (event === 'refused' || event === 'human_gate_refused')
    return {
      kind: 'refusal',
      by: event === 'refused' ? s(e.source) || 'claude' : 'gate',
      tool: s(e.tool) || 'Bash',
      reason: s(e.reason),
    };
  if (e.decision === 'deny')
    return { kind: 'refusal', by: s(e.source) || 'guard', tool: s(e.tool), reason: s(e.reason) };
  if (event === 'budget') return { kind: 'budget', reason: s(e.reason) };
  if (event === 'verify')
    return {
      kind: 'verify',
      ok: e.ok === true,
      detail: s(e.detail),
      ...(typeof e.duration_ms === 'number' && e.duration_ms >= 0 ? { duration_ms: e.duration_ms } : {}),
    };
  if (event === 'violation')
    return { kind: 'violation', type: s(e.type), detail: s(e.detail), action: s(e.action) };
  if (typeof e.decision === 'string') return decisionOf(e);
  if (QUIET.has(event) || event === '') return null;
  return { kind: 'event', event, detail: detailOf(e) };
}

function decisionOf(e: Json): Record<string, unknown> {
  if (e.decision === 'inject') return { kind: 'inject', text: s(e.text) };
  if (e.decision === 'continue')
    return { kind: 'correction', source: s(e.source), reason: s(e.reason), text: s(e.text) };
  return { kind: 'decision', decision: s(e.decision), source: s(e.source), reason: s(e.reason) };
}

/** The rest of a lifecycle event in one short line: its fields but the name and time. */
function detailOf(e: Json): string {
  return Object.entries(e)
    .filter(([k]) => k !== 'event' && k !== 'ts')
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ')
    .slice(0, 300);
}
