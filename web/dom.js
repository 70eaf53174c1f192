// What every view draws with. Every text from a run goes into the page as a text node (`h`'s
// children, textContent); the one exception is the report, sanitised by the server (run.js).

export const main = document.getElementById('main');

/** An element with attributes and children (strings become text nodes). */
export function h(tag, attrs = {}, ...children) {
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

let toastTimer;
export function toast(text) {
  const t = document.getElementById('toast');
  t.textContent = text;
  t.classList.add('show');
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => t.classList.remove('show'), 6000);
}

export function select(id, options, value, onChange) {
  return h(
    'select',
    { id, onchange: (e) => onChange(e.target.value) },
    options.map((o) => h('option', { value: o, selected: o === value }, o || 'any')),
  );
}

export const badge = (status) =>
  h('span', { class: `badge s-${status || 'unknown'}`, 'data-status': status || '' }, status || '?');

export function age(iso) {
  if (!iso) return '';
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

export const usd = (n) => (n === null || n === undefined ? '—' : `$${n.toFixed(n < 1 ? 4 : 2)}`);

/** What a run does now: the tool and its target, or waiting for the model. */
export const doing = (now) => (now.tool ? `${now.tool} ${now.target ?? ''}` : 'waiting for the model');
