// A group's page (#/group/<id>): its attempts side by side, best first (the ranking's order and its
// reasons), each with its verdicts, cost, time and diff, and "Merge this attempt" on each one that
// can be merged. Drawn in place (dom.js draw) on every live update while the group runs.
import { api } from './api.js';
import { age, badge, draw, h, main, toast, usd } from './dom.js';
import { errorPanel, errorText } from './errors.js';
import { diffBox, fetchDiff, forgetDiff, shownSha } from './group-diff.js';
import { startNotices } from './new-run.js';
import { hooksText, MERGE_WAITS, notPassingText, uncommittedText } from './run-actions.js';

/** The last failed merge of each attempt (`group/k`), shown under its button until dismissed. */
const failures = new Map();
/** Sensitive changes the server named for an attempt (`group/k`), and the ones the person ticked. */
const sensitiveAsked = new Map();
const ticked = new Map();
let pending = false;

/**
 * One `Idempotency-Key` per attempt's merge, as the new-run form has per form: a retry after a lost
 * answer gets the first merge's answer. A refused merge is forgotten by the server, so the key
 * serves the retry (the sensitive changes ticked).
 */
const mergeKeys = new Map();
function mergeKey(slotKey) {
  if (!mergeKeys.has(slotKey)) {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    mergeKeys.set(slotKey, Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join(''));
  }
  return mergeKeys.get(slotKey);
}

export async function showGroup(id, redraw) {
  const group = await api('GET', `/api/groups/${encodeURIComponent(id)}`);
  await Promise.all(group.attempts.map((a) => fetchDiff(group, a)));
  draw(main, [
    h('p', { id: 'back' }, h('a', { href: '#/' }, '← Runs')),
    h(
      'h1',
      { id: 'title' },
      `fix ×${group.meta.attempts}: `,
      h('span', { class: 'task' }, group.meta.task.split('\n')[0]),
    ),
    h(
      'p',
      { id: 'summary' },
      badge(group.status),
      ' ',
      h('code', {}, group.name),
      ' ',
      h(
        'span',
        { class: 'muted', id: 'group-label' },
        `· ${group.label} · started `,
        age(group.state.started_at),
        ' ago',
      ),
    ),
    ...groupNotes(group),
    startNotice(group),
    h(
      'div',
      { class: 'attempts', id: 'attempts' },
      group.attempts.map((a) => attemptCard(group, a, redraw)),
    ),
  ]);
}

/** What the group's attempts go without until `agentbox trust` (said when it started), until dismissed. */
function startNotice(group) {
  const notice = startNotices.get(group.id);
  if (!notice) return null;
  return h(
    'div',
    { class: 'panel warn', id: 'untrusted' },
    h('pre', {}, notice),
    h(
      'button',
      {
        type: 'button',
        onclick: () => {
          startNotices.delete(group.id);
          document.getElementById('untrusted')?.remove();
          main.focus();
        },
      },
      'Dismiss',
    ),
  );
}

function groupNotes(group) {
  const notes = [];
  const { halted, merged } = group.state;
  // A fetched group's MERGED or DISCARDED is its publication's claim: nothing was decided here.
  if (group.claim_line)
    notes.push(
      h('p', { class: 'panel warn', id: 'claimed' }, `Claimed, not decided here: ${group.claim_line}`),
    );
  else if (merged)
    notes.push(h('p', { class: 'panel', id: 'merged' }, `Merged attempt ${merged.attempt} (${merged.run}).`));
  if (halted)
    notes.push(h('p', { class: 'panel warn', id: 'halted' }, `Halted (${halted.reason}): ${halted.detail}`));
  const { why, tie } = group.ranking;
  notes.push(
    h(
      'p',
      { id: 'ranking', class: tie.length ? 'panel' : 'muted' },
      tie.length ? `The best attempts tie — pick one: ${why}` : `Ranked: ${why}`,
    ),
  );
  return notes;
}

const verdict = (v) => (v === true ? '✓ passed' : v === false ? '✗ failed' : '— not run');

function seconds(ms) {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${s % 60}s`;
}

function statText(stat) {
  if (!stat) return '—';
  return `${stat.files} file${stat.files === 1 ? '' : 's'} +${stat.insertions} −${stat.deletions}`;
}

/** One attempt's card: its place in the ranking and why, its facts, its merge button, its diff. */
function attemptCard(group, a, redraw) {
  const title = `attempt-${a.attempt}-title`;
  const facts = [
    ['Model', a.model ?? 'default'],
    ['Verify', verdict(a.verified)],
    ['Violations', String(a.violations)],
    ['Refusals', String(a.refusals)],
    ['Cost', `${a.estimated ? '≈' : ''}${usd(a.cost_usd)}`],
    ['Duration', a.duration_ms === null ? '—' : seconds(a.duration_ms)],
    ['Diff', statText(a.stat)],
  ];
  return h(
    'article',
    {
      class: `attempt${a.verified === true ? ' passed' : ''}`,
      'data-key': `attempt-${a.attempt}`,
      'data-attempt': a.attempt,
      'aria-labelledby': title,
    },
    h(
      'h2',
      { id: title },
      `#${a.place} · Attempt ${a.attempt} `,
      a.started
        ? badge(a.status)
        : h('span', { class: 'badge' }, a.start_error ? 'could not start' : 'waiting'),
    ),
    h(
      'dl',
      { class: 'facts' },
      facts.flatMap(([k, v]) => [h('dt', {}, k), h('dd', { 'data-fact': k.toLowerCase() }, v)]),
    ),
    h('p', { class: 'muted reason' }, a.reason),
    a.claim_line ? h('p', { class: 'warn-text' }, `Claimed, not checked here: ${a.claim_line}`) : null,
    a.not_passing ? h('p', { class: 'warn-text' }, notPassingText(a.not_passing)) : null,
    a.id ? h('p', {}, h('a', { href: `#/run/${a.id}` }, `Open run ${a.id}`)) : null,
    mergeBlock(group, a, redraw),
    diffBox(a),
  );
}

