// The run's steps and how long each took, above its transcript (#transcript-steps): runs.setup,
// each turn of the agent, each runs.verify — every figure from the run's own events.jsonl (the run
// page has them), none estimated. A tool call's own time is on its line in the transcript.
import { h } from './dom.js';
import { durationMark, SLOW_SHARE } from './duration.js';

const ms = (a, b) => Date.parse(b) - Date.parse(a);

/**
 * The steps in `events`, in order: `{ name, ms, ok }`. A turn is Claude Code's: from a prompt
 * (UserPromptSubmit; a headless run's start) or the supervisor's answer that sent the agent on, to the supervisor's answer
 * at the agent's next Stop (its checks, runs.verify among them, included). Pure.
 */
export function stepsOf(events) {
  const steps = [];
  let from = null;
  let turn = 0;
  for (const e of events) {
    if (typeof e.ts !== 'string') continue;
    if (e.event === 'setup_finished' && typeof e.duration_ms === 'number')
      steps.push({ name: `runs.setup ${e.command ?? ''}`.trim(), ms: e.duration_ms, ok: e.ok === true });
    else if (e.event === 'verify' && typeof e.duration_ms === 'number')
      steps.push({ name: 'runs.verify', ms: e.duration_ms, ok: e.ok === true });
    else if (e.event === 'UserPromptSubmit') from = e.ts;
    // A headless run has no UserPromptSubmit hook (src/endpoint/settings.ts): its prompt goes in as
    // its session starts (the stream's init line, logged as SessionStart), a resumed one's too.
    else if (e.event === 'SessionStart' && e.source !== 'compact') from = e.ts;
    else if (e.event === 'Stop' && typeof e.decision === 'string') {
      turn++;
      if (from) steps.push({ name: `turn ${turn} (${e.decision})`, ms: ms(from, e.ts), ok: true });
      from = e.ts;
    }
  }
  return steps.filter((s) => Number.isFinite(s.ms) && s.ms >= 0);
}

/** The bar's filled part; its width set through the CSSOM (the page's CSP allows no style attribute). */
function fill(share) {
  const el = h('span', { class: 't-bar-fill' });
  el.style.width = `${(share * 100).toFixed(1)}%`;
  return el;
}

/** How long the run took so far: its start to its end, or to now while it runs. */
export function runMsOf(run) {
  const start = Date.parse(run.state?.started_at ?? run.meta?.created_at ?? '');
  const end = run.state?.ended_at ? Date.parse(run.state.ended_at) : Date.now();
  return Number.isFinite(start) && end > start ? end - start : 0;
}

/** The steps as a list, each with a bar as wide as its share of the run; a slow one (SLOW_SHARE) in bold, its share in words. */
export function stepsList(steps, runMs) {
  if (steps.length === 0) return h('p', { id: 'transcript-steps', class: 't-steps-none', hidden: true });
  return h(
    'ol',
    { id: 'transcript-steps', class: 't-steps', 'aria-label': 'Steps and how long each took' },
    steps.map((s) => {
      const share = runMs > 0 ? Math.min(1, s.ms / runMs) : 0;
      const slow = share >= SLOW_SHARE;
      return h(
        'li',
        { class: `t-step${slow ? ' t-slow' : ''}${s.ok ? '' : ' t-step-failed'}` },
        h('span', { class: 't-step-name' }, s.name, s.ok ? '' : ' (failed)'),
        ' ',
        durationMark(s.ms, runMs),
        h('span', { class: 't-bar-track', 'aria-hidden': 'true' }, fill(share)),
      );
    }),
  );
}
