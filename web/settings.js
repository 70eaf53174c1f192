// The settings page (#/settings): what the page may change (supervisor, restart mode), what it
// only shows (commands, files), what awaits trust, and the templates editor.
import { api } from './api.js';
import { h, main, toast } from './dom.js';
import { errorSlot } from './errors.js';
import { templatesEditor } from './templates.js';

export async function showSettings(redraw) {
  const s = await api('GET', '/api/settings');
  const trust = h('div', { id: 'settings-trust' }, ...awaitingTrust(s.awaiting_trust));
  const files = h('div', { id: 'settings-files' }, ...fileViews(s.files));
  // After a save, what it changed is shown: the files as written and what now awaits trust (the
  // form and the templates editor stay as the person left them).
  const afterSave = async () => {
    const now = await api('GET', '/api/settings');
    trust.replaceChildren(...awaitingTrust(now.awaiting_trust));
    files.replaceChildren(...fileViews(now.files));
    redraw();
  };
  main.replaceChildren(
    h('h1', {}, 'Settings'),
    trust,
    settingsForm(s.effective, afterSave),
    h('h2', {}, 'Templates'),
    await templatesEditor(),
    h('h2', {}, 'Files'),
    files,
  );
}

function fileViews(files) {
  return files.map((f) =>
    h('details', {}, h('summary', {}, `${f.scope}: ${f.path}`), h('pre', {}, f.text ?? '(no file)')),
  );
}

/** The settings the form changes: its field's name → the config's section and key. */
const KEYS = {
  enabled: ['supervisor', 'enabled'],
  mode: ['supervisor', 'mode'],
  timeout_profile: ['supervisor', 'timeout_profile'],
  restart_mode: ['runs', 'restart_mode'],
};

/** The form's values as settings: '' is null (back to the default), the checkbox a boolean. */
function values(form) {
  const out = {};
  for (const name of Object.keys(KEYS)) {
    const field = form.elements[name];
    out[name] = field.type === 'checkbox' ? field.checked : field.value === '' ? null : field.value;
  }
  return out;
}

function settingsForm(e, afterSave) {
  // What the page loaded (the effective config): only what the person changed from it is sent,
  // so a save never pins the rest into the file over the user config (runs.verify and runs.setup
  // run commands: the server never changes them, 403).
  let loaded;
  const failed = errorSlot();
  const save = h('button', { class: 'primary', type: 'submit' }, 'Save');
  const form = h(
    'form',
    {
      class: 'grid',
      id: 'settings',
      onsubmit: async (ev) => {
        ev.preventDefault();
        const now = values(form);
        const body = { scope: form.elements.scope.value };
        for (const [name, [section, key]] of Object.entries(KEYS)) {
          if (now[name] === loaded[name]) continue;
          body[section] = { ...body[section], [key]: now[name] };
        }
        if (Object.keys(body).length === 1) {
          toast('nothing changed: nothing saved');
          return;
        }
        failed.clear();
        try {
          const saved = await api('PUT', '/api/settings', body);
          loaded = now;
          const waiting = saved.awaiting_trust ?? [];
          toast(
            waiting.length > 0
              ? `saved; ${waiting.join(', ')} loosens your own settings: it applies once you run "agentbox trust" in a terminal`
              : 'saved: it applies to the next run',
          );
          await afterSave();
        } catch (err) {
          failed.show('Save', err, save);
        }
      },
    },
    ...fields(e),
    h('span'),
    save,
    h('span'),
    failed.el,
  );
  loaded = values(form);
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
      'This repository carries these entries (commands, and values looser than your own settings); no run uses them until you run `agentbox trust` in a terminal (the page cannot grant trust).',
    ),
    h(
      'ul',
      {},
      // `instead`: the person's own value a looser one would replace (src/trust/entries.ts).
      entries.map((t) =>
        h('li', {}, h('code', {}, `${t.file} ${t.key}`), ': ', t.text, t.instead ? ` (${t.instead})` : ''),
      ),
    ),
  ];
}
