// A fix run's review on its page (issue 39), as on GitHub: a line of the diff clicked (or focused,
// then Enter) opens a comment box under it; the pending comments are listed, editable and
// removable, and sent with an overall message as one "Request changes" (POST
// /api/runs/<run>/revise, `agentbox revise --detach`); a follow-up sends a message alone.
import { api } from './api.js';
import { lineHref } from './deep-link.js';
import { h, toast } from './dom.js';
import { errorPanel, errorText } from './errors.js';

/** Pending comments and the typed messages, by run: kept across live redraws until sent. */
const reviews = new Map();
const sending = new Set();

const reviewOf = (id) => {
  if (!reviews.has(id)) reviews.set(id, { comments: [], message: '', followUp: '', error: null });
  return reviews.get(id);
};

/** A run the page can revise: a fix run of here, waiting for review. */
export const offersRevise = (run) =>
  run.meta.type === 'fix' &&
  run.state?.status === 'REVIEW' &&
  !run.meta.origin &&
  Boolean(run.state?.session_id);

/**
 * Each line of the change as it leaves the file (the new side) made a comment button, once
 * diff2html has drawn `target`; the comments already pending shown under their lines.
 */
export function enableLineComments(target, run, redraw) {
  if (!offersRevise(run)) return;
  for (const { cell, file, line } of newLines(target)) {
    cell.setAttribute('tabindex', '0');
    cell.setAttribute('role', 'button');
    cell.setAttribute('aria-label', `Comment on ${file} line ${line}`);
    cell.classList.add('commentable');
    // A context line's cell shows both numbers; its name says the new one. The old one is drawn
    // by CSS (access.css) so the button's text is its name's number (axe: label-content-name-mismatch).
    const old = cell.querySelector('.line-num1');
    if (old?.textContent.trim()) {
      old.dataset.num = old.textContent.trim();
      old.textContent = '';
    }
    const open = () => openForm(cell.closest('tr'), run, file, line, redraw);
    cell.addEventListener('click', open);
    cell.addEventListener('keydown', (e) => {
      if (e.key !== 'Enter' && e.key !== ' ') return;
      e.preventDefault();
      open();
    });
  }
  showInline(target, run);
}

/** The new side's numbered lines: unified (line-num2) or the right half of a split diff. */
function newLines(target) {
  const out = [];
  for (const wrapper of target.querySelectorAll('.d2h-file-wrapper')) {
    const name = wrapper.querySelector('.d2h-file-name')?.textContent?.trim() ?? '';
    const file = name.includes('→') ? name.split('→').pop().trim() : name;
    const unified = [...wrapper.querySelectorAll('td.d2h-code-linenumber')].map((td) => [
      td,
      td.querySelector('.line-num2'),
    ]);
    const sides = wrapper.querySelectorAll('.d2h-file-side-diff');
    const split = sides.length === 2 ? [...sides[1].querySelectorAll('td.d2h-code-side-linenumber')] : [];
    for (const [cell, num] of [...unified, ...split.map((td) => [td, td])]) {
      const line = Number(num?.textContent?.trim());
      if (Number.isInteger(line) && line > 0) out.push({ cell, file, line });
    }
  }
  return out;
}

function openForm(row, run, file, line, redraw) {
  const next = row.nextElementSibling;
  if (next?.classList.contains('review-form')) {
    next.querySelector('textarea')?.focus();
    return;
  }
  const label = `Your comment on ${file} line ${line}`;
  const box = h('textarea', { rows: 3, 'aria-label': label, class: 'review-text' });
  const close = () => {
    form.remove();
    row.querySelector('[role="button"]')?.focus();
  };
  const add = () => {
    const text = box.value.trim();
    if (!text) return box.focus();
    reviewOf(run.id).comments.push({ file, line, text });
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
      h('a', { href: lineHref(file, 'R', line), class: 'deep-link' }, 'Link to this line'),
    ),
  );
  row.after(form);
  box.focus();
}

