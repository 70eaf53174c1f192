// Where a run's page goes once drawn (issue 40): the place its address names (a deep link,
// deep-link.js), else, for a run that failed, what failed (the server's `opens_at`: the failed
// runs.verify's entry, the violation, budget or abort that ended it, else the failure panel).
// Once per address: a live redraw never takes the person back there.
import { lineRow, markTarget, targetOf } from './deep-link.js';
import { diffDrawn, expandFile } from './diff.js';
import { toast } from './dom.js';
import { revealEntry } from './transcript.js';

/** The address whose place the page went to last; the panel it marked, if it was one. */
let reached = null;
let markedPanel = null;

/** Another page was opened: coming back to this run's address is a new visit, which goes there again. */
export function forgetPlace() {
  reached = null;
  markedPanel = null;
}

export async function goToPlace(run) {
  if (reached === location.hash) {
    keepPanelMark();
    return;
  }
  const hash = location.hash;
  reached = hash;
  markedPanel = null;
  const asked = targetOf(hash);
  const place = asked ?? run.opens_at;
  if (!place) return;
  const found = place.entry
    ? await entryOf(place.entry)
    : place.panel
      ? panelOf(place.panel)
      : await lineOf(place);
  // The person went somewhere else while the transcript's pages came.
  if (location.hash !== hash) return;
  if (found) {
    markTarget(...found);
    markedPanel = place.panel ?? null;
  } else if (asked)
    toast(
      asked.entry
        ? `Entry ${asked.entry} is not in this run's transcript`
        : `${asked.file} line ${asked.line} is not in this run's diff`,
    );
}

async function entryOf(id) {
  const li = await revealEntry(id);
  if (!li) return null;
  // Shown even when "only refusals" hid it; a tool call opened on its input and result.
  const only = document.getElementById('transcript-only-refused');
  if (only?.checked && !li.classList.contains('t-refused')) only.click();
  const call = li.querySelector('details.t-call');
  if (call) call.open = true;
  return [li];
}

/**
 * A redraw draws the panels anew (the transcript's entries stay): the marked one keeps its mark,
 * and the focus when it had it (it went with the old element), without scrolling there again.
 */
function keepPanelMark() {
  const panel = markedPanel && document.getElementById(markedPanel);
  if (!panel || panel.classList.contains('is-target')) return;
  panel.classList.add('is-target');
  panel.setAttribute('tabindex', '-1');
  if (document.activeElement === document.body || !document.activeElement)
    panel.focus({ preventScroll: true });
}

function panelOf(id) {
  const panel = document.getElementById(id);
  return panel ? [panel] : null;
}

/** The line's row, its file drawn first when it was collapsed; focus on its link or comment button. */
async function lineOf(want) {
  const diff = document.getElementById('diff');
  if (!diff) return null;
  await diffDrawn(diff);
  for (const wrapper of diff.querySelectorAll('.d2h-collapsed')) {
    const name = wrapper.querySelector('.d2h-file-name')?.textContent?.trim() ?? '';
    if (name === want.file || name.endsWith(`→ ${want.file}`)) expandFile(wrapper);
  }
  const row = lineRow(diff, want);
  if (!row) return null;
  return [row, row.querySelector('a.line-link, td.commentable') ?? row];
}
