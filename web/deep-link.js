// Deep links (issue 40), as GitHub's `#L12`: an address that opens a run's page at one transcript
// entry or one line of its diff, scrolled there, marked and focused. The place follows the page's
// own hash: #/run/<id>/entry/<entry id>, #/run/<id>/line/<file>/R<n> (the line's new number) or
// L<n> (a removed line's old number). Each entry and each diff line number is a link there: a
// click puts it in the address bar and copies it. A failed run with no place asked for opens at
// what failed (the server's `opens_at`, src/web/opens-at.ts).
import { pageKey, toast } from './dom.js';
import { rove } from './roving.js';

/** The place a hash asks for on a run's page, or null. */
export function targetOf(hash = location.hash) {
  const [, page, id, kind, a, b] = hash.split('/');
  if (page !== 'run' || !id) return null;
  try {
    if (kind === 'entry' && a) return { entry: decodeURIComponent(a) };
    if (kind === 'line' && a && /^[LR][1-9]\d{0,6}$/.test(b ?? ''))
      return { file: decodeURIComponent(a), side: b[0], line: Number(b.slice(1)) };
  } catch {
    // A malformed escape (%E0%A4%A): no place, the page itself.
  }
  return null;
}

const entryHref = (id) => `${pageKey()}/entry/${encodeURIComponent(id)}`;
export const lineHref = (file, side, line) => `${pageKey()}/line/${encodeURIComponent(file)}/${side}${line}`;

/** The link of a transcript entry, beside its time. */
export function entryLink(id) {
  const a = document.createElement('a');
  a.className = 't-link deep-link';
  a.href = entryHref(id);
  a.setAttribute('aria-label', 'Link to this entry');
  a.textContent = '#';
  return a;
}

/**
 * Each line number of the files in `root` (drawn by diff2html) made a link to its line, except
 * where it is a comment button already (a run in review, web/review.js: nested controls would be
 * neither); there the comment box offers the link. The links of one scrolling box (a file's; in the
 * split view, each side's) are one Tab stop, the arrow keys moving among them (web/roving.js).
 */
export function linkLines(root) {
  if (!location.hash.startsWith('#/run/')) return;
  for (const wrapper of root.querySelectorAll('.d2h-file-wrapper')) {
    const file = fileOf(wrapper);
    const sides = wrapper.querySelectorAll('.d2h-file-side-diff');
    const boxes = new Map();
    for (const td of wrapper.querySelectorAll('td.d2h-code-linenumber, td.d2h-code-side-linenumber')) {
      if (td.classList.contains('commentable') || td.querySelector('a')) continue;
      const where = lineOf(td, sides);
      if (!where) continue;
      const a = document.createElement('a');
      a.className = 'line-link deep-link';
      a.href = lineHref(file, where.side, where.line);
      a.setAttribute(
        'aria-label',
        `Link to ${file} line ${where.line}${where.side === 'L' ? ' (removed)' : ''}`,
      );
      a.append(...td.childNodes);
      td.append(a);
      const box = [...sides].find((side) => side.contains(td)) ?? wrapper;
      boxes.set(box, [...(boxes.get(box) ?? []), a]);
    }
    for (const links of boxes.values()) rove(links);
  }
}

/** The file a diff2html wrapper shows: its name, the new one of a rename. */
export function fileOf(wrapper) {
  const name = wrapper.querySelector('.d2h-file-name')?.textContent?.trim() ?? '';
  return name.includes('→') ? name.split('→').pop().trim() : name;
}

/** A number cell's side and line: unified keeps both numbers in one cell, split one per side. */
function lineOf(td, sides) {
  const num = (el) => Number(el?.textContent?.trim());
  if (td.classList.contains('d2h-code-side-linenumber')) {
    const line = num(td);
    if (!Number.isInteger(line) || line < 1) return null;
    return { side: sides.length === 2 && sides[0].contains(td) ? 'L' : 'R', line };
  }
  const added = num(td.querySelector('.line-num2'));
  if (Number.isInteger(added) && added > 0) return { side: 'R', line: added };
  const removed = num(td.querySelector('.line-num1'));
  return Number.isInteger(removed) && removed > 0 ? { side: 'L', line: removed } : null;
}

/** The row of `file`'s line in `root`, or null. */
export function lineRow(root, want) {
  for (const wrapper of root.querySelectorAll('.d2h-file-wrapper')) {
    if (fileOf(wrapper) !== want.file) continue;
    const sides = wrapper.querySelectorAll('.d2h-file-side-diff');
    for (const td of wrapper.querySelectorAll('td.d2h-code-linenumber, td.d2h-code-side-linenumber')) {
      const at = lineOf(td, sides);
      if (at && at.side === want.side && at.line === want.line) return td.closest('tr');
    }
  }
  return null;
}

/** `el` marked as the place, scrolled to the middle of the screen and focused (one at a time). */
export function markTarget(el, focusable = el) {
  for (const old of document.querySelectorAll('.is-target')) old.classList.remove('is-target');
  el.classList.add('is-target');
  if (!focusable.matches('a, button, [tabindex]')) focusable.setAttribute('tabindex', '-1');
  el.scrollIntoView({ block: 'center' });
  focusable.focus({ preventScroll: true });
}

/** A click on a deep link: the address bar gets it (no redraw: the same page), the clipboard too. */
document.addEventListener('click', (e) => {
  const a = e.target instanceof Element ? e.target.closest('a.deep-link') : null;
  if (!a || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  history.pushState(null, '', a.getAttribute('href'));
  window.dispatchEvent(new HashChangeEvent('hashchange'));
  copy(location.href);
});

async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
    toast('Link copied');
  } catch {
    toast('Link in the address bar');
  }
}

/** Where the person was going when the server did not know this browser yet (web/login.js). */
const AFTER_LOGIN = 'agentbox.after-login';
const KEPT_MS = 10 * 60 * 1000;

/**
 * The token exchange sends the browser to `/`, without the place a link asked for: the login page
 * kept it, and the page goes there now (once, if it was kept in the last 10 minutes).
 */
export function restoreAfterLogin() {
  let kept = null;
  try {
    kept = JSON.parse(localStorage.getItem(AFTER_LOGIN) ?? 'null');
    localStorage.removeItem(AFTER_LOGIN);
  } catch {
    return;
  }
  const fresh = kept && typeof kept.hash === 'string' && Date.now() - kept.at < KEPT_MS;
  if (fresh && (location.hash === '' || location.hash === '#/') && /^#\/(run|group)\/\S+$/.test(kept.hash))
    history.replaceState(null, '', kept.hash);
}
