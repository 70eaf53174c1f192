// The run page (#/run/<id>): its status and what it does now, the gate's buttons, the warnings
// to read before a merge, the diff, the report, the timeline and the prompt.
import { api } from './api.js';
import { diffSection } from './diff.js';
import { age, badge, count, doing, draw, fingerprint, h, main, usd } from './dom.js';
import { liveDiffSection } from './live-diff.js';
import { enableLineComments, reviewSection, showInline } from './review.js';
import { revisionsSection } from './revisions.js';
import { notPassingText, runActions, sensitiveItem } from './run-actions.js';
import { goToPlace } from './run-place.js';
import { noteShown } from './shown.js';
import { followTranscript, prefetchTranscript, transcriptSection } from './transcript.js';

export async function showRun(id, redraw) {
  prefetchTranscript(id);
  const run = await api('GET', `/api/runs/${encodeURIComponent(id)}`);
  const session =
    run.meta.type === 'interactive' && run.state?.status === 'ACTIVE'
      ? await api('GET', `/api/runs/${run.id}/session`).catch(() => null)
      : null;
  // In place (dom.js draw): a live update keeps the focus, an opened Prompt, the scroll.
  draw(main, [
    ...heading(run),
    ...nowLines(run, session),
    run.state?.failure
      ? h(
          'div',
          { class: 'panel warn', id: 'failure' },
          `${run.state.failure.kind}: ${run.state.failure.message}`,
        )
      : '',
    runActions(run, redraw),
    ...warnings(run, redraw),
    ...changes(run, redraw),
    ...reviewSection(run, redraw),
    ...revisionsSection(run),
    ...report(run),
    h('h2', { id: 'timeline-title' }, 'Timeline'),
    h('ol', { class: 'timeline', id: 'timeline' }, run.events.map(eventItem)),
    run.prompt ? h('details', { id: 'prompt' }, h('summary', {}, 'Prompt'), h('pre', {}, run.prompt)) : '',
    transcriptSection(run),
  ]);
  followTranscript(run);
  showInline(document.getElementById('diff'), run);
  if (run.patch) noteShown(run);
  goToPlace(run);
}

/**
 * The run's cost: agent and supervisor. `≈` while part of it is agentbox's estimate from list
 * prices (src/budget/meter.ts): Claude Code states the cost at the end of a process, and that
 * stated cost replaces the estimate, lower or higher.
 */
function costText(usage) {
  if (!usage) return usd(null);
  const cost = (usage.agent?.cost_usd ?? 0) + (usage.supervisor?.cost_usd ?? 0);
  return `${usage.agent?.estimated || usage.supervisor?.estimated ? '≈' : ''}${usd(cost)}`;
}

function heading(run) {
  return [
    h('p', { id: 'back' }, h('a', { href: '#/' }, '← Runs'), ...groupLink(run), ...rerunLink(run)),
    h(
      'h1',
      { id: 'title' },
      `${run.meta.type}: `,
      h('span', { class: 'task' }, run.meta.task.split('\n')[0]),
    ),
    h(
      'p',
      { id: 'summary' },
      badge(run.state?.status),
      run.claim ? h('span', { class: 'origin', id: 'claimed' }, ` claimed by ${run.claim.by}`) : null,
      ' ',
      h('code', {}, run.name),
      ' ',
      h(
        'span',
        { class: 'muted', id: 'cost' },
        `· ${count(run.state?.tool_calls ?? 0, 'tool call')} · ${costText(run.state?.usage)}${run.claim ? ' (claimed)' : ''}`,
      ),
    ),
  ];
}

/** An attempt of a group: a way to its group's page, where its attempts are side by side. */
function groupLink(run) {
  const g = run.meta.options?.group;
  if (!/^[0-9a-f]{6}$/.test(String(g?.id))) return [];
  return [
    ' · ',
    h('a', { href: `#/group/${g.id}`, id: 'group-of' }, `attempt ${g.attempt} of ${g.attempts} in its group`),
  ];
}

/** A rerun (`agentbox rerun`): a way to the run whose task it took again. */
function rerunLink(run) {
  const of = String(run.meta.rerun_of ?? '');
  if (!/__[0-9a-f]{6}$/.test(of)) return [];
  return [' · ', h('a', { href: `#/run/${of.slice(-6)}`, id: 'rerun-of' }, `rerun of ${of}`)];
}

function nowLines(run, session) {
  const lines = [];
  const now = run.now;
  if (now)
    lines.push(
      h(
        'p',
        { class: 'now', id: 'now' },
        `now: ${doing(now)} · ${count(now.tool_calls, 'tool call')} · iteration ${now.iteration}${now.max_iterations ? `/${now.max_iterations}` : ''} · started `,
        age(now.since),
        ' ago',
      ),
    );
  if (session)
    lines.push(
      h(
        'p',
        { class: 'now', id: 'session' },
        `session: ${session.idle ? 'waiting for you' : 'working'} · claude pid ${session.pid ?? '—'} · restarts ${session.restart_count ?? 0} · queued ${session.queued ?? 0}`,
      ),
    );
  return lines;
}

