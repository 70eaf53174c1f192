// How long a step of a run took, as the run page says it (web/transcript-entry.js for a tool
// call or a verification, web/transcript-steps.js for setup, turns and verifications).
import { h } from './dom.js';

/**
 * A step that took this share of the run or more is slow. A share, not a number of seconds: 40 s
 * is nothing in an hour-long run and most of a one-minute one. A tenth: a run has tens of steps,
 * and one that alone took a tenth of it is where its time went.
 */
export const SLOW_SHARE = 0.1;

/** `850 ms`, `1.2 s`, `3 min 4 s`: a duration as a person reads it. */
export function durationText(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 59_950) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** A duration as an element: a slow one in bold, its share of the run said in words (not colour alone). */
export function durationMark(ms, runMs) {
  const share = runMs > 0 ? ms / runMs : 0;
  const slow = share >= SLOW_SHARE;
  return h(
    'span',
    { class: `t-dur${slow ? ' t-slow' : ''}` },
    slow ? `${durationText(ms)} · slow: ${Math.round(share * 100)}% of the run` : durationText(ms),
  );
}
