// Search in the run page's transcript (#transcript-search). The server searches (GET
// /api/runs/<run>/transcript/search): the page holds only the pages drawn so far, and a long run's
// transcript is far larger than one. It answers the matching entries' ids in order; going to one
// not drawn yet loads pages down to it. A match is an entry; every occurrence in it is marked.
import { api } from './api.js';
import { h } from './dom.js';

/** The query as the server reads it: literal, any case (src/transcript/search.ts). */
const patternOf = (q) => new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gi');

/**
 * The search bar for the transcript state `s` (transcript.js): `s.ctx.byId` maps an entry id to
 * where it is drawn, `s.reach(id)` loads pages until it is. Returns the bar and `marked(ids)`,
 * called as new entries are drawn.
 */
export function searchBar(s) {
  const q = { text: '', matches: [], capped: false, at: -1, pattern: null, asked: 0 };
  const input = h('input', {
    type: 'search',
    id: 'transcript-search',
    autocomplete: 'off',
    'aria-describedby': 'transcript-search-count',
  });
  const count = h('span', { id: 'transcript-search-count', class: 't-search-count', role: 'status' });
  // Always enabled: with a new query in the box, either one searches, as Enter does.
  const prev = h('button', { type: 'button', id: 'transcript-search-prev' }, 'Previous');
  const next = h('button', { type: 'button', id: 'transcript-search-next' }, 'Next');
  const go = (step) => {
    if (input.value.trim() === '') return clear(s, q, count);
    if (input.value !== q.text) return ask(s, q, input.value, count);
    if (q.matches.length) show(s, q, (q.at + step + q.matches.length) % q.matches.length, count);
  };
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') {
      e.preventDefault();
      go(e.shiftKey ? -1 : 1);
    } else if (e.key === 'Escape' && input.value) {
      e.preventDefault();
      input.value = '';
      clear(s, q, count);
    }
  });
  prev.addEventListener('click', () => go(-1));
  next.addEventListener('click', () => go(1));
  const bar = h(
    'div',
    { class: 't-search', role: 'search', 'aria-label': 'Search the transcript' },
    h('label', { for: 'transcript-search' }, 'Search the transcript'),
    ' ',
    input,
    ' ',
    prev,
    ' ',
    next,
    ' ',
    count,
  );
  return { bar, marked: (ids) => markNew(s, q, ids) };
}

async function ask(s, q, text, count) {
  clearMarks(s, q);
  const asked = ++q.asked;
  Object.assign(q, { text, matches: [], capped: false, at: -1, pattern: patternOf(text) });
  count.textContent = 'searching…';
  let found;
  try {
    found = await api(
      'GET',
      `/api/runs/${encodeURIComponent(s.run)}/transcript/search?q=${encodeURIComponent(text)}`,
    );
  } catch (e) {
    if (asked === q.asked) count.textContent = `Search failed: ${e.message} — press Enter to try again`;
    q.text = '';
    return;
  }
  if (asked !== q.asked) return; // another search was asked meanwhile
  q.matches = found.matches;
  q.capped = found.capped;
  q.set = new Set(found.matches);
  if (q.matches.length === 0) {
    count.textContent = 'No match';
    return;
  }
  markNew(s, q, [...s.ctx.byId.keys()]);
  await show(s, q, 0, count);
}

/** Match `i` made the current one: drawn (pages loaded down to it), opened, in view. */
async function show(s, q, i, count) {
  q.at = i;
  const id = q.matches[i];
  const total = `${q.matches.length.toLocaleString()}${q.capped ? '+' : ''}`;
  count.textContent = `${(i + 1).toLocaleString()} of ${total}`;
  if (!s.ctx.byId.has(id)) {
    count.textContent = `${(i + 1).toLocaleString()} of ${total} (loading the transcript down to it…)`;
    await s.reach(id);
    if (q.at !== i || q.matches[i] !== id) return; // another match or search was asked meanwhile
    count.textContent = `${(i + 1).toLocaleString()} of ${total}`;
  }
  for (const el of s.list.querySelectorAll('.t-current')) el.classList.remove('t-current');
  for (const el of s.list.querySelectorAll('mark.t-hit-now')) el.classList.remove('t-hit-now');
  const where = s.ctx.byId.get(id);
  if (!where) return;
  where.li.classList.add('t-current');
  const marks = where.parts.flatMap((p) => [...p.querySelectorAll('mark.t-hit')]);
  for (const m of marks) m.classList.add('t-hit-now');
  // A call is opened when what matched is in its input or result, not only on its line.
  const details = where.li.querySelector('details');
  if (details && !details.open && marks.some((m) => details.contains(m) && !m.closest('summary')))
    details.open = true;
  (marks[0] ?? where.li).scrollIntoView({ block: 'center' });
}

/** Marks every occurrence in the entries `ids` that match (just drawn, or all on a new search). */
function markNew(s, q, ids) {
  if (!q.set || !q.pattern) return;
  for (const id of ids) {
    if (!q.set.has(id)) continue;
    const where = s.ctx.byId.get(id);
    if (!where) continue;
    where.li.classList.add('t-match');
    for (const part of where.parts) markText(part, q.pattern);
  }
}

/** Each occurrence of `pattern` in the text of `el` wrapped in <mark> (not in a time or a button). */
function markText(el, pattern) {
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT, {
    acceptNode: (n) =>
      n.parentElement.closest('time, button, mark') ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT,
  });
  const nodes = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) nodes.push(n);
  for (const node of nodes) {
    const text = node.data;
    pattern.lastIndex = 0;
    if (!pattern.test(text)) continue;
    pattern.lastIndex = 0;
    const out = [];
    let last = 0;
    for (let m = pattern.exec(text); m; m = pattern.exec(text)) {
      out.push(text.slice(last, m.index), h('mark', { class: 't-hit' }, m[0]));
      last = m.index + m[0].length;
    }
    out.push(text.slice(last));
    node.replaceWith(...out.filter((x) => x !== ''));
  }
}

function clearMarks(s) {
  for (const m of s.list.querySelectorAll('mark.t-hit')) {
    const parent = m.parentNode;
    m.replaceWith(m.textContent);
    parent.normalize();
  }
  for (const el of s.list.querySelectorAll('.t-match, .t-current'))
    el.classList.remove('t-match', 't-current');
}

function clear(s, q, count) {
  clearMarks(s, q);
  q.asked++;
  Object.assign(q, { text: '', matches: [], set: null, capped: false, at: -1, pattern: null });
  count.textContent = '';
}
