// The new-run form (#/new): a run started as `agentbox <type> run` would start it.
import { api } from './api.js';
import { h, main, toast } from './dom.js';
import { errorSlot } from './errors.js';

/**
 * One key per opened form, sent as `Idempotency-Key`: a second submit of the same form (a double
 * click, a retry after a lost answer) gets the run the first one started (docs/web-ui.md).
 * getRandomValues, not randomUUID: the page may be served on a non-loopback --host (no secure context).
 */
function newKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** What the form sends: empty fields left out; a group's fields only with more than one attempt. */
function formData(form) {
  const data = Object.fromEntries(new FormData(form).entries());
  for (const k of Object.keys(data)) if (data[k] === '') delete data[k];
  // The field is a number from 1 to 16 (the browser checks it before the submit).
  if (!(Number(data.attempts) > 1)) {
    for (const k of ['attempts', 'models', 'max_parallel', 'first_pass']) delete data[k];
  } else if (data.first_pass !== undefined) data.first_pass = true;
  return data;
}

/**
 * "Attempts" (1–16): more than one starts a group of fix runs side by side (`fix --attempts N`),
 * and then the models to spread over them, how many run at once and "stop at the first pass".
 */
function attemptFields() {
  const extra = h(
    'div',
    { class: 'group-fields', id: 'group-fields', hidden: true },
    h('label', { for: 'n-models' }, 'Models'),
    h('input', { id: 'n-models', name: 'models', placeholder: 'optional: a,b — spread over the attempts' }),
    h('label', { for: 'n-parallel' }, 'At once'),
    h('input', {
      id: 'n-parallel',
      name: 'max_parallel',
      type: 'number',
      min: '1',
      max: '16',
      placeholder: 'default runs.max_parallel',
    }),
    h('label', { for: 'n-first' }, 'First pass'),
    h(
      'span',
      {},
      h('input', { id: 'n-first', name: 'first_pass', type: 'checkbox' }),
      ' stop the others once one passes runs.verify',
    ),
  );
  const attempts = h('input', {
    id: 'n-attempts',
    name: 'attempts',
    type: 'number',
    min: '1',
    max: '16',
    value: '1',
    oninput: (e) => {
      extra.hidden = !(Number(e.target.value) > 1);
    },
  });
  return [h('label', { for: 'n-attempts' }, 'Attempts'), attempts, extra];
}

/** The untrusted-settings notice of a group just started, by group id, for its page to keep showing. */
export const startNotices = new Map();

/** Each field the server named marked invalid (and described by its message); the others cleared. */
function markFields(form, problems) {
  for (const el of form.querySelectorAll('[aria-invalid]')) {
    el.removeAttribute('aria-invalid');
    el.removeAttribute('aria-describedby');
  }
  for (const p of problems) {
    const el = form.elements[p.field];
    if (!el?.setAttribute) continue;
    el.setAttribute('aria-invalid', 'true');
    el.setAttribute('aria-describedby', 'start-error');
  }
  form.querySelector('[aria-invalid]')?.focus();
}

/** The new-run form sent: the run's (or group's) page on success, each bad field marked otherwise. */
async function submitNew(e, form, { key, start, failed }) {
  e.preventDefault();
  // Disabled until answered: a double click submits once.
  if (start.disabled) return;
  start.disabled = true;
  failed.clear();
  const data = formData(form);
  try {
    const r = await api('POST', '/api/runs', data, { 'idempotency-key': key });
    const started = r.group ?? r.run;
    // What the repository carries that this run left out until `agentbox trust`.
    // It stays on the run's page (its trust_required event) and the group's (startNotice).
    toast(`started ${started}`);
    if (r.group && r.notice) startNotices.set(String(started).slice(-6), r.notice);
    location.hash = `#/${r.group ? 'group' : 'run'}/${String(started).slice(-6)}`;
  } catch (err) {
    start.disabled = false;
    markFields(form, err.data?.fields ?? []);
    failed.show('Start', err, start);
  }
}

export function showNew() {
  const key = newKey();
  const start = h('button', { class: 'primary', type: 'submit' }, 'Start');
  const failed = errorSlot('start-error');
  const form = h(
    'form',
    {
      class: 'grid',
      id: 'new-run',
      // The server checks every field and names each bad one; the browser's check stops at the first.
      novalidate: true,
      onsubmit: (e) => submitNew(e, form, { key, start, failed }),
    },
    h('label', { for: 'n-type' }, 'Type'),
    h(
      'select',
      { id: 'n-type', name: 'type' },
      ['fix', 'scout', 'plan', 'review'].map((t) => h('option', { value: t }, t)),
    ),
    h('label', { for: 'n-task' }, 'Task'),
    h('textarea', { id: 'n-task', name: 'task', required: true }),
    h('label', { for: 'n-model' }, 'Model'),
    h('input', { id: 'n-model', name: 'model', placeholder: 'default from the config' }),
    h('label', { for: 'n-supervisor' }, 'Supervisor'),
    h(
      'select',
      { id: 'n-supervisor', name: 'supervisor' },
      ['', 'claude', 'rules', 'off'].map((t) => h('option', { value: t }, t || 'default')),
    ),
    h('label', { for: 'n-timeout' }, 'Timeout'),
    h('input', { id: 'n-timeout', name: 'timeout', placeholder: 'e.g. 45m' }),
    h('label', { for: 'n-cost' }, 'Budget (USD)'),
    h('input', { id: 'n-cost', name: 'max_cost', inputmode: 'decimal', placeholder: 'e.g. 2.50' }),
    ...attemptFields(),
    h('span'),
    start,
    h('span'),
    failed.el,
  );
  main.replaceChildren(h('h1', {}, 'New run'), form);
}
