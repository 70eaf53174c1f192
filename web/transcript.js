// The run page's transcript (#transcript): what the agent said, each tool call with its input and
// result one click away, refusals counted and marked, the supervisor's decisions, corrections and
// injected messages, in order, with times. Paged by the API's cursor (docs/web-ui.md): the first
// page is drawn at once, the rest as the person scrolls or asks. Live: each redraw of the run page
// (an SSE `change`) asks only for what came after the last cursor and appends it; what is on the
// page is never drawn again, so an opened call stays open and the scroll stays where it is.
import { api } from './api.js';
import { h, main, pageKey } from './dom.js';
import { entryItem } from './transcript-entry.js';
import { searchBar } from './transcript-search.js';
import { runMsOf, stepsList, stepsOf } from './transcript-steps.js';

const FIRST = 200;
const PAGE = 500;
/** The pages asked for on the way down to a search's match: the API's largest. */
const REACH = 1000;

/** The state of each section on the page, by its element: a new page (another run) is a new one. */
const STATES = new WeakMap();

/**
 * The section run.js puts in the page. Its `data-sig` keeps it whole across the page's redraws
 * (dom.js draw): its content is this module's, added to, never replaced.
 */
export function transcriptSection(run) {
  return h('section', {
    id: 'transcript',
    class: 'transcript',
    'data-sig': `transcript-${run.name}`,
    'aria-labelledby': 'transcript-title',
  });
}

/** The first page, asked for while the run itself is (run.js), when this page has none yet. */
let early = null;

/** Called as the run page is asked for: its first page comes in the same round trip as the run. */
export function prefetchTranscript(ref) {
  if (document.getElementById('transcript') && main.dataset.page === pageKey()) return;
  early = { ref, page: api('GET', pageUrl(ref, '')).catch(() => null) };
}

/** The first page, or the one after `cursor`. */
const pageUrl = (run, cursor, limit = PAGE) =>
  `/api/runs/${encodeURIComponent(run)}/transcript?limit=${cursor ? `${limit}&after=${encodeURIComponent(cursor)}` : FIRST}`;

/** Called after each draw of the run page: the first page once, then what came since. */
export function followTranscript(run) {
  const el = document.getElementById('transcript');
  if (!el) return;
  let s = STATES.get(el);
  if (!s) {
    s = start(el, run);
    STATES.set(el, s);
  }
  s.active = run.state?.status === 'ACTIVE';
  s.ctx.runMs = runMsOf(run);
  // The steps grow above the list: a person following a live run at its end stays there.
  const stay = s.active && atBottom();
  const steps = stepsList(stepsOf(run.events ?? []), s.ctx.runMs);
  s.steps.replaceWith(steps);
  s.steps = steps;
  if (stay && !atBottom()) window.scrollTo(0, document.documentElement.scrollHeight);
  s.live.textContent = s.active ? 'live: new entries appear as the run writes them' : '';
  // While pages are left to load, the person's scrolling brings them; at the end, ask for more.
  if (!s.more) load(s);
}

function start(el, run) {
  const s = {
    run: run.name,
    cursor: '',
    more: false,
    loading: null,
    again: false,
    active: false,
    entries: 0,
    ctx: {
      refused: 0,
      callCount: 0,
      calls: new Map(),
      /** Where each entry is drawn, by id (transcript-search.js). */
      byId: new Map(),
      runMs: 0,
      whole: async (id) =>
        (await api('GET', `/api/runs/${encodeURIComponent(run.name)}/transcript/${encodeURIComponent(id)}`))
          .entry,
    },
  };
  s.count = h('span', { class: 't-count' }, 'loading…');
  s.refusals = h('span', { class: 't-refusals', id: 'transcript-refusals' });
  s.only = h('input', { type: 'checkbox', id: 'transcript-only-refused' });
  s.only.addEventListener('change', () => s.list.classList.toggle('t-only-refused', s.only.checked));
  s.live = h('span', { class: 't-live', role: 'status' });
  s.list = h('ol', { class: 't-list', id: 'transcript-list' });
  s.error = h('p', { class: 't-error', role: 'alert' });
  s.moreButton = h('button', { type: 'button', class: 't-more', hidden: true }, 'Show more');
  s.moreButton.addEventListener('click', () => load(s));
  s.steps = h('p', { hidden: true });
  s.reach = (id) => reach(s, id);
  s.search = searchBar(s);
  el.replaceChildren(
    h('h2', { id: 'transcript-title' }, 'Transcript'),
    s.steps,
    s.search.bar,
    h(
      'p',
      { class: 't-bar' },
      s.count,
      ' ',
      s.refusals,
      ' ',
      h('label', { class: 't-filter' }, s.only, ' only refusals'),
      ' ',
      s.live,
    ),
    s.list,
    s.error,
    s.moreButton,
  );
  // The next page comes by itself when "Show more" is about to scroll into view.
  if ('IntersectionObserver' in window)
    new IntersectionObserver((seen) => seen.some((x) => x.isIntersecting) && s.more && load(s), {
      rootMargin: '600px',
    }).observe(s.moreButton);
  return s;
}

