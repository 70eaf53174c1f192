// One transcript entry as the run page shows it (transcript.js pages and follows them). Every
// word the agent, a tool or the repository wrote is hostile: it goes in as a text node (dom.js
// `h`), never as HTML, and inside an isolated direction run (transcript.css) so a bidi control
// in it cannot turn the page's own words around.
import { entryLink } from './deep-link.js';
import { h, visible } from './dom.js';
import { durationMark } from './duration.js';

/** A tool's input, a key a line; a string as it is (a command, a file's new text), the rest as JSON. */
function inputText(input) {
  if (typeof input !== 'object' || input === null) return JSON.stringify(input) ?? '';
  return Object.entries(input)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v, null, 2)}`)
    .join('\n');
}

const when = (at) =>
  at
    ? h('time', { datetime: at, class: 't-time' }, new Date(at).toLocaleTimeString())
    : h('span', { class: 't-time' }, '');

/** Agent text, kept as written (line ends too), cut ones with a button that fetches them whole. */
function agentText(e, ctx, tag = 'div') {
  // A <pre> scrolls when long: a Tab stop, so the keyboard can scroll it too.
  const box = h(tag, { class: 't-agent', tabindex: tag === 'pre' ? 0 : undefined }, e.text);
  if (!e.cut) return [box];
  const more = h(
    'button',
    {
      type: 'button',
      class: 't-all',
      onclick: async () => {
        more.disabled = true;
        try {
          box.textContent = visible((await ctx.whole(e.id)).text);
          more.remove();
        } catch (err) {
          more.disabled = false;
          more.textContent = `Show all failed (${err.message}) — try again`;
        }
      },
    },
    `Show all (${e.cut.length.toLocaleString()} characters)`,
  );
  return [box, more];
}

/** The entry's <li>, kept by its id for search (transcript-search.js): where it is, what to mark. */
function item(e, cls, ...children) {
  return h(
    'li',
    { class: `t-entry t-${e.kind} ${cls}`.trim(), 'data-key': e.id },
    when(e.at),
    ' ',
    entryLink(e.id),
    ' ',
    ...children,
  );
}

/** `li` is where entry `e` is drawn; `parts`, the elements holding its words. */
const drawn = (ctx, e, li, parts = [li]) => {
  ctx.byId.set(e.id, { li, parts });
  return li;
};

const msBetween = (a, b) => (a && b ? Date.parse(b) - Date.parse(a) : Number.NaN);

const label = (text) => h('span', { class: 't-label' }, text);

/** `tool`, the mark of its result (refused, error, ok) and where the result goes. */
function toolCall(e, ctx) {
  const mark = h('span', { class: 't-mark t-pending' }, 'no result yet');
  const result = h('div', { class: 't-result' });
  const summary = h(
    'summary',
    {},
    h('span', { class: 't-tool' }, e.tool),
    ' ',
    h('span', { class: 't-target t-agent' }, e.target ?? ''),
    ' ',
    mark,
  );
  const input = h('pre', { class: 't-input t-agent', tabindex: 0 }, inputText(e.input));
  const li = item(
    e,
    '',
    h(
      'details',
      { class: 't-call' },
      summary,
      h('div', { class: 't-head' }, 'Input'),
      input,
      h('div', { class: 't-head' }, 'Result'),
      result,
    ),
  );
  ctx.calls.set(e.tool_use_id, { li, mark, result, at: e.at });
  ctx.callCount++;
  return drawn(ctx, e, li, [summary, input]);
}

/** A result goes into its call's <details>; one whose call is not on the page stands alone. */
function toolResult(e, ctx) {
  const how = e.refused_by ? `refused (${e.refused_by})` : e.is_error ? 'error' : 'ok';
  const cls = e.refused_by ? 't-refused' : e.is_error ? 't-failed' : '';
  if (e.refused_by) ctx.refused++;
  const call = ctx.calls.get(e.tool_use_id);
  if (!call) return item(e, cls, label(`result: ${how}`), ' ', ...agentText(e, ctx, 'pre'));
  ctx.calls.delete(e.tool_use_id);
  call.mark.className = `t-mark ${e.refused_by ? 't-mark-refused' : e.is_error ? 't-mark-error' : 't-mark-ok'}`;
  call.mark.textContent = e.refused_by ? `✗ ${how}` : e.is_error ? '! error' : '✓';
  // From the line that asked for the call to the line of its result, as Claude Code timed them.
  const took = msBetween(call.at, e.at);
  if (took >= 0) call.mark.after(' ', durationMark(took, ctx.runMs));
  if (cls) call.li.classList.add(cls);
  call.result.replaceChildren(...agentText(e, ctx, 'pre'));
  drawn(ctx, e, call.li, [call.result]);
  return null;
}

/** The element for entry `e` (null when it went into one already on the page). */
export function entryItem(e, ctx) {
  const li = anyItem(e, ctx);
  if (li && !ctx.byId.has(e.id)) drawn(ctx, e, li);
  return li;
}

function anyItem(e, ctx) {
  switch (e.kind) {
    case 'text':
      return item(e, '', label('assistant'), ' ', ...agentText(e, ctx));
    case 'user':
      return item(e, '', label('user'), ' ', ...agentText(e, ctx));
    case 'tool_call':
      return toolCall(e, ctx);
    case 'tool_result':
      return toolResult(e, ctx);
    case 'result': {
      const cost = e.cost_usd === null ? '' : ` ($${e.cost_usd.toFixed(4)})`;
      return item(
        e,
        e.is_error ? 't-failed' : '',
        label(`${e.is_error ? 'ended with an error' : 'answer'}${cost}`),
        ' ',
        ...agentText(e, ctx),
      );
    }
    default:
      return recordItem(e, ctx);
  }
}

/** A line of the run's own record: its title, then text the agent or a command wrote. */
const agentLine = (e, cls, title, text) =>
  item(e, cls, label(title), ' ', h('span', { class: 't-agent' }, text));

/** An entry agentbox recorded around the conversation: refusals, the supervisor, checks, events. */
function recordItem(e, ctx) {
  switch (e.kind) {
    case 'refusal':
      ctx.refused++;
      return agentLine(e, 't-refused', `✗ refused (${e.by})`, `${e.tool}: ${e.reason}`);
    case 'decision':
      return agentLine(e, 't-super', `supervisor: ${e.decision}`, `(${e.source}) ${e.reason}`);
    case 'correction':
      return agentLine(e, 't-super', `correction (${e.source}${e.reason ? `, ${e.reason}` : ''})`, e.text);
    case 'inject':
      return agentLine(e, 't-super', 'injected', e.text);
    case 'verify': {
      const took = typeof e.duration_ms === 'number' ? [' ', durationMark(e.duration_ms, ctx.runMs)] : [];
      return e.ok
        ? item(e, 't-okline', label('✓ verification passed'), ...took)
        : item(
            e,
            't-failed',
            label('✗ verification failed'),
            ...took,
            ' ',
            h('span', { class: 't-agent' }, e.detail),
          );
    }
    case 'violation':
      return agentLine(e, 't-failed', `violation ${e.type} (${e.action})`, e.detail);
    case 'budget':
      return item(e, 't-failed', label('budget'), ' ', e.reason);
    case 'event':
      return agentLine(e, 't-dim', e.event, e.detail);
    case 'oversized':
      return item(
        e,
        't-dim',
        label('not read'),
        ` a line of ${e.bytes} bytes: ${e.file} at byte ${e.offset}`,
      );
    default:
      return item(e, 't-dim', label(String(e.kind)));
  }
}
