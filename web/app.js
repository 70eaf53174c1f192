// agentbox ui: one small script, no framework. Every text from a run is put in the page with
// textContent; the only HTML from the server is a report already sanitised there (and the page's
// Content-Security-Policy runs no inline script whatever it holds). Talks to the JSON API only.

const CSRF = document.querySelector('meta[name="csrf"]').content;
const main = document.getElementById('main');
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
const ENDED = new Set(['REVIEW', 'DONE', 'CRASHED', 'ABORTED', 'FAILED']);

/** An element with attributes and children (strings become text nodes). */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat())
    if (c !== null && c !== undefined) el.append(c instanceof Node ? c : String(c));
  return el;
}

async function api(method, path, body) {
  const res = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers:
      body === undefined
        ? { 'x-agentbox-csrf': CSRF }
        : { 'content-type': 'application/json', 'x-agentbox-csrf': CSRF },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = new Error(data.error || `${res.status}`);
    err.status = res.status;
    err.data = data;
    throw err;
  }
  return data;
}

function toast(text) {
  const t = document.getElementById('toast');
  t.textContent = text;
  t.classList.add('show');
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => t.classList.remove('show'), 6000);
}

const badge = (status) =>
  h('span', { class: `badge s-${status || 'unknown'}`, 'data-status': status || '' }, status || '?');

/** `it ended ABORTED — agent_abort: …`: why a run did not pass (src/run/merge-gate.ts). */
const notPassingText = (np) =>
  `${np.status === 'REVIEW' ? 'it ended REVIEW but its checks failed' : `it ended ${np.status}`}${np.reasons.length ? ` — ${np.reasons.join('; ')}` : ''}`;

function age(iso) {
  if (!iso) return '';
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}
const usd = (n) => (n === null || n === undefined ? '—' : `$${n.toFixed(n < 1 ? 4 : 2)}`);

// ---- runs list ----------------------------------------------------------------------------------
const listState = { status: '', type: '', q: '' };

async function showRuns() {
  const params = new URLSearchParams({ limit: '100' });
  for (const [k, v] of Object.entries(listState)) if (v) params.set(k, v);
  const data = await api('GET', `/api/runs?${params}`);
  const filters = h(
    'div',
    { class: 'filters' },
    h('label', { for: 'f-status', class: 'muted' }, 'Status'),
    select('f-status', ['', ...STATUSES], listState.status, (v) => {
      listState.status = v;
      render();
    }),
    h('label', { for: 'f-type', class: 'muted' }, 'Type'),
    select('f-type', ['', ...TYPES], listState.type, (v) => {
      listState.type = v;
      render();
    }),
    h('input', {
      id: 'f-q',
      type: 'search',
      placeholder: 'search tasks',
      value: listState.q,
      'aria-label': 'search tasks',
      onchange: (e) => {
        listState.q = e.target.value;
        render();
      },
    }),
    h('button', { onclick: enableNotifications, title: 'tell me when a run needs me' }, 'Notify me'),
  );
  const rows = data.runs.map((run) => {
    const open = () => (location.hash = `#/run/${run.id}`);
    const now = run.now
      ? h(
          'div',
          { class: 'now' },
          `${run.now.tool ? `${run.now.tool} ${run.now.target ?? ''}` : 'waiting for the model'} · ${run.now.tool_calls} tool calls`,
        )
      : null;
    return h(
      'tr',
      {
        tabindex: '0',
        'data-run': run.name,
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
  });
  const table = rows.length
    ? h(
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
        h('tbody', {}, rows),
      )
    : h(
        'p',
        { class: 'muted' },
        data.total === 0 ? 'No runs yet — start one from “New run”.' : 'No run matches.',
      );
  const title = h('h1', {}, 'Runs');
  main.replaceChildren(
    title,
    filters,
    table,
    h('p', { class: 'muted' }, `${data.runs.length} of ${data.total}`),
  );
  // Asked once the list is shown, never waited for: the server answers one request at a time.
  recoverBanner().then((b) => {
    // Not when the list it belongs to was replaced meanwhile (that render asked for its own).
    if (b && title.isConnected) title.after(b);
  });
}

/** Runs a crash or reboot interrupted (runs.restart_mode: ask): one button recovers them. */
async function recoverBanner() {
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
          render();
        },
      },
      'Recover',
    ),
  );
}

