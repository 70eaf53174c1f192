// A fix run's patch drawn by diff2html (served from the package), unified or split, in the page's
// theme: diff2html's "auto" follows prefers-color-scheme as app.css does (its default, "light",
// drew dark-mode text on pale green); a page that sets <html data-theme> has the diff follow that.
import { linkLines } from './deep-link.js';
import { drawnAtOnce, splitPatch } from './diff-collapse.js';
import { h, pageKey, visible } from './dom.js';

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
 * The files opened by "Load diff", by page, diff (a group's attempts share a page) and name: a
 * live redraw or the split toggle keeps them open.
 */
const expanded = new Set();
const keyOf = (where, name) => `${pageKey()}\0${where}\0${name}`;
const expandedHere = (where, files) =>
  new Set(files.filter((f) => expanded.has(keyOf(where, f.name))).map((f) => f.name));

/** Each diff box's draw, awaited by a deep link to one of its lines (run-place.js). */
const DRAWN = new WeakMap();
export const diffDrawn = (target) => DRAWN.get(target) ?? Promise.resolve();

const options = (drawFileList) => ({
  drawFileList,
  matching: 'lines',
  outputFormat: diffMode,
  highlight: true,
  colorScheme: theme(),
});

/**
 * `where`: whose diff it is (`attempt 2`), in the name of each of its scrolling boxes; `after`:
 * what to add once it is drawn (a run in review's line comments, review.js). A large or generated
 * file is drawn as its header with "Load diff" (diff-collapse.js).
 */
export async function drawDiff(target, raw, where = '', after = () => {}) {
  // A live update that kept the diff already shown (same data-sig) drew this one for nothing.
  if (!target.isConnected) return;
  // diff2html draws the text as it is: a bidi override in a line or a name would reorder what the
  // reviewer reads (Trojan Source). Every hidden control is shown (⟨U+202E⟩), as the terminal's
  // diff shows it escaped; a comment on a file with one in its name names it so.
  const patch = visible(raw);
  await loadDiff2Html();
  if (!window.Diff2HtmlUI) {
    target.replaceChildren(h('pre', {}, patch));
    return;
  }
  const files = splitPatch(patch);
  // The paths as the patch has them (not as drawn: a name shown escaped, or one holding ` → `,
  // named another file), for the comments on their lines (review-lines.js).
  const paths = splitPatch(raw).map((f) => f.name);
  const open = expandedHere(where, files);
  const folded = files.filter((f) => f.why && !open.has(f.name));
  draw(target, folded.length ? drawnAtOnce(files, open) : patch, true);
  const wrappers = target.querySelectorAll('.d2h-wrapper > .d2h-file-wrapper');
  const marked = () =>
    target.querySelectorAll('.d2h-wrapper > .d2h-file-wrapper').forEach((w, i) => {
      if (paths[i] !== undefined) w.dataset.path = paths[i];
    });
  const listed = target.querySelectorAll('.d2h-file-list-line');
  const named = (i) => wrappers[i]?.querySelector('.d2h-file-name')?.textContent.includes(files[i].name);
  // diff2html draws the files in the patch's order; should a name not match, nothing is collapsed.
  if (folded.length && !files.every((f, i) => !folded.includes(f) || named(i))) draw(target, patch, true);
  else
    files.forEach((file, i) => {
      if (folded.includes(file))
        collapse(wrappers[i], listed[i], file, () => expand(wrappers[i], file, where, after));
    });
  marked();
  finish(target, where, after);
}

function draw(target, patch, fileList) {
  const ui = new window.Diff2HtmlUI(target, patch, options(fileList));
  ui.draw();
  ui.highlightCode();
}

/** What every drawn file gets: named scroll boxes, the review's comment buttons, line links. */
function finish(root, where, after) {
  reachable(root, where);
  after(root);
  linkLines(root);
}

/** A collapsed file: its size in words and a "Load diff" button where its lines would be. */
function collapse(wrapper, listed, file, load) {
  const size = `+${file.added.toLocaleString()} −${file.removed.toLocaleString()} lines`;
  const why = file.why === 'generated' ? 'A generated file' : 'A large diff';
  const button = h('button', { type: 'button', class: 'd2h-load', onclick: load }, 'Load diff');
  wrapper.classList.add('d2h-collapsed');
  wrapper.dataset.collapsed = file.why;
  wrapper
    .querySelector('.d2h-file-diff, .d2h-files-diff')
    ?.replaceWith(h('div', { class: 'd2h-collapsed-body' }, `${why} (${size}) is not shown. `, button));
  const added = listed?.querySelector('.d2h-lines-added');
  const removed = listed?.querySelector('.d2h-lines-deleted');
  if (added) added.textContent = `+${file.added}`;
  if (removed) removed.textContent = `-${file.removed}`;
}

/** "Load diff": the file drawn alone and put in its header's place, focused; open from now on. */
function expand(wrapper, file, where, after) {
  if (!wrapper.isConnected) return null;
  expanded.add(keyOf(where, file.name));
  const box = h('div');
  draw(box, file.text, false);
  const drawn = box.querySelector('.d2h-file-wrapper');
  if (!drawn) return null;
  if (wrapper.dataset.path !== undefined) drawn.dataset.path = wrapper.dataset.path;
  finish(box, where, after);
  drawn.id = wrapper.id; // the file list's link to it
  wrapper.replaceWith(drawn);
  drawn.querySelector('.d2h-file-diff, .d2h-file-side-diff')?.focus();
  return drawn;
}

/** A collapsed file's "Load diff", pressed for a deep link to one of its lines. */
export function expandFile(wrapper) {
  wrapper.querySelector('button.d2h-load')?.click();
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
  DRAWN.set(
    target,
    new Promise((resolve) => queueMicrotask(() => resolve(drawDiff(target, patch, '', after)))),
  );
  return [h('h2', {}, 'Changes'), h('div', { class: 'actions' }, toggle, ' ', skip), target];
}
