// An ACTIVE fix run's changes so far (GET /api/runs/<run>/diff, in_progress: true), marked
// "in progress". run.js calls liveDiffSection on every draw of the run (each live update): the
// section is one element kept across draws, asked again at most once a second, and once more after
// the last update (the server diffs again only when the run's stream has grown).
import { api } from './api.js';
import { diffSection } from './diff.js';
import { h } from './dom.js';

const EVERY_MS = 1000;
let held = null;

/** The "Changes so far" section of run `run` (its page's data), as elements to draw. */
export function liveDiffSection(run) {
  if (held?.id !== run.id) {
    clearTimeout(held?.timer);
    held = { id: run.id, el: newSection(run.id), last: 0, timer: undefined, shown: '' };
  }
  ask(held);
  return [held.el];
}

function newSection(id) {
  // data-sig: dom.js's draw keeps this element whole while the page is drawn again.
  return h(
    'section',
    { id: 'live-diff', 'data-sig': `live-${id}` },
    h('h2', {}, 'Changes so far ', h('span', { class: 'badge s-ACTIVE', id: 'in-progress' }, 'in progress')),
    h('p', { class: 'muted', id: 'live-diff-note' }, 'Reading the worktree…'),
    h('div', { id: 'live-diff-body' }),
  );
}

/** At most one request a second; a draw in between is answered by one request when the second is up. */
function ask(state) {
  if (state.timer !== undefined) return;
  const wait = Math.max(0, state.last + EVERY_MS - Date.now());
  state.timer = setTimeout(async () => {
    state.timer = undefined;
    state.last = Date.now();
    try {
      show(state, await api('GET', `/api/runs/${encodeURIComponent(state.id)}/diff`));
    } catch (e) {
      note(state, `Could not read the worktree: ${e.message}`);
    }
  }, wait);
}

function show(state, diff) {
  if (!diff.in_progress) return; // the run ended: the page draws its final patch itself
  const files = diff.files.length === 1 ? '1 file' : `${diff.files.length} files`;
  note(
    state,
    diff.too_large
      ? `The worktree's changes (${files}) are too large to show here: agentbox diff ${diff.id}`
      : diff.patch
        ? `The worktree's changes against ${diff.base.slice(0, 12)} (${files}), as of ${new Date().toLocaleTimeString()}; the final diff comes when the run ends.`
        : 'No changes yet.',
  );
  const body = state.el.querySelector('#live-diff-body');
  if (state.shown === diff.patch) return;
  state.shown = diff.patch;
  // diffSection's own heading is left out: this section has its own, marked in progress.
  body.replaceChildren(...(diff.patch ? diffSection(diff.patch).slice(1) : []));
}

function note(state, text) {
  state.el.querySelector('#live-diff-note').textContent = text;
}