function select(id, options, value, onChange) {
  return h(
    'select',
    { id, onchange: (e) => onChange(e.target.value) },
    options.map((o) => h('option', { value: o, selected: o === value }, o || 'any')),
  );
}

// ---- run detail ---------------------------------------------------------------------------------
async function showRun(id) {
  const run = await api('GET', `/api/runs/${encodeURIComponent(id)}`);
  const status = run.state?.status;
  const actions = h('div', { class: 'actions' });
  const act = (label, cls, confirmText, fn) =>
    actions.append(
      h(
        'button',
        {
          class: cls,
          'data-action': label.split(' ')[0].toLowerCase(),
          onclick: async () => {
            if (confirmText && !window.confirm(confirmText)) return;
            try {
              toast(await fn());
            } catch (e) {
              toast(`${label} failed: ${e.message}${e.data?.hint ? ` — ${e.data.hint}` : ''}`);
            }
            render();
          },
        },
        label,
      ),
    );
  // A run that did not pass (not REVIEW, or runs.verify failed) can be merged too, but the button
  // says so and the confirmation names its status first (as `agentbox merge` does).
  const failed = run.not_passing;
  if ((status === 'REVIEW' || failed) && run.files.includes('changes.patch')) {
    const sensitive = run.sensitive.length
      ? `\n\nSensitive changes:\n${run.sensitive.map((s) => `  ${s.path} (${s.kind})`).join('\n')}`
      : '';
    const warning = failed ? `This run did not pass: ${notPassingText(failed)}\n\n` : '';
    act(
      failed ? `Merge (${failed.status})` : 'Merge',
      failed ? 'danger' : 'primary',
      `${warning}Apply the changes of ${run.name} to your working tree and commit them${failed ? ' anyway' : ''}?${sensitive}`,
      async () => {
        const r = await api('POST', `/api/runs/${run.id}/merge`, {
          commit: true,
          allow_sensitive: run.sensitive.length > 0,
          force: Boolean(failed),
        });
        return `merged${r.commit ? ` — commit ${String(r.commit).slice(0, 12)}` : ''}`;
      },
    );
  }
  if (
    ['REVIEW', 'DONE', 'CRASHED', 'ABORTED', 'FAILED', 'STALLED'].includes(status) &&
    run.meta.type === 'fix'
  )
    act(
      'Discard',
      'danger',
      `Remove the worktree and branch of ${run.name}? Its folder and patch are kept.`,
      async () => {
        await api('POST', `/api/runs/${run.id}/discard`, {});
        return 'discarded';
      },
    );
  if (status === 'ACTIVE' && run.meta.type === 'interactive')
    act('Restart', '', `Restart claude in ${run.name}? Its session is resumed.`, async () => {
      await api('POST', `/api/runs/${run.id}/restart`, {});
      return 'restarting';
    });
  if (status === 'ACTIVE') {
    act('Stop', 'danger', `Stop ${run.name}? It ends ABORTED; its patch and report are kept.`, async () => {
      await api('POST', `/api/runs/${run.id}/stop`, {});
      return 'stopped';
    });
    act('Inject', '', null, async () => {
      const text = window.prompt('Message for the agent (it gets it at its next stop):');
      if (!text) return 'nothing sent';
      await api('POST', `/api/runs/${run.id}/inject`, { text });
      return 'queued';
    });
  }
  if (['CRASHED', 'ABORTED', 'STALLED'].includes(status))
    act('Resume', '', null, async () => {
      const instructions = window.prompt('More instructions (optional):') ?? '';
      await api('POST', `/api/runs/${run.id}/resume`, instructions ? { instructions } : {});
      return 'resuming';
    });

  const parts = [
    h('p', {}, h('a', { href: '#/' }, '← Runs')),
    h('h1', {}, `${run.meta.type}: `, h('span', { class: 'task' }, run.meta.task.split('\n')[0])),
    h(
      'p',
      {},
      badge(status),
      ' ',
      h('code', {}, run.name),
      ' ',
      h(
        'span',
        { class: 'muted' },
        `· ${run.state?.tool_calls ?? 0} tool calls · ${usd(run.state?.usage ? (run.state.usage.agent?.cost_usd ?? 0) + (run.state.usage.supervisor?.cost_usd ?? 0) : null)}`,
      ),
    ),
  ];
  if (run.now)
    parts.push(
      h(
        'p',
        { class: 'now', id: 'now' },
        `now: ${run.now.tool ? `${run.now.tool} ${run.now.target ?? ''}` : 'waiting for the model'} · ${run.now.tool_calls} tool calls · iteration ${run.now.iteration}${run.now.max_iterations ? `/${run.now.max_iterations}` : ''} · started ${age(run.now.since)} ago`,
      ),
    );
  if (run.meta.type === 'interactive' && status === 'ACTIVE') {
    const session = await api('GET', `/api/runs/${run.id}/session`).catch(() => null);
    if (session)
      parts.push(
        h(
          'p',
          { class: 'now', id: 'session' },
          `session: ${session.idle ? 'waiting for you' : 'working'} · claude pid ${session.pid ?? '—'} · restarts ${session.restart_count ?? 0} · queued ${session.queued ?? 0}`,
        ),
      );
  }
  if (run.state?.failure)
    parts.push(h('div', { class: 'panel warn' }, `${run.state.failure.kind}: ${run.state.failure.message}`));
  parts.push(actions);
  if (run.not_passing)
    parts.push(
      h(
        'div',
        { class: 'panel warn', id: 'not-passing' },
        h('strong', {}, 'This run did not pass — read why before you merge: '),
        notPassingText(run.not_passing),
      ),
    );
  if (run.sensitive.length || run.refused.length) {
    parts.push(
      h(
        'div',
        { class: 'panel warn', id: 'sensitive' },
        h('strong', {}, 'Sensitive changes — read them before you merge'),
        h(
          'ul',
          {},
          [...run.refused, ...run.sensitive].map((s) =>
            h('li', {}, `${s.path} — ${s.kind}${s.detail ? ` (${s.detail})` : ''}`),
          ),
        ),
      ),
    );
  }
  if (run.nested?.length) {
    parts.push(
      h(
        'div',
        { class: 'panel warn', id: 'nested' },
        h('strong', {}, 'Nested repositories — never followed, left out of the patch, set aside'),
        h(
          'ul',
          {},
          run.nested.map((n) => h('li', {}, `${n.path}/ (.git ${n.kind}) → ${n.moved_to ?? 'not moved'}`)),
        ),
      ),
    );
  }
  if (run.patch) {
    const target = h('div', { id: 'diff' });
    const toggle = h(
      'button',
      {
        onclick: () => {
          diffMode = diffMode === 'line-by-line' ? 'side-by-side' : 'line-by-line';
          drawDiff(target, run.patch);
        },
      },
      'Unified / split',
    );
    parts.push(h('h2', {}, 'Changes'), toggle, target);
    queueMicrotask(() => drawDiff(target, run.patch));
  } else if (run.patch_too_large)
    parts.push(h('p', { class: 'muted' }, `The patch is too large to show here: agentbox diff ${run.id}`));
  if (run.report_html !== null) {
    const report = h('div', { class: 'panel report', id: 'report' });
    report.innerHTML = run.report_html; // sanitised by the server (sanitize-html allow-list)
    parts.push(h('h2', {}, 'Report'), report);
  }
  parts.push(
    h('h2', {}, 'Timeline'),
    h('ol', { class: 'timeline', id: 'timeline' }, run.events.map(eventItem)),
  );
  if (run.prompt) parts.push(h('details', {}, h('summary', {}, 'Prompt'), h('pre', {}, run.prompt)));
  main.replaceChildren(...parts);
}