/** The pending comments under their lines, as they read now. */
export function showInline(target, run) {
  if (!target || !offersRevise(run)) return;
  for (const old of target.querySelectorAll('tr.review-comment')) old.remove();
  const lines = newLines(target);
  for (const c of reviewOf(run.id).comments) {
    const at = lines.find((l) => l.file === c.file && l.line === c.line);
    const row = at?.cell.closest('tr');
    if (!row) continue;
    row.after(
      h('tr', { class: 'review-comment' }, h('td', { colspan: row.children.length }, `💬 ${c.text}`)),
    );
  }
}

/** The "Review" section: the pending comments, the overall message, Request changes, a follow-up. */
export function reviewSection(run, redraw) {
  if (!offersRevise(run)) return [];
  const review = reviewOf(run.id);
  const send = async (label, button, body, done) => {
    if (sending.has(run.id)) return;
    sending.add(run.id);
    review.error = null;
    try {
      const r = await api('POST', `/api/runs/${run.id}/revise`, body);
      done();
      toast(`revision ${r.revision} of ${run.name} started`);
    } catch (e) {
      review.error = { label, button, text: errorText(e) };
    } finally {
      sending.delete(run.id);
    }
    await redraw();
  };
  const busy = sending.has(run.id) ? 'true' : undefined;
  return [
    h('h2', { id: 'review-title' }, 'Review'),
    h(
      'section',
      { id: 'review', 'aria-labelledby': 'review-title' },
      h(
        'p',
        { class: 'muted', id: 'review-how' },
        'Click a line of the change (or Tab to its number and press Enter) to comment on it.',
      ),
      pendingList(review, redraw),
      h('label', { for: 'review-message' }, 'Overall message'),
      h(
        'textarea',
        {
          id: 'review-message',
          rows: 3,
          oninput: (e) => {
            review.message = e.target.value;
          },
        },
        review.message,
      ),
      h(
        'button',
        {
          id: 'request-changes',
          class: 'primary',
          'aria-busy': busy,
          onclick: () =>
            send(
              'Request changes',
              'request-changes',
              { message: review.message, comments: review.comments },
              () => {
                review.comments = [];
                review.message = '';
              },
            ),
        },
        `Request changes${review.comments.length ? ` (${review.comments.length} comment${review.comments.length === 1 ? '' : 's'})` : ''}`,
      ),
      h('label', { for: 'follow-up' }, 'Follow-up (a message with no line)'),
      h(
        'textarea',
        {
          id: 'follow-up',
          rows: 2,
          oninput: (e) => {
            review.followUp = e.target.value;
          },
        },
        review.followUp,
      ),
      h(
        'button',
        {
          id: 'send-follow-up',
          'aria-busy': busy,
          onclick: () =>
            send('Send follow-up', 'send-follow-up', { message: review.followUp }, () => {
              review.followUp = '';
            }),
        },
        'Send follow-up',
      ),
      review.error
        ? errorPanel(
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
          )
        : null,
    ),
  ];
}

function pendingList(review, redraw) {
  if (review.comments.length === 0)
    return h('p', { class: 'muted', id: 'pending-none' }, 'No line comments yet.');
  return h(
    'ul',
    { id: 'pending-comments' },
    review.comments.map((c, i) =>
      h(
        'li',
        { 'data-key': `c-${c.file}:${c.line}:${i}` },
        h('label', { for: `pending-${i}` }, `${c.file}:${c.line}`),
        h(
          'textarea',
          {
            id: `pending-${i}`,
            rows: 2,
            oninput: (e) => {
              c.text = e.target.value;
            },
            onchange: () => redraw(),
          },
          c.text,
        ),
        h(
          'button',
          {
            class: 'remove-comment',
            'aria-label': `Remove the comment on ${c.file} line ${c.line}`,
            onclick: async () => {
              review.comments.splice(i, 1);
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
