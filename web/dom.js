// What every view draws with. Every text from a run goes into the page as a text node (`h`'s
// children, textContent); the one exception is the report, sanitised by the server (run.js).

export const main = document.getElementById('main');

/**
 * An element's listeners, by event: `h` installs one dispatcher per event that calls the handler
 * kept here, so `draw` can hand a kept element the closures of the tree drawn last (they see the
 * run as it is now, not as it was when the element was first made).
 */
const HANDLERS = new WeakMap();

function listen(el, type, fn) {
  if (!HANDLERS.has(el)) HANDLERS.set(el, {});
  const on = HANDLERS.get(el);
  if (!(type in on)) el.addEventListener(type, (e) => HANDLERS.get(el)[type]?.(e));
  on[type] = fn;
}

/**
 * The controls a text from a run may hold that change what the page shows without being seen: C0
 * and C1 controls but line end and tab, DEL, and the bidirectional controls (Trojan Source) — the
 * set src/util/terminal-text.ts escapes for the terminal. Shown as what they are: `⟨U+202E⟩`.
 */
const HIDDEN = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** `text` with every hidden control shown as `⟨U+XXXX⟩`, so a right-to-left override reverses nothing. */
export const visible = (text) =>
  text.replace(HIDDEN, (c) => `⟨U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}⟩`);

/** An element with attributes and children (strings become text nodes, their hidden controls shown). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) listen(el, k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat())
    if (c !== null && c !== undefined) el.append(c instanceof Node ? c : visible(String(c)));
  return el;
}

/**
 * The page an address shows, without the place in it a deep link adds (`#/run/<id>/entry/…` is the
 * page `#/run/<id>`, web/deep-link.js): going to another entry of the same run redraws nothing.
 */
export const pageKey = (hash = location.hash) => hash.split('/').slice(0, 3).join('/');

/**
 * Draws `nodes` into `parent` in place: an element that is there already (same `id` or `data-key`,
 * else the same tag at the same place) is kept and updated, so what the person holds survives a
 * live update — the keyboard focus, a selection, an opened <details>, text typed in a field, the
 * scroll. An element marked `data-sig` is kept whole while its signature is the same (content drawn
 * by another module, e.g. the diff); a different signature replaces it.
 */
export function draw(parent, nodes) {
  // Another page (another run) starts from nothing: no state of the last one carries over.
  if (parent === main && parent.dataset.page !== pageKey()) {
    parent.replaceChildren();
    parent.dataset.page = pageKey();
  }
  const next = nodes.flat().filter((n) => n !== null && n !== undefined && n !== '');
  patchChildren(
    parent,
    next.map((n) => (n instanceof Node ? n : document.createTextNode(visible(String(n))))),
  );
}

const keyOf = (n) => (n.nodeType === 1 ? n.id || n.getAttribute('data-key') || null : null);

function patchChildren(parent, next) {
  const old = [...parent.childNodes];
  const keyed = new Map();
  for (const n of old) if (keyOf(n) && !keyed.has(keyOf(n))) keyed.set(keyOf(n), n);
  const taken = new Set();
  let at = 0;
  const take = (m) => {
    taken.add(m);
    return m;
  };
  const pairs = next.map((n) => {
    const key = keyOf(n);
    if (key) {
      const m = keyed.get(key);
      return [m && !taken.has(m) && m.nodeName === n.nodeName ? take(m) : null, n];
    }
    while (at < old.length && (keyOf(old[at]) || taken.has(old[at]))) at++;
    const c = old[at];
    if (!(c && c.nodeType === n.nodeType && c.nodeName === n.nodeName)) return [null, n];
    at++;
    return [take(c), n];
  });
  // Removed first, so what stays never moves: moving a focused element would drop its focus.
  for (const n of old) if (!taken.has(n)) n.remove();
  pairs.forEach(([m, n], i) => {
    const node = m ? morph(m, n) : n;
    const here = parent.childNodes[i];
    if (here !== node) parent.insertBefore(node, here ?? null);
  });
}

/** `a` made to look like `b`; returns the node to keep (a, or b when a cannot become b). */
function morph(a, b) {
  if (a.nodeType !== 1) {
    if (a.data !== b.data) a.data = b.data;
    return a;
  }
  if (b.hasAttribute('data-sig') && a.getAttribute('data-sig') !== b.getAttribute('data-sig')) {
    a.replaceWith(b);
    return b;
  }
  syncAttributes(a, b);
  const on = HANDLERS.get(b) ?? {};
  const mine = HANDLERS.get(a);
  if (mine) for (const type of Object.keys(mine)) if (!(type in on)) mine[type] = undefined;
  for (const [type, fn] of Object.entries(on)) listen(a, type, fn);
  if (!b.hasAttribute('data-sig')) patchChildren(a, [...b.childNodes]);
  return a;
}

/** The person's own state is left alone: an opened <details>, the value of the field being typed in. */
function syncAttributes(a, b) {
  for (const { name } of [...a.attributes])
    if (!b.hasAttribute(name) && !(name === 'open' && a.tagName === 'DETAILS')) a.removeAttribute(name);
  for (const { name, value } of [...b.attributes]) {
    if (name === 'open' && a.tagName === 'DETAILS') continue;
    if (a.getAttribute(name) !== value) a.setAttribute(name, value);
  }
  if (a.tagName === 'INPUT' && a.type === 'checkbox') a.checked = b.checked;
  else if (
    (a.tagName === 'INPUT' || a.tagName === 'TEXTAREA') &&
    a !== document.activeElement &&
    a.value !== b.value
  )
    a.value = b.value;
}

export function toast(text) {
  const t = document.getElementById('toast');
  t.textContent = text;
  t.classList.add('show');
  clearTimeout(toast.timer);
  toast.timer = setTimeout(hideToast, 6000);
}

/** The toast gone now: a failure shown beside a form must not sit next to the last success's word. */
export function hideToast() {
  clearTimeout(toast.timer);
  const t = document.getElementById('toast');
  t.classList.remove('show');
  t.textContent = '';
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

/** `12s`, `5m`, `3h`, `2d` since `iso`. */
export function ageText(iso) {
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** How long ago `iso` was, as an element the page's clock keeps current (tickAges). */
export function age(iso) {
  if (!iso) return '';
  return h('time', { datetime: iso, 'data-since': iso }, ageText(iso));
}

/** Every age on the page, brought up to date from the browser's clock: no request to the server. */
export function tickAges() {
  for (const el of document.querySelectorAll('time[data-since]')) {
    const text = ageText(el.getAttribute('data-since'));
    if (el.textContent !== text) el.textContent = text;
  }
}

/** A short fingerprint of a long text (FNV-1a), for a `data-sig`. */
export function fingerprint(text) {
  let x = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) x = Math.imul(x ^ text.charCodeAt(i), 0x01000193);
  return `${text.length}-${(x >>> 0).toString(36)}`;
}

/** `1 tool call`, `2 tool calls`: a count and its noun, singular for one. */
export const count = (n, noun) => `${n} ${noun}${Number(n) === 1 ? '' : 's'}`;

export const usd = (n) => (n === null || n === undefined ? '—' : `$${n.toFixed(n < 1 ? 4 : 2)}`);

/** What a run does now: the tool and its target, or waiting for the model. */
export const doing = (now) => (now.tool ? `${now.tool} ${now.target ?? ''}` : 'waiting for the model');