let diffMode = 'line-by-line';
let diff2html;
/** diff2html (300 KB) is loaded when a diff is first drawn, not with every page. */
function loadDiff2Html() {
  diff2html ??= new Promise((resolve) =>
    document.head.append(h('script', { src: '/assets/diff2html.js', onload: resolve, onerror: resolve })),
  );
  return diff2html;
}
async function drawDiff(target, patch) {
  await loadDiff2Html();
  if (!window.Diff2HtmlUI) {
    target.replaceChildren(h('pre', {}, patch));
    return;
  }
  const ui = new window.Diff2HtmlUI(target, patch, {
    drawFileList: true,
    matching: 'lines',
    outputFormat: diffMode,
    highlight: true,
  });
  ui.draw();
  ui.highlightCode();
}

function eventItem(e) {
  const when = e.ts ? new Date(e.ts).toLocaleTimeString() : '';
  const what = e.detail ?? e.reason ?? e.text ?? e.tool ?? e.decision ?? '';
  return h(
    'li',
    {},
    h('span', { class: 'muted' }, when),
    ' ',
    h('span', { class: 'ev' }, e.event ?? '?'),
    ' ',
    typeof what === 'string' ? what : JSON.stringify(what),
  );
}

// ---- new run ------------------------------------------------------------------------------------
function showNew() {
  const form = h(
    'form',
    {
      class: 'grid',
      id: 'new-run',
      onsubmit: async (e) => {
        e.preventDefault();
        const data = Object.fromEntries(new FormData(form).entries());
        for (const k of Object.keys(data)) if (data[k] === '') delete data[k];
        try {
          const r = await api('POST', '/api/runs', data);
          // What the repository carries that this run left out until `agentbox trust`.
          toast(r.notice ? `started ${r.run}\n${r.notice}` : `started ${r.run}`);
          location.hash = `#/run/${String(r.run).slice(-6)}`;
        } catch (err) {
          toast(`could not start: ${err.message}`);
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
    h('button', { class: 'primary', type: 'submit' }, 'Start'),
  );
  main.replaceChildren(h('h1', {}, 'New run'), form);
}

// ---- settings -----------------------------------------------------------------------------------
async function showSettings() {
  const s = await api('GET', '/api/settings');
  const e = s.effective;
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
          render();
        } catch (err) {
          toast(`not saved: ${err.message}`);
        }
      },
    },
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
      ['claude', 'rules', 'off'].map((m) => h('option', { value: m, selected: m === e.supervisor.mode }, m)),
    ),
    h('label', { for: 's-profile' }, 'Timeout profile'),
    h(
      'select',
      { id: 's-profile', name: 'timeout_profile' },
      ['', 'standard', 'long', 'extended'].map((m) =>
        h('option', { value: m, selected: m === (e.supervisor.timeout_profile ?? '') }, m || 'none'),
      ),
    ),
    h('label', { for: 's-restart' }, 'Interrupted runs'),
    h(
      'select',
      { id: 's-restart', name: 'restart_mode' },
      [
        ['ask', 'ask (the page offers to recover them)'],
        ['auto', 'auto (agentbox recover when the UI starts)'],
        ['off', 'off'],
      ].map(([m, l]) => h('option', { value: m, selected: m === e.runs.restart_mode }, l)),
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
    h('span'),
    h('button', { class: 'primary', type: 'submit' }, 'Save'),
  );
  const files = s.files.map((f) =>
    h('details', {}, h('summary', {}, `${f.scope}: ${f.path}`), h('pre', {}, f.text ?? '(no file)')),
  );
  const waiting = s.awaiting_trust.length
    ? [
        h('h2', {}, 'Awaiting your trust'),
        h(
          'p',
          { id: 'awaiting-trust' },
          'This repository carries these entries; no run uses them until you run `agentbox trust` in a terminal (the page cannot grant trust).',
        ),
        h(
          'ul',
          {},
          s.awaiting_trust.map((t) => h('li', {}, h('code', {}, `${t.file} ${t.key}`), ': ', t.text)),
        ),
      ]
    : [];
  main.replaceChildren(
    h('h1', {}, 'Settings'),
    ...waiting,
    form,
    h('h2', {}, 'Templates'),
    await templatesEditor(),
    h('h2', {}, 'Files'),
    ...files,
  );
}

