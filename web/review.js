// A fix run's review on its page (issue 39), as on GitHub: a line of the diff clicked (or reached
// by the keyboard, then Enter) opens a comment box under it; the pending comments are listed,
// editable and removable, and sent with an overall message as one "Request changes" (POST
// /api/runs/<run>/revise, `agentbox revise --detach`); a follow-up sends a message alone. Which
// lines are buttons, and how the keyboard moves among them: web/review-lines.js.
import { lineHref } from './deep-link.js';
import { h } from './dom.js';
import { errorPanel } from './errors.js';
import { diffLines, insertRow, lineButtons, lineName, removeRow } from './review-lines.js';
import { outdated, placeText, reviseSender, sending } from './review-send.js';
import { keep, reviewOf } from './review-store.js';

/** A run the page can revise: a fix run of here, waiting for review. */
export const offersRevise = (run) =>
  run.meta.type === 'fix' &&
  run.state?.status === 'REVIEW' &&
  !run.meta.origin &&
  Boolean(run.state?.session_id);

/** The same line: file, number and side. */
const samePlace = (a, b) => a.file === b.file && a.line === b.line && (a.side ?? 'new') === (b.side ?? 'new');

/**
 * Each line of the change a comment button once diff2html has drawn `target` (the new side's
 * lines, and the removed ones by their number before the change); the comments already pending
 * shown under their lines.
 */
export function enableLineComments(target, run, redraw) {
  if (!offersRevise(run)) return;
  lineButtons(diffLines(target), (l) => openForm(l, run, redraw));
  showInline(target, run);
}

function openForm(l, run, redraw) {
  const row = l.cell.closest('tr');
  const next = row.nextElementSibling;
  if (next?.classList.contains('review-form')) {
    next.querySelector('textarea')?.focus();
    return;
  }
  const box = h('textarea', {
    rows: 3,
    'aria-label': `Your comment on ${lineName(l)}`,
    class: 'review-text',
  });
  const close = () => {
    removeRow(form);
    l.cell.focus();
  };
  const add = () => {
    const text = box.value.trim();
    if (!text) return box.focus();
    const review = reviewOf(run.id);
    review.comments.push({
      file: l.file,
      line: l.line,
      ...(l.side === 'old' ? { side: 'old' } : {}),
      text,
      sha: run.patch_sha256 ?? null,
    });
    keep(review);
    close();
    redraw();
  };
  box.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') close();
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) add();
  });
  const form = h(
    'tr',
    { class: 'review-form' },
    h(
      'td',
      { colspan: row.children.length },
      box,
      h('button', { type: 'button', class: 'primary add-comment', onclick: add }, 'Add comment'),
      ' ',
      h('button', { type: 'button', onclick: close }, 'Cancel'),
      ' ',
      // The line number is this box's button here: the line's link is offered beside it.
      h(
        'a',
        { href: lineHref(l.file, l.side === 'old' ? 'L' : 'R', l.line), class: 'deep-link' },
        'Link to this line',
      ),
    ),
  );
  insertRow(row, form);
  box.focus();
}

/** The pending comments under their lines, as they read now. */
export function showInline(target, run) {
  if (!target || !offersRevise(run)) return;
  for (const old of target.querySelectorAll('tr.review-comment')) removeRow(old);
  const lines = diffLines(target).flat();
  for (const c of reviewOf(run.id).comments) {
    if (outdated(c, run)) continue;
    const row = lines.find((l) => samePlace(l, c))?.cell.closest('tr');
    if (!row) continue;
    insertRow(
      row,
      h('tr', { class: 'review-comment' }, h('td', { colspan: row.children.length }, `💬 ${c.text}`)),
    );
  }
}

/** The "Review" section: the pending comments, the overall message, Request changes, a follow-up. */
export function reviewSection(run, redraw) {
  if (!offersRevise(run)) return [];
  const review = reviewOf(run.id);
  const send = reviseSender(run, review, redraw);
  const busy = sending.has(run.id) ? 'true' : undefined;
  const comments = review.comments.length;
  return [
    h('h2', { id: 'review-title' }, 'Review'),
    h(
      'section',
      { id: 'review', 'aria-labelledby': 'review-title' },
      h(
        'p',
        { class: 'muted', id: 'review-how' },
        'Click a line of the change to comment on it. By the keyboard: Tab to a file’s lines, move with the arrow keys (Page Up/Down, Home, End), press Enter.',
      ),
      pendingList(review, run, redraw),
      ...sendBox(review, busy, {
        field: 'message',
        id: 'review-message',
        rows: 3,
        label: 'Overall message',
        button: 'request-changes',
        primary: true,
        action: 'Request changes',
        text: `Request changes${comments ? ` (${comments} comment${comments === 1 ? '' : 's'})` : ''}`,
        send: (label, button) =>
          send(
            label,
            button,
            {
              message: review.message,
              comments: review.comments.map(({ sha: _, ...c }) => c),
            },
            () => {
              review.comments = [];
              review.message = '';
              keep(review);
            },
          ),
      }),
      ...sendBox(review, busy, {
        field: 'followUp',
        id: 'follow-up',
        rows: 2,
        label: 'Follow-up (a message with no line)',
        button: 'send-follow-up',
        action: 'Send follow-up',
        text: 'Send follow-up',
        send: (label, button) =>
          send(label, button, { message: review.followUp }, () => {
            review.followUp = '';
            keep(review);
          }),
      }),
      reviewError(review, redraw),
    ),
  ];
}

/** The last refusal of a send, until dismissed (focus goes back to the button that sent it). */
function reviewError(review, redraw) {
  if (!review.error) return null;
  return errorPanel(
    review.error.label,
    review.error.text,
    async () => {
      const back = review.error.button;
      review.error = null;
      await redraw();
      document.getElementById(back)?.focus();
    },
    { id: 'review-error' },
    'review-error-text',
  );
}

/** A labelled box for one of the review's texts (`review[o.field]`, kept as typed) and its send button. */
function sendBox(review, busy, o) {
  return [
    h('label', { for: o.id }, o.label),
    h(
      'textarea',
      {
        id: o.id,
        rows: o.rows,
        oninput: (e) => {
          review[o.field] = e.target.value;
          keep(review);
        },
      },
      review[o.field],
    ),
    h(
      'button',
      {
        id: o.button,
        class: o.primary ? 'primary' : undefined,
        'aria-busy': busy,
        onclick: () => o.send(o.action, o.button),
      },
      o.text,
    ),
  ];
}

function pendingList(review, run, redraw) {
  if (review.comments.length === 0)
    return h('p', { class: 'muted', id: 'pending-none' }, 'No line comments yet.');
  return h(
    'ul',
    { id: 'pending-comments' },
    review.comments.map((c, i) =>
      h(
        'li',
        { 'data-key': `c-${placeText(c)}:${i}` },
        h(
          'label',
          { for: `pending-${i}` },
          `${placeText(c)}${c.side === 'old' ? ' (removed)' : ''}${outdated(c, run) ? ' — written on an earlier version of the change: remove it and comment again' : ''}`,
        ),
        h(
          'textarea',
          {
            id: `pending-${i}`,
            rows: 2,
            oninput: (e) => {
              c.text = e.target.value;
              keep(review);
            },
            onchange: () => redraw(),
          },
          c.text,
        ),
        h(
          'button',
          {
            class: 'remove-comment',
            'aria-label': `Remove the comment on ${lineName(c)}`,
            onclick: async () => {
              review.comments.splice(i, 1);
              keep(review);
              await redraw();
              document.getElementById('review-message')?.focus();
            },
          },
          'Remove',
        ),
      ),
    ),
  );
}
