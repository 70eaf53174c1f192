// The settings page (#/settings): what the page may change (supervisor, restart mode), what it
// only shows (commands, files), what awaits trust, and the templates editor.
import { api } from './api.js';
import { h, main, toast } from './dom.js';
import { templatesEditor } from './templates.js';

export async function showSettings(redraw) {
  const s = await api('GET', '/api/settings');
  const files = s.files.map((f) =>
    h('details', {}, h('summary', {}, `${f.scope}: ${f.path}`), h('pre', {}, f.text ?? '(no file)')),
  );
  main.replaceChildren(
    h('h1', {}, 'Settings'),
    ...awaitingTrust(s.awaiting_trust),
    settingsForm(s.effective, redraw),
    h('h2', {}, 'Templates'),
    await templatesEditor(),
    h('h2', {}, 'Files'),
    ...files,
  );
}

function settingsForm(e, redraw) {
  const form = h(
    'form',
    {
      class: 'grid',
      id: 'settings',
      onsubmit: async (ev) => {
        ev.preventDefault();
        const d = Object.fromEntries(new FormData(form).entries());
        const orNull = (v) => (v === '' ? null : v);
        try {
          await api('PUT', '/api/settings', {
            scope: d.scope,
            supervisor: {
              mode: orNull(d.mode),
              enabled: d.enabled === 'on',
              timeout_profile: orNull(d.timeout_profile),
            },
            // runs.verify and runs.setup run commands: the server never changes them (403).
            runs: { restart_mode: d.restart_mode },
          });
          toast('saved: it applies to the next run');
          redraw();
        } catch (err) {
          toast(`not saved: ${err.message}`);
        }
      },
    },
    ...fields(e),
    h('span'),
    h('button', { class: 'primary', type: 'submit' }, 'Save'),
  );
  return form;
}

function fields(e) {
  const options = (pairs, value) =>
    pairs.map(([m, l]) => h('option', { value: m, selected: m === value }, l));
  return [
    h('label', { for: 's-scope' }, 'Write to'),
    h(
      'select',
      { id: 's-scope', name: 'scope' },
      h('option', { value: 'project' }, 'this project (agentbox.yaml)'),
      h('option', { value: 'global' }, 'all projects (user config)'),
    ),
    h('label', { for: 's-enabled' }, 'Supervisor on'),
    h('input', { id: 's-enabled', name: 'enabled', type: 'checkbox', checked: e.supervisor.enabled }),
    h('label', { for: 's-mode' }, 'Supervisor mode'),
    h(
      'select',
      { id: 's-mode', name: 'mode' },
      options(
        ['claude', 'rules', 'off'].map((m) => [m, m]),
        e.supervisor.mode,
      ),
    ),
    h('label', { for: 's-profile' }, 'Timeout profile'),
    h(
      'select',
      { id: 's-profile', name: 'timeout_profile' },
      options(
        ['', 'standard', 'long', 'extended'].map((m) => [m, m || 'none']),
        e.supervisor.timeout_profile ?? '',
      ),
    ),
    h('label', { for: 's-restart' }, 'Interrupted runs'),
    h(
      'select',
      { id: 's-restart', name: 'restart_mode' },
      options(
        [
          ['ask', 'ask (the page offers to recover them)'],
          ['auto', 'auto (agentbox recover when the UI starts)'],
          ['off', 'off'],
        ],
        e.runs.restart_mode,
      ),
    ),
    h('label', { for: 's-verify' }, 'Verify command'),
    h('input', { id: 's-verify', value: e.runs.verify ?? '', placeholder: '(none)', readOnly: true }),
    h('label', { for: 's-setup' }, 'Setup command'),
    h('input', { id: 's-setup', value: e.runs.setup ?? '', placeholder: '(none)', readOnly: true }),
    h('span'),
    h(
      'small',
      {},
      'Commands (verify, setup, notify) and the sandbox are changed in agentbox.yaml or your user config only: the page never runs what its token could set.',
    ),
  ];
}

/** What this repository carries that no run uses before `agentbox trust` (only a terminal grants it). */
function awaitingTrust(entries) {
  if (!entries.length) return [];
  return [
    h('h2', {}, 'Awaiting your trust'),
    h(
      'p',
      { id: 'awaiting-trust' },
      'This repository carries these entries; no run uses them until you run `agentbox trust` in a terminal (the page cannot grant trust).',
    ),
    h(
      'ul',
      {},
      entries.map((t) => h('li', {}, h('code', {}, `${t.file} ${t.key}`), ': ', t.text)),
    ),
  ];
}