const slot = (group, a) => `${group.id}/${a.attempt}`;

function mergeBlock(group, a, redraw) {
  if (!a.mergeable) return null;
  const key = slot(group, a);
  const asked = sensitiveAsked.get(key) ?? [];
  const acks = ticked.get(key) ?? new Set();
  const waiting = asked.some((s) => !acks.has(s.path));
  const why = `merge-why-${a.attempt}`;
  const button = h(
    'button',
    {
      class: a.not_passing ? 'danger' : 'primary',
      'data-action': 'merge-attempt',
      // A Tab stop that says why it waits (aria-disabled), not a `disabled` one Tab skips.
      'aria-disabled': waiting ? 'true' : undefined,
      'aria-describedby': waiting ? why : undefined,
      'aria-busy': pending ? 'true' : undefined,
      onclick: () =>
        waiting
          ? document.querySelector(`[data-attempt="${a.attempt}"] .sensitive input:not(:checked)`)?.focus()
          : merge(group, a, redraw),
    },
    a.not_passing ? `Merge this attempt (${a.not_passing.status})` : 'Merge this attempt',
  );
  const failure = failures.get(key);
  return h(
    'div',
    { class: 'attempt-merge', 'data-key': `merge-${a.attempt}` },
    asked.length ? sensitiveList(key, asked, acks, redraw) : null,
    h('div', { class: 'actions' }, button),
    waiting ? h('p', { class: 'muted', id: why }, MERGE_WAITS) : null,
    failure
      ? errorPanel('Merge', failure, async () => {
          failures.delete(key);
          await redraw();
          document.querySelector(`[data-attempt="${a.attempt}"] [data-action="merge-attempt"]`)?.focus();
        })
      : null,
  );
}

function sensitiveList(key, asked, acks, redraw) {
  return h(
    'ul',
    { class: 'sensitive' },
    asked.map((s, i) => {
      const id = `ack-${key.replace('/', '-')}-${i}`;
      return h(
        'li',
        {},
        h('input', {
          type: 'checkbox',
          id,
          checked: acks.has(s.path),
          onchange: (e) => {
            if (e.target.checked) acks.add(s.path);
            else acks.delete(s.path);
            ticked.set(key, acks);
            redraw();
          },
        }),
        ' ',
        h('label', { for: id }, `I have read this: ${s.path} — ${s.kind}`),
      );
    }),
  );
}

async function merge(group, a, redraw) {
  if (pending) return;
  const others = group.attempts.filter((o) => o.attempt !== a.attempt && o.started).length;
  const claimed = a.claim_line ? `This attempt ${a.claim_line}\n\n` : '';
  const warning = `${claimed}${a.not_passing ? `This attempt did not pass: ${notPassingText(a.not_passing)}\n\n` : ''}`;
  const question = `${warning}Apply attempt ${a.attempt} (${a.run}) to your working tree and commit it${a.not_passing || a.claim_line ? ' anyway' : ''}? None of your git hooks runs for this commit. The other ${others} attempt(s)' worktrees and branches are removed; every patch stays in the group's folder.`;
  if (!window.confirm(question)) return;
  const key = slot(group, a);
  failures.delete(key);
  pending = true;
  try {
    const r = await api(
      'POST',
      `/api/groups/${group.id}/merge`,
      {
        attempt: a.attempt,
        commit: true,
        force: Boolean(a.not_passing) || Boolean(a.claim_line),
        acknowledged: [...(ticked.get(key) ?? [])],
        // The patch merged is the one this page drew (the run page sends it too): an attempt
        // revised or re-fetched since is refused, not merged unseen.
        ...(shownSha(a) ? { patch_sha256: shownSha(a) } : {}),
      },
      { 'idempotency-key': mergeKey(key) },
    );
    toast(
      `merged attempt ${a.attempt}${r.commit ? ` — commit ${String(r.commit).slice(0, 12)}` : ''}${hooksText(r)}${uncommittedText(r)}`,
    );
  } catch (e) {
    if (e.data?.sensitive) sensitiveAsked.set(key, e.data.sensitive);
    // The patch changed since it was drawn: the redraw fetches the one there is now.
    if (e.data?.patch_sha256) forgetDiff(a);
    failures.set(key, errorText(e));
  } finally {
    pending = false;
  }
  await redraw();
}
