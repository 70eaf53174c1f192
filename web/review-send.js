// Sending a run's review (web/review.js): once at a time per run, and only against the change it
// was written on — a comment made on an earlier version of the change is held back, and the server
// is told which patch the page drew (it refuses a review of another, 409).
import { api } from './api.js';
import { toast } from './dom.js';
import { errorText } from './errors.js';

/** The runs whose review is being sent. */
export const sending = new Set();

/** A comment's place as `agentbox revise --comment` takes it: `src/app.js:3`, `src/app.js:-3` (removed). */
export const placeText = (c) => `${c.file}:${c.side === 'old' ? '-' : ''}${c.line}`;

/**
 * A comment written on another version of the change than the one drawn now (a revision came
 * meanwhile): its line number may name another line, so it is shown apart, never under a line, and
 * not sent until the person removes it (and comments again where they mean).
 */
export const outdated = (c, run) => c.sha !== (run.patch_sha256 ?? null);

/**
 * Sends the review as the run's next revision (POST /api/runs/<id>/revise), once at a time per run;
 * `done` clears what was sent. A refusal stays on the page under the button that sent it.
 */
export function reviseSender(run, review, redraw) {
  return async (label, button, body, done) => {
    if (sending.has(run.id)) return;
    const old = (body.comments ?? []).length > 0 ? review.comments.filter((c) => outdated(c, run)) : [];
    if (old.length > 0) {
      review.error = {
        label,
        button,
        text: `${old.length === 1 ? 'A comment was' : `${old.length} comments were`} written on an earlier version of the change (${old.map(placeText).join(', ')}): its line may be another now. Remove it, and comment again on the line you mean; nothing was sent.`,
      };
      await redraw();
      return;
    }
    sending.add(run.id);
    review.error = null;
    try {
      // The patch this page drew: the server refuses the review if the run's change is another now.
      const shown = run.patch_sha256 ? { patch_sha256: run.patch_sha256 } : {};
      const r = await api('POST', `/api/runs/${run.id}/revise`, { ...body, ...shown });
      done();
      toast(`revision ${r.revision} of ${run.name} started`);
    } catch (e) {
      review.error = { label, button, text: errorText(e) };
    } finally {
      sending.delete(run.id);
    }
    await redraw();
  };
}
