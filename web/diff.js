// A fix run's patch drawn by diff2html (served from the package), unified or split, in the page's
// theme: diff2html's "auto" follows prefers-color-scheme as app.css does (its default, "light",
// drew dark-mode text on pale green); a page that sets <html data-theme> has the diff follow that.
import { h } from './dom.js';

/** Kept across redraws: the person's choice holds while the run changes. */
let diffMode = 'line-by-line';
let diff2html;

/** diff2html (300 KB) is loaded when a diff is first drawn, not with every page. */
function loadDiff2Html() {
  diff2html ??= new Promise((resolve) =>
    document.head.append(h('script', { src: '/assets/diff2html.js', onload: resolve, onerror: resolve })),
  );
  return diff2html;
}

/**
 * `where`: whose diff it is (`attempt 2`), in the name of each of its scrolling boxes; `after`:
 * what to add once it is drawn (a run in review's line comments, review.js).
 */
export async function drawDiff(target, patch, where = '', after = () => {}) {
  // A live update that kept the diff already shown (same data-sig) drew this one for nothing.
  if (!target.isConnected) return;
  await loadDiff2Html();
  if (!window.Diff2HtmlUI) {
    target.replaceChildren(h('pre', {}, patch));
    return;
  }
  const ui = new window.Diff2HtmlUI(target, patch, {
    drawFileList: true,
    matching: 'lines',
    outputFormat: diffMode,
    highlight: true,
    colorScheme: theme(),
  });
  ui.draw();
  ui.highlightCode();
  reachable(target, where);
  after(target);
}

/**
 * diff2html's boxes that scroll sideways (a file's diff; each side of a split one), made Tab stops
 * with a name: the keyboard's arrow keys then scroll the lines they clip (axe:
 * scrollable-region-focusable), and app.css shows where the focus is.
 */
function reachable(target, where) {
  for (const file of target.querySelectorAll('.d2h-file-wrapper')) {
    const name = file.querySelector('.d2h-file-name')?.textContent?.trim() ?? 'a file';
    const boxes = file.querySelectorAll('.d2h-file-diff, .d2h-file-side-diff');
    boxes.forEach((box, i) => {
      const side = boxes.length === 2 ? (i === 0 ? ' (before)' : ' (after)') : '';
      box.setAttribute('tabindex', '0');
      box.setAttribute('role', 'region');
      box.setAttribute('aria-label', `${where ? `${where}: ` : ''}changes to ${name}${side}`);
    });
  }
}

/** 'light' or 'dark' when the page has its theme set by hand, else 'auto' (the system's). */
function theme() {
  const chosen = document.documentElement.dataset.theme;
  return chosen === 'light' || chosen === 'dark' ? chosen : 'auto';
}

/** What a Tab stop can be: the first of them after the diff is where "Skip the diff" goes. */
const TABBABLE = 'a[href], button, input, select, textarea, summary, [tabindex="0"]';

/** Moves the focus to the first Tab stop after `target` (the Review's box, the report…). */
function skipPast(target) {
  const next = [...document.querySelectorAll(TABBABLE)].find(
    (el) => target.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING && !target.contains(el),
  );
  next?.focus();
}

/**
 * The "Changes" section: its heading, the unified/split toggle, a "Skip the diff" button for the
 * keyboard (past however many files it has) and the diff, drawn once shown.
 */
export function diffSection(patch, after = undefined) {
  const target = h('div', { id: 'diff' });
  const toggle = h(
    'button',
    {
      onclick: () => {
        diffMode = diffMode === 'line-by-line' ? 'side-by-side' : 'line-by-line';
        drawDiff(document.getElementById('diff'), patch, '', after);
      },
    },
    'Unified / split',
  );
  const skip = h(
    'button',
    { id: 'skip-diff', onclick: () => skipPast(document.getElementById('diff')) },
    'Skip the diff',
  );
  queueMicrotask(() => drawDiff(target, patch, '', after));
  return [h('h2', {}, 'Changes'), h('div', { class: 'actions' }, toggle, ' ', skip), target];
}
