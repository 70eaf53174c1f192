// The patch a person saw is recorded as shown (src/ledger/reviewed.ts: `merge --yes` compares it
// with what it applies) by the page saying so, once it has drawn the patch where the person can
// see it: POST /api/runs/<id>/shown with its hash (src/web/shown.ts). Reading the run records
// nothing, so a tab in the background that redraws a new patch records it only when it is in
// front again, and then only if that patch is still the one on the page.
import { api } from './api.js';

/** The hash said last for each run, by id: a patch that comes back after another is said again. */
const told = new Map();
/** The patch drawn last, waiting for the tab to be in front. */
let waiting = null;

/** `run`'s patch was drawn (its `#diff` carries `data-sha256`): recorded as shown once seen. */
export function noteShown(run) {
  if (!run.patch_sha256) return;
  waiting = { id: run.id, sha: run.patch_sha256 };
  if (document.visibilityState === 'visible') tell();
}

document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') tell();
});

function tell() {
  const w = waiting;
  waiting = null;
  if (!w || told.get(w.id) === w.sha) return;
  // Only a patch still on the page: the person may have gone elsewhere since it was drawn.
  if (document.getElementById('diff')?.dataset.sha256 !== w.sha) return;
  told.set(w.id, w.sha);
  // A patch that changed meanwhile is refused (409): the redraw that follows draws and tells the new one.
  api('POST', `/api/runs/${encodeURIComponent(w.id)}/shown`, { patch_sha256: w.sha }).catch(() => {
    if (told.get(w.id) === w.sha) told.delete(w.id);
  });
}