/** The prompt templates: pick a level and a file, edit it, save (checked as a run would) or remove. */
async function templatesEditor() {
  const t = await api('GET', '/api/templates');
  const names = [
    'input.md',
    'output.md',
    ...['scout', 'plan', 'fix', 'review', 'interactive'].flatMap((type) => [
      `${type}.input.md`,
      `${type}.output.md`,
    ]),
  ];
  const level = h(
    'select',
    { id: 't-level', 'aria-label': 'template level' },
    h('option', { value: 'project' }, `project (${t.dirs.project})`),
    h('option', { value: 'global' }, `global (${t.dirs.global ?? 'none'})`),
  );
  const name = h(
    'select',
    { id: 't-name', 'aria-label': 'template file' },
    names.map((n) => h('option', { value: n }, n)),
  );
  const textarea = h('textarea', { id: 't-text', 'aria-label': 'template text', rows: '12' });
  const note = h('span', { class: 'muted', id: 't-note' });
  const load = () => {
    const own = t.files[level.value].find((f) => f.name === name.value);
    const builtin = t.builtin.find((f) => f.name === name.value);
    textarea.value = own?.text ?? builtin?.text ?? '';
    note.textContent = own
      ? 'this level has the file'
      : builtin
        ? 'not at this level: the built-in default is shown'
        : 'not at this level';
  };
  level.addEventListener('change', load);
  name.addEventListener('change', load);
  const save = h(
    'button',
    {
      class: 'primary',
      onclick: async () => {
        try {
          await api('PUT', '/api/templates', { level: level.value, name: name.value, text: textarea.value });
          toast('template saved: it applies to the next run');
        } catch (err) {
          toast(`not saved: ${err.message}`);
        }
      },
    },
    'Save template',
  );
  const remove = h(
    'button',
    {
      class: 'danger',
      onclick: async () => {
        if (!window.confirm(`Remove ${name.value} from the ${level.value} templates?`)) return;
        await api('PUT', '/api/templates', { level: level.value, name: name.value, text: null });
        toast('template removed');
      },
    },
    'Remove',
  );
  const types = h(
    'ul',
    {},
    Object.entries(t.types).map(([type, v]) =>
      h(
        'li',
        {},
        `${type}: input ${v.globalInput ?? '—'}${v.projectInput ? ` + ${v.projectInput}` : ''}; output ${v.output ?? '— (the raw answer)'}`,
      ),
    ),
  );
  load();
  return h(
    'div',
    { id: 'templates' },
    types,
    h('div', { class: 'filters' }, level, name, note),
    textarea,
    h('div', { class: 'actions' }, save, remove),
  );
}

