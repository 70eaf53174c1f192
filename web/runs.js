// The runs list (#/): filters, one row per run, and the banner of runs an interruption left.
import { api } from './api.js';
import { age, badge, count, doing, draw, h, main, select, toast, usd } from './dom.js';
import { enableNotifications } from './notify.js';

const STATUSES = [
  'ACTIVE',
  'REVIEW',
  'DONE',
  'MERGED',
  'CRASHED',
  'ABORTED',
  'FAILED',
  'STALLED',
  'DISCARDED',
];
const TYPES = ['scout', 'plan', 'fix', 'review', 'interactive'];

/** Runs per page of the list; the server answers at most 500 a request (src/web/runs.ts). */
const PAGE = 100;
const SERVER_MAX = 500;

/**
 * The filters and how many runs are shown outlive a redraw: the list is drawn again on every
 * change of the ledger. `focus`: the row to focus once drawn (the first one "Show more" brought).
 */
const listState = { status: '', type: '', q: '', shown: PAGE, focus: -1 };

/** Draws the list; `redraw` draws the current view again (a filter changed, runs recovered). */
export async function showRuns(redraw) {
  const data = await fetchRuns(listState.shown);
  // In place (dom.js draw): a live update keeps the focus, the text being typed in the search box.
  draw(main, [
    h('h1', {}, 'Runs'),
    // Filled by the answer below alone: the list's redraws keep it (a constant data-sig).
    h('div', { id: 'recover-slot', 'data-sig': '' }),
    filters(redraw),
    data.runs.length ? runsTable(data.runs) : emptyNote(redraw),
    h('p', { class: 'muted', id: 'runs-count' }, `${data.runs.length} of ${data.total}`),
    moreButton(data, redraw),
  ]);
  // The page's own rows (draw keeps the rows already there, not the ones just built).
  if (listState.focus >= 0) main.querySelectorAll('tbody tr')[listState.focus]?.focus();
  listState.focus = -1;
  // Asked once the list is shown, never waited for: the server answers one request at a time.
  recoverBanner(redraw).then((b) => {
    const slot = document.getElementById('recover-slot');
    if (slot) draw(slot, [b]);
  });
}

/** The newest `count` runs that pass the filters, fetched by pages of at most SERVER_MAX. */
async function fetchRuns(count) {
  const params = new URLSearchParams();
  for (const key of ['status', 'type', 'q']) if (listState[key]) params.set(key, listState[key]);
  const runs = [];
  const seen = new Set();
  let total = 0;
  while (runs.length < count) {
    const limit = Math.min(SERVER_MAX, count - runs.length);
    params.set('offset', String(runs.length));
    params.set('limit', String(limit));
    const page = await api('GET', `/api/runs?${params}`);
    total = page.total;
    // A run started between two pages shifts the next one: it is not shown twice.
    for (const run of page.runs) {
      if (seen.has(run.name)) continue;
      seen.add(run.name);
      runs.push(run);
    }
    if (page.runs.length < limit) break;
  }
  return { runs, total };
}

/** "Show 100 more" under a list that has more runs than it shows. */
function moreButton(data, redraw) {
  const rest = data.total - data.runs.length;
  if (rest <= 0) return '';
  return h(
    'button',
    {
      id: 'runs-more',
      onclick: () => {
        listState.focus = data.runs.length;
        listState.shown = data.runs.length + PAGE;
        redraw();
      },
    },
    `Show ${Math.min(rest, PAGE)} more`,
  );
}

const filtered = () => Boolean(listState.status || listState.type || listState.q);

/** No row: no run at all, or none that passes the filters (then a way back to every run). */
function emptyNote(redraw) {
  if (!filtered())
    return h('p', { class: 'muted', id: 'runs-empty' }, 'No runs yet — start one from “New run”.');
  return h(
    'p',
    { class: 'muted', id: 'runs-empty' },
    'No run matches these filters. ',
    h(
      'button',
      {
        type: 'button',
        id: 'clear-filters',
        onclick: async () => {
          Object.assign(listState, { status: '', type: '', q: '', shown: PAGE });
          await redraw();
          // The button is gone with the filters: the keyboard goes back to the first of them.
          document.getElementById('f-status')?.focus();
        },
      },
      'Clear the filters',
    ),
  );
}

