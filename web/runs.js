// The runs list (#/): filters, one row per run, and the banner of runs an interruption left.
import { api } from './api.js';
import { age, badge, doing, draw, h, main, select, toast, usd } from './dom.js';
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

/** The filters outlive a redraw: the list is drawn again on every change of the ledger. */
const listState = { status: '', type: '', q: '' };

/** Draws the list; `redraw` draws the current view again (a filter changed, runs recovered). */
export async function showRuns(redraw) {
  const params = new URLSearchParams({ limit: '100' });
  for (const [k, v] of Object.entries(listState)) if (v) params.set(k, v);
  const data = await api('GET', `/api/runs?${params}`);
  // In place (dom.js draw): a live update keeps the focus, the text being typed in the search box.
  draw(main, [
    h('h1', {}, 'Runs'),
    // Filled by the answer below alone: the list's redraws keep it (a constant data-sig).
    h('div', { id: 'recover-slot', 'data-sig': '' }),
    filters(redraw),
    data.runs.length ? runsTable(data.runs) : h('p', { class: 'muted' }, emptyText(data.total)),
    h('p', { class: 'muted' }, `${data.runs.length} of ${data.total}`),
  ]);
  // Asked once the list is shown, never waited for: the server answers one request at a time.
  recoverBanner(redraw).then((b) => {
    const slot = document.getElementById('recover-slot');
    if (slot) draw(slot, [b]);
  });
}

const emptyText = (total) => (total === 0 ? 'No runs yet — start one from “New run”.' : 'No run matches.');

function filters(redraw) {
  const set = (key) => (value) => {
    listState[key] = value;
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
  const open = () => (location.hash = `#/run/${run.id}`);
  const now = run.now
    ? h('div', { class: 'now' }, `${doing(run.now)} · ${run.now.tool_calls} tool calls`)
    : null;
  return h(
    'tr',
    {
      tabindex: '0',
      'data-run': run.name,
      'data-key': run.name,
      onclick: open,
      onkeydown: (e) => {
        if (e.key === 'Enter') open();
      },
    },
    h('td', {}, badge(run.status)),
    h('td', {}, h('a', { href: `#/run/${run.id}` }, run.id)),
    h('td', { class: 'wide' }, run.type ?? '?'),
    h(
      'td',
      { class: 'task' },
      run.task,
      run.ran_on ? h('span', { class: 'origin' }, `ran on ${run.ran_on}`) : null,
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
