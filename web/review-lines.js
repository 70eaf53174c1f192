// The lines of a drawn diff a person can comment on (web/review.js), as buttons the keyboard
// reaches without a Tab stop per line: each scrolling box of the diff (a file's; in the split view,
// each side's) is one Tab stop for its lines — a roving tabindex, as WAI-ARIA's grid and toolbar
// patterns do. Inside it the arrow keys, Page Up/Down, Home and End move between its lines; Enter
// or Space opens the comment box; Tab leaves for the next box. A 400-line diff is then two stops
// (the box, its line), not 400.

import { visible } from './dom.js';
import { rove } from './roving.js';

/**
 * Each commentable line of `target`'s diff, by scrolling box, in order: `{ cell, file, line,
 * side }`. The new side's numbered lines (`side: 'new'`); a removed line (`side: 'old'`) by its
 * number before the change — in the unified view its row's first number, in the split view a line
 * of the left side. A line the change kept is commented on its new side only.
 */
export function diffLines(target) {
  const boxes = [];
  for (const wrapper of target.querySelectorAll('.d2h-file-wrapper')) {
    // The path as the patch has it (diff.js); a name as drawn is for the eye (escaped, `a → b`).
    const name = wrapper.querySelector('.d2h-file-name')?.textContent?.trim() ?? '';
    const file = wrapper.dataset.path ?? (name.includes('→') ? name.split('→').pop().trim() : name);
    const sides = [...wrapper.querySelectorAll('.d2h-file-side-diff')];
    if (sides.length === 2) {
      boxes.push(sideLines(sides[0], file, 'old'), sideLines(sides[1], file, 'new'));
      continue;
    }
    const lines = [];
    for (const cell of wrapper.querySelectorAll('td.d2h-code-linenumber')) {
      const now = number(cell.querySelector('.line-num2'));
      const old = number(cell.querySelector('.line-num1'));
      if (now) lines.push({ cell, file, line: now, side: 'new' });
      else if (old && cell.classList.contains('d2h-del')) lines.push({ cell, file, line: old, side: 'old' });
    }
    boxes.push(lines);
  }
  return boxes.filter((lines) => lines.length > 0);
}

/** One side of a split diff: the new side's numbered lines, or the old side's removed ones. */
function sideLines(box, file, side) {
  const cells = box.querySelectorAll(
    side === 'old' ? 'td.d2h-code-side-linenumber.d2h-del' : 'td.d2h-code-side-linenumber',
  );
  return [...cells].flatMap((cell) => {
    const line = number(cell);
    return line ? [{ cell, file, line, side }] : [];
  });
}

const number = (el) => {
  const n = Number(el?.textContent?.trim());
  return Number.isInteger(n) && n > 0 ? n : 0;
};

/** `src/app.js line 3`, or `src/app.js line 3 (removed)` for the old side's; hidden controls shown. */
export const lineName = (l) => visible(`${l.file} line ${l.line}${l.side === 'old' ? ' (removed)' : ''}`);

/** Makes each line of `boxes` (diffLines) a comment button; `open(l)` opens its comment box. */
export function lineButtons(boxes, open) {
  for (const lines of boxes) {
    for (const l of lines) {
      const { cell } = l;
      cell.setAttribute('role', 'button');
      cell.setAttribute('aria-label', `Comment on ${lineName(l)}`);
      cell.classList.add('commentable');
      // A kept line's cell shows both numbers; its name says the new one. The old one is drawn by
      // CSS (access.css) so the button's text is its name's number (axe: label-content-name-mismatch).
      const old = l.side === 'new' ? cell.querySelector('.line-num1') : null;
      if (old?.textContent.trim()) {
        old.dataset.num = old.textContent.trim();
        old.textContent = '';
      }
      cell.addEventListener('click', () => open(l));
    }
    rove(
      lines.map((l) => l.cell),
      (e, i) => {
        if (e.key !== 'Enter' && e.key !== ' ') return;
        e.preventDefault();
        open(lines[i]);
      },
    );
  }
}

/**
 * Inserts `row` after `at`. In the split view, where each side is its own table, the other side
 * gets an empty row of the same height at the same place, so its lines stay beside their twins.
 */
export function insertRow(at, row) {
  at.after(row);
  const side = at.closest('.d2h-file-side-diff');
  const sides = side ? [...side.parentElement.querySelectorAll(':scope > .d2h-file-side-diff')] : [];
  const other = sides.find((s) => s !== side);
  if (!other) return;
  const index = [...at.parentElement.children].indexOf(at);
  const twinAt = other.querySelector('tbody')?.children[index];
  if (!twinAt) return;
  const twin = document.createElement('tr');
  twin.className = 'review-twin';
  twin.setAttribute('aria-hidden', 'true');
  twin.append(document.createElement('td'));
  twin.firstChild.colSpan = twinAt.children.length || 1;
  twinAt.after(twin);
  row.reviewTwin = twin;
  const keepHeight = () => {
    if (!row.isConnected) {
      twin.remove();
      observer.disconnect();
      return;
    }
    twin.style.height = `${row.getBoundingClientRect().height}px`;
  };
  const observer = new ResizeObserver(keepHeight);
  observer.observe(row);
  keepHeight();
}

/** Removes `row` and, in the split view, its empty twin on the other side. */
export function removeRow(row) {
  row.reviewTwin?.remove();
  row.remove();
}