/** A warning panel: its heading in bold, then the text. */
const warnPanel = (id, heading, text) =>
  h('div', { class: 'panel warn', id }, h('strong', {}, heading), text);

/** What to read before a merge: why the run did not pass, sensitive paths, what the patch left out. */
function warnings(run, redraw) {
  const panels = [];
  // A fetched run: its status, verification and cost are what its publication says.
  if (run.claim_line) panels.push(warnPanel('claim', 'Claimed, not checked here: ', run.claim_line));
  const untrusted = run.events.find((e) => e.event === 'trust_required');
  if (untrusted) panels.push(untrustedPanel(untrusted));
  if (run.patch_seen?.changed)
    panels.push(
      warnPanel(
        'patch-changed',
        'The patch changed since it was last shown here: ',
        `${run.patch_seen.shown.sha256.slice(0, 12)} → ${run.patch_seen.sha256.slice(0, 12)} — the one below is the new one`,
      ),
    );
  if (run.not_passing)
    panels.push(
      warnPanel(
        'not-passing',
        'This run did not pass — read why before you merge: ',
        notPassingText(run.not_passing),
      ),
    );
  if (run.sensitive.length || run.refused.length)
    panels.push(
      h(
        'div',
        { class: 'panel warn', id: 'sensitive' },
        h('strong', {}, 'Sensitive changes — read them before you merge'),
        h(
          'ul',
          {},
          run.refused.map((s) => h('li', {}, `${s.path} — ${s.kind}${s.detail ? ` (${s.detail})` : ''}`)),
          run.sensitive.map((s, i) => sensitiveItem(run, s, i, redraw)),
        ),
      ),
    );
  if (run.nested?.length)
    panels.push(
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
  if (run.left_out) panels.push(leftOutPanel(run.left_out));
  return panels;
}

/** The agent's files too large for the patch (src/git/too-large.ts): named before a merge. */
function leftOutPanel(leftOut) {
  const why = (f) =>
    f.why === 'file' ? 'over the 50.0 MiB a file may have' : 'the whole change past 256.0 MiB';
  return h(
    'div',
    { class: 'panel warn', id: 'left-out' },
    h('strong', {}, 'Files too large for the patch — left out of it, still in the worktree'),
    h('ul', {}, [
      ...leftOut.files.map((f) =>
        h('li', {}, `${f.path} (${(f.bytes / 1024 / 1024).toFixed(1)} MiB: ${why(f)})`),
      ),
      ...(leftOut.more > 0 ? [h('li', {}, `… and ${leftOut.more} more`)] : []),
    ]),
  );
}

/**
 * The repository's settings this run went without (its `trust_required` event): said on the page
 * for as long as the run is shown, not in a toast that went after 6 s.
 */
export function untrustedPanel(e) {
  return h(
    'div',
    { class: 'panel warn', id: 'untrusted' },
    h('strong', {}, 'Not used by this run — this repository’s settings are not trusted yet: '),
    h(
      'ul',
      {},
      (e.entries ?? []).map((x) => h('li', {}, h('code', {}, `${x.file} ${x.key}`), ': ', x.text)),
    ),
    'Review them, then run ',
    h('code', {}, 'agentbox trust'),
    ' in a terminal (the page cannot grant trust); the next run uses them.',
  );
}

function changes(run, redraw) {
  if (run.meta.type === 'fix' && run.state?.status === 'ACTIVE') return liveDiffSection(run);
  if (run.patch) {
    const section = diffSection(run.patch, (target) => enableLineComments(target, run, redraw));
    // diff2html's box is kept whole while the patch is the same (dom.js draw), redrawn when it changes.
    const diff = section.find((el) => el.id === 'diff');
    diff?.setAttribute('data-sig', fingerprint(run.patch));
    // The hash of what is drawn: web/shown.js tells the server only a patch still on the page.
    diff?.setAttribute('data-sha256', run.patch_sha256 ?? '');
    return section;
  }
  if (run.patch_too_large)
    return [h('p', { class: 'muted' }, `The patch is too large to show here: agentbox diff ${run.id}`)];
  return [];
}

function report(run) {
  if (run.report_html === null) return [];
  const panel = h('div', { class: 'panel report', id: 'report' });
  panel.innerHTML = run.report_html; // sanitised by the server (sanitize-html allow-list)
  // A code block or table wider than the screen scrolls sideways: a named Tab stop, so the
  // keyboard's arrows reach what it clips (axe: scrollable-region-focusable).
  for (const box of panel.querySelectorAll('pre, table')) {
    box.setAttribute('tabindex', '0');
    box.setAttribute('role', 'region');
    box.setAttribute('aria-label', box.tagName === 'PRE' ? 'code in the report' : 'table in the report');
  }
  return [h('h2', {}, 'Report'), panel];
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
