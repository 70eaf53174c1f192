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

export function showNew() {
  const key = newKey();
  const start = h('button', { class: 'primary', type: 'submit' }, 'Start');
  const failed = errorSlot();
  const form = h(
    'form',
    {
      class: 'grid',
      id: 'new-run',
      onsubmit: async (e) => {
        e.preventDefault();
        // Disabled until answered: a double click submits once.
        if (start.disabled) return;
        start.disabled = true;
        failed.clear();
        const data = Object.fromEntries(new FormData(form).entries());
        for (const k of Object.keys(data)) if (data[k] === '') delete data[k];
        try {
          const r = await api('POST', '/api/runs', data, { 'idempotency-key': key });
          // What the repository carries that this run left out until `agentbox trust`.
          toast(r.notice ? `started ${r.run}\n${r.notice}` : `started ${r.run}`);
          location.hash = `#/run/${String(r.run).slice(-6)}`;
        } catch (err) {
          start.disabled = false;
          failed.show('Start', err, start);
        }
      },
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
    h('span'),
    start,
    h('span'),
    failed.el,
  );
  main.replaceChildren(h('h1', {}, 'New run'), form);
}