/** The next page after the cursor, appended; one request at a time, one more if asked meanwhile. */
function load(s, limit = PAGE) {
  if (s.loading) {
    s.again = true;
    return s.loading;
  }
  s.loading = fetchPage(s, limit).finally(() => {
    s.loading = null;
    if (s.again) {
      s.again = false;
      if (!s.more) load(s);
    }
  });
  return s.loading;
}

/** The first page asked for early for this run, once; else null. */
function earlyPage(s) {
  const mine = early && !s.cursor && (s.run === early.ref || s.run.endsWith(early.ref));
  const page = mine ? early.page : null;
  early = null;
  return page;
}

/** Pages loaded until entry `id` is drawn, or the transcript ends, or a page brings nothing. */
async function reach(s, id) {
  if (s.loading) await s.loading;
  if (s.ctx.byId.has(id)) return;
  // Out of the layout while pages are added: laying out the whole growing list after each one
  // made a jump to the end of a 10,000-call run take tens of seconds.
  s.list.classList.add('t-reaching');
  try {
    while (!s.ctx.byId.has(id) && (s.more || !s.cursor)) {
      const before = s.entries;
      await load(s, REACH);
      if (s.entries === before) return;
    }
  } finally {
    s.list.classList.remove('t-reaching');
  }
}

async function fetchPage(s, limit) {
  let page;
  try {
    page = (await earlyPage(s)) ?? (await api('GET', pageUrl(s.run, s.cursor, limit)));
  } catch (e) {
    s.error.textContent = `Could not load the transcript: ${e.message} (it is asked again at the next update)`;
    return;
  }
  s.error.textContent = '';
  // Following the end: a person at the bottom of an ACTIVE run's page stays there.
  const follow = s.active && s.cursor && atBottom();
  const items = [];
  for (const e of page.entries) {
    const li = entryItem(e, s.ctx);
    if (li) items.push(li);
  }
  s.list.append(...items);
  s.search.marked(page.entries.map((e) => e.id));
  s.entries += page.entries.length;
  s.cursor = page.next;
  s.more = page.more;
  s.moreButton.hidden = !s.more;
  counts(s);
  if (follow && items.length) window.scrollTo(0, document.documentElement.scrollHeight);
}

const atBottom = () => window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 40;

function counts(s) {
  const calls = s.ctx.callCount;
  const sofar = s.more ? ' so far' : '';
  s.count.textContent = `${s.entries.toLocaleString()} entries · ${calls.toLocaleString()} tool call${calls === 1 ? '' : 's'}${sofar} ·`;
  s.refusals.textContent = `${s.ctx.refused} refused${sofar}`;
  s.refusals.classList.toggle('t-has-refusals', s.ctx.refused > 0);
}

/**
 * The entry named `id` on the page, its pages loaded one after another until it comes (a deep
 * link to entry 8,000 of a paged transcript, web/deep-link.js); null when the transcript ends
 * without it or a page cannot be read.
 */
export async function revealEntry(id) {
  const s = STATES.get(document.getElementById('transcript'));
  if (!s) return null;
  await reach(s, id);
  // A call's result is drawn in its call's entry: the link to it opens the call.
  return s.ctx.byId.get(id)?.li ?? null;
}