// ---- notifications, live updates, routing --------------------------------------------------------
let known = new Map();
async function enableNotifications() {
  if (!('Notification' in window)) return toast('this browser has no notifications');
  toast(
    (await Notification.requestPermission()) === 'granted' ? 'you will be notified' : 'notifications are off',
  );
}
async function notifyEnded() {
  try {
    const { runs } = await api('GET', '/api/runs?limit=50');
    const granted = window.Notification?.permission === 'granted';
    for (const run of runs) {
      const before = known.get(run.name);
      if (before?.status === 'ACTIVE' && ENDED.has(run.status) && granted)
        new Notification(`agentbox: ${run.status}`, { body: run.task, tag: run.name });
      // An interactive session whose claude finished its turn: it waits for the person.
      if (before && !before.waiting && run.now?.waiting && granted)
        new Notification('agentbox: waits for you', { body: run.task, tag: `${run.name}-waiting` });
    }
    known = new Map(runs.map((r) => [r.name, { status: r.status, waiting: Boolean(r.now?.waiting) }]));
  } catch {
    /* the next change tries again */
  }
}

let rendering = Promise.resolve();
function render() {
  rendering = rendering.then(async () => {
    const [, page, arg] = location.hash.split('/');
    try {
      if (page === 'run' && arg) await showRun(decodeURIComponent(arg));
      else if (page === 'new') {
        if (!document.getElementById('new-run')) showNew();
      } else if (page === 'settings') {
        if (!document.getElementById('settings')) await showSettings();
      } else await showRuns();
      document.body.dataset.rendered = String(Date.now());
    } catch (e) {
      main.replaceChildren(h('p', { class: 'panel warn' }, `Could not load: ${e.message}`));
    }
  });
  return rendering;
}

let pending;
function connect() {
  const live = document.getElementById('live');
  const source = new EventSource('/api/events');
  // Each time the stream opens, the page is drawn: the first time too (no change falls between
  // the two, and the server is asked once, not twice); without a stream, it is drawn all the same.
  source.onopen = () => {
    live.classList.add('on');
    render();
  };
  source.onerror = () => {
    live.classList.remove('on'); // EventSource reconnects by itself
    if (!document.body.dataset.rendered) render();
  };
  source.addEventListener('change', () => {
    clearTimeout(pending);
    pending = setTimeout(() => {
      if (document.activeElement?.tagName !== 'TEXTAREA') render();
      notifyEnded();
    }, 50);
  });
}

window.addEventListener('hashchange', () => {
  render();
  main.focus();
});
notifyEnded();
connect();
