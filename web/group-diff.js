// A group page's diffs (web/group.js): each attempt's, fetched when first shown and again while it
// runs, and the hash of the patch the page drew (what "Merge this attempt" names).

import { api } from './api.js';
import { drawDiff } from './diff.js';
import { fingerprint, h } from './dom.js';

/** Each attempt's diff as last fetched, by run: `{ patch, in_progress, too_large, at, status }`. */
const diffs = new Map();
/** An ACTIVE attempt's diff is asked again at most this often (the server diffs at most once a second too). */
const LIVE_MS = 1000;

/** Drops the attempt's diff as drawn: the next draw fetches it again (the server said it changed). */
export const forgetDiff = (a) => diffs.delete(a.run);

/** The hash of the attempt's patch as this page drew it, or null (none drawn: too large, in progress). */
export const shownSha = (a) => (a.run ? (diffs.get(a.run)?.patch_sha256 ?? null) : null);

/** The attempt's diff: fetched when first shown, and again (at most once a second) while it runs. */
export async function fetchDiff(group, a) {
  if (!a.run) return;
  const kept = diffs.get(a.run);
  const live = a.status === 'ACTIVE';
  if (kept && kept.status === a.status && (!live || Date.now() - kept.at < LIVE_MS)) return;
  try {
    const d = await api('GET', `/api/groups/${group.id}/attempts/${a.attempt}/diff`);
    diffs.set(a.run, { ...d, at: Date.now(), status: a.status });
  } catch (e) {
    diffs.set(a.run, { patch: null, error: e.message, at: Date.now(), status: a.status });
  }
}

export function diffBox(a) {
  const d = a.run ? diffs.get(a.run) : null;
  const note = !d
    ? 'Not started.'
    : d.error
      ? `Could not read the diff: ${d.error}`
      : d.too_large
        ? `The diff is too large to show here: agentbox diff ${a.id}`
        : !d.patch
          ? 'No changes.'
          : d.in_progress
            ? 'Changes so far (in progress)'
            : 'Changes';
  const target = h('div', {
    class: 'attempt-diff',
    'data-key': `diff-${a.attempt}`,
    'data-sig': fingerprint(`${note}\n${d?.patch ?? ''}`),
  });
  target.append(h('p', { class: 'muted' }, note));
  if (d?.patch) {
    const box = h('div', { class: 'attempt-diff-body' });
    target.append(box);
    queueMicrotask(() => drawDiff(box, d.patch, `attempt ${a.attempt}`));
  }
  return target;
}