function filters(redraw) {
  const set = (key) => (value) => {
    listState[key] = value;
    // Another filter is another list: it starts again at its first page.
    listState.shown = PAGE;
    redraw();
  };
  return h(
    'div',
    { class: 'filters' },
    h('label', { for: 'f-status', class: 'muted' }, 'Status'),
    select('f-status', ['', ...STATUSES], listState.status, set('status')),
    h('label', { for: 'f-type', class: 'muted' }, 'Type'),
    select('f-type', ['', ...TYPES], listState.type, set('type')),
    h('input', {
      id: 'f-q',
      type: 'search',
      placeholder: 'search tasks',
      value: listState.q,
      'aria-label': 'search tasks',
      onchange: (e) => set('q')(e.target.value),
    }),
    h('button', { onclick: enableNotifications, title: 'tell me when a run needs me' }, 'Notify me'),
  );
}

function runsTable(runs) {
  return h(
    'table',
    { class: 'runs' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', {}, 'Status'),
        h('th', {}, 'Run'),
        h('th', { class: 'wide' }, 'Type'),
        h('th', {}, 'Task'),
        h('th', { class: 'num' }, 'Age'),
        h('th', { class: 'num wide' }, 'Cost'),
        h('th', { class: 'num wide', title: 'tool calls' }, 'Calls'),
      ),
    ),
    h('tbody', {}, runs.map(runRow)),
  );
}

function runRow(run) {
  const group = run.kind === 'group';
  const href = group ? `#/group/${run.id}` : `#/run/${run.id}`;
  const open = () => (location.hash = href);
  const now = run.now
    ? h('div', { class: 'now' }, `${doing(run.now)} · ${count(run.now.tool_calls, 'tool call')}`)
    : null;
  return h(
    'tr',
    {
      tabindex: '0',
      'data-run': run.name,
      'data-group': group ? run.name : undefined,
      'data-key': run.name,
      onclick: open,
      onkeydown: (e) => {
        if (e.key === 'Enter') open();
      },
    },
    h('td', {}, badge(run.status)),
    h('td', {}, h('a', { href }, run.id)),
    h('td', { class: 'wide' }, group ? `${run.type} ×${run.attempts.length}` : (run.type ?? '?')),
    h(
      'td',
      { class: 'task' },
      run.task,
      run.ran_on ? h('span', { class: 'origin' }, `ran on ${run.ran_on}`) : null,
      run.claimed_by
        ? h('span', { class: 'origin' }, ` · status and cost claimed by ${run.claimed_by}`)
        : null,
      // A group is one row (its attempts are on its page): "fix ×4 · 2 passed · $0.31".
      group ? h('div', { class: 'now group-label' }, run.label) : null,
      now,
    ),
    h('td', { class: 'num' }, age(run.started_at)),
    h('td', { class: 'num wide' }, usd(run.cost_usd)),
    h('td', { class: 'num wide' }, String(run.now?.tool_calls ?? run.tool_calls ?? '—')),
  );
}

/** Runs a crash or reboot interrupted (runs.restart_mode: ask): one button recovers them. */
async function recoverBanner(redraw) {
  const { runs } = await api('GET', '/api/recover').catch(() => ({ runs: [] }));
  if (runs.length === 0) return null;
  return h(
    'div',
    { class: 'panel warn', id: 'recover' },
    `${runs.length} run(s) were interrupted: ${runs.map((r) => `${r.run.slice(-6)} (${r.action.replace('_', ' ')})`).join(', ')}. `,
    h(
      'button',
      {
        onclick: async () => {
          if (!window.confirm('Run agentbox recover for them now?')) return;
          await api('POST', '/api/recover', {});
          toast('recovering in the background');
          redraw();
        },
      },
      'Recover',
    ),
  );
}
