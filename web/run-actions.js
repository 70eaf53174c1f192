// The run page's buttons: what the gate offers for the run's status (merge, discard, restart,
// stop, inject, resume, re-run), each the CLI's command behind a POST, most behind a confirmation. A
// failure stays next to the buttons, copyable, until the person dismisses it.
import { api } from './api.js';
import { askText } from './ask.js';
import { h, toast } from './dom.js';
import { errorPanel, errorText } from './errors.js';

/**
 * What a merge's answer says of the person's git hooks: they never run on the run's files (issue
 * 37); the toast names the ones that did not and the command that runs them after a read.
 */
export const hooksText = (r) =>
  r.commit && r.hooksNotRun?.length
    ? ` — your git hooks did not run: ${r.hooksNotRun.join(', ')}${r.hookFiles?.length ? ' (the patch changes hook files: read them first)' : '; once you have read the change: git commit --amend --no-edit --only'}`
    : '';

/**
 * What a merge's answer says of the person's own edits in the merged files: left out of the commit
 * (it holds HEAD and the patch alone), they stay in the working tree.
 */
export const uncommittedText = (r) =>
  r.commit && r.uncommitted?.length
    ? ` — your uncommitted edits in ${r.uncommitted.map((u) => u.path).join(', ')} were left out of the commit: they stay in your working tree (git diff shows them)`
    : '';

/** `it ended ABORTED — agent_abort: …`: why a run did not pass (src/gate/merge-gate.ts). */
export const notPassingText = (np) =>
  `${np.status === 'REVIEW' ? 'it ended REVIEW but its checks failed' : `it ended ${np.status}`}${np.reasons.length ? ` — ${np.reasons.join('; ')}` : ''}`;

/** The last failed action of each run: `{ label, action, text }`, shown until dismissed. */
const failures = new Map();

/** The runs with an action under way: their buttons wait for its answer. */
const pending = new Set();

/** The sensitive changes the person ticked, by run (`path\0kind`): Merge waits for all of them. */
const acknowledged = new Map();

const ackKey = (change) => `${change.path}\0${change.kind}`;
const acksOf = (run) => acknowledged.get(run.id) ?? new Set();
const allAcknowledged = (run) => run.sensitive.every((s) => acksOf(run).has(ackKey(s)));

/** Merge is offered for a fix run in REVIEW, or one that did not pass, with a patch. */
const offersMerge = (run) =>
  (run.state?.status === 'REVIEW' || Boolean(run.not_passing)) && run.files.includes('changes.patch');

/** A sensitive change, listed; a checkbox to acknowledge it when the run can be merged. */
export function sensitiveItem(run, change, i, redraw) {
  const text = `${change.path} — ${change.kind}${change.detail ? ` (${change.detail})` : ''}`;
  if (!offersMerge(run)) return h('li', {}, text);
  const id = `ack-${i}`;
  return h(
    'li',
    {},
    h('input', {
      type: 'checkbox',
      id,
      class: 'ack',
      checked: acksOf(run).has(ackKey(change)),
      onchange: (e) => {
        const acks = acksOf(run);
        if (e.target.checked) acks.add(ackKey(change));
        else acks.delete(ackKey(change));
        acknowledged.set(run.id, acks);
        redraw();
      },
    }),
    ' ',
    h('label', { for: id }, 'I have read this: ', text),
  );
}

/** Why Merge does nothing yet: it stays a Tab stop (aria-disabled, not disabled) that says so. */
export const MERGE_WAITS = 'Merge waits until you tick “I have read this” on each sensitive change above.';

/** The buttons for `run` (GET /api/runs/:id), and the last failure under them. */
export function runActions(run, redraw) {
  const buttons = h('div', { class: 'actions' });
  const act = (label, cls, confirmText, fn, attrs = {}) =>
    buttons.append(
      h(
        'button',
        {
          class: cls,
          'data-action': label.split(' ')[0].toLowerCase(),
          ...attrs,
          'aria-busy': pending.has(run.id) ? 'true' : undefined,
          onclick: async () => {
            // One action at a time (a Stop waits for the run to end): not `disabled`, which
            // would take the keyboard focus off the button.
            if (pending.has(run.id)) return;
            // Merge waiting for the ticks: it says so and takes the person to the first one left.
            if (attrs['aria-disabled'] === 'true') {
              document.querySelector('#sensitive .ack:not(:checked)')?.focus();
              return;
            }
            if (confirmText && !window.confirm(confirmText)) return;
            failures.delete(run.id);
            pending.add(run.id);
            try {
              toast(await fn());
            } catch (e) {
              failures.set(run.id, { label, action: label.split(' ')[0].toLowerCase(), text: errorText(e) });
            } finally {
              pending.delete(run.id);
            }
            redraw();
          },
        },
        label,
      ),
    );
  mergeAction(run, act);
  lifeActions(run, act);
  const waiting = offersMerge(run) && !allAcknowledged(run);
  return h(
    'div',
    { id: 'actions' },
    buttons,
    waiting ? h('p', { class: 'muted', id: 'merge-why' }, MERGE_WAITS) : null,
    failurePanel(run, redraw),
  );
}

function failurePanel(run, redraw) {
  const failure = failures.get(run.id);
  if (!failure) return null;
  const dismiss = async () => {
    failures.delete(run.id);
    await redraw();
    document.querySelector(`#actions [data-action="${failure.action}"]`)?.focus();
  };
  return errorPanel(
    failure.label,
    failure.text,
    dismiss,
    { id: 'action-error', 'data-for': failure.action },
    'action-error-text',
  );
}

/**
 * A run that did not pass (not REVIEW, or runs.verify failed) can be merged too, but the button
 * says so and the confirmation names its status first (as `agentbox merge` does). With sensitive
 * changes, the button waits until each is ticked, and the server is told which were.
 */
function mergeAction(run, act) {
  if (!offersMerge(run)) return;
  const failed = run.not_passing;
  const sensitive = run.sensitive.length
    ? `\n\nSensitive changes (acknowledged):\n${run.sensitive.map((s) => `  ${s.path} (${s.kind})`).join('\n')}`
    : '';
  const claimed = run.claim_line ? `This run ${run.claim_line}\n\n` : '';
  const warning = `${claimed}${failed ? `This run did not pass: ${notPassingText(failed)}\n\n` : ''}`;
  const waiting = !allAcknowledged(run);
  act(
    failed ? `Merge (${failed.status})` : 'Merge',
    failed ? 'danger' : 'primary',
    `${warning}Apply the changes of ${run.name} (patch sha256 ${String(run.patch_sha256 ?? '?').slice(0, 12)}) to your working tree and commit them${failed || run.claim ? ' anyway' : ''}? None of your git hooks runs for this commit.${sensitive}`,
    async () => {
      const r = await api('POST', `/api/runs/${run.id}/merge`, {
        commit: true,
        acknowledged: [...new Set(run.sensitive.map((s) => s.path))],
        force: Boolean(failed) || Boolean(run.claim),
        // The patch this page drew: the server refuses another one.
        ...(run.patch_sha256 ? { patch_sha256: run.patch_sha256 } : {}),
      });
      return `merged${r.commit ? ` — commit ${String(r.commit).slice(0, 12)}` : ''} — patch sha256 ${String(r.patch_sha256).slice(0, 12)}${hooksText(r)}${uncommittedText(r)}`;
    },
    waiting ? { 'aria-disabled': 'true', 'aria-describedby': 'merge-why' } : {},
  );
}

function lifeActions(run, act) {
  const status = run.state?.status;
  const post = (action, body = {}) => api('POST', `/api/runs/${run.id}/${action}`, body);
  if (
    ['REVIEW', 'DONE', 'CRASHED', 'ABORTED', 'FAILED', 'STALLED'].includes(status) &&
    run.meta.type === 'fix'
  )
    act(
      'Discard',
      'danger',
      `Remove the worktree and branch of ${run.name}? Its folder and patch are kept.`,
      async () => {
        await post('discard');
        return 'discarded';
      },
    );
  if (status === 'ACTIVE' && run.meta.type === 'interactive')
    act('Restart', '', `Restart claude in ${run.name}? Its session is resumed.`, async () => {
      await post('restart');
      return 'restarting';
    });
  if (status === 'ACTIVE') {
    act('Stop', 'danger', `Stop ${run.name}? It ends ABORTED; its patch and report are kept.`, async () => {
      await post('stop');
      return 'stopped';
    });
    act('Inject', '', null, async () => {
      const text = await askText({
        title: `Message for ${run.name}`,
        label: 'Message for the agent',
        hint: 'It gets it at its next stop. Ctrl+Enter sends.',
        send: 'Send',
      });
      if (!text) return 'nothing sent';
      await post('inject', { text });
      return 'queued';
    });
  }
  if (['CRASHED', 'ABORTED', 'STALLED'].includes(status))
    act('Resume', '', null, async () => {
      const instructions = await askText({
        title: `Resume ${run.name}`,
        label: 'More instructions (optional)',
        hint: 'The agent goes on from where it stopped, with these if you give any. Ctrl+Enter resumes.',
        send: 'Resume',
        optional: true,
      });
      if (instructions === null) return 'not resumed';
      await post('resume', instructions ? { instructions } : {});
      return 'resuming';
    });
  rerunAction(run, act, post);
}

/**
 * Re-run: the same task as a new run, with today's templates and configuration (`agentbox rerun`);
 * this run is left as it is. Offered once a headless run has ended. A fetched run's task is its
 * publication's word: the question quotes it whole, and only then is `confirm` sent.
 */
function rerunAction(run, act, post) {
  const status = run.state?.status;
  if (!status || status === 'ACTIVE' || !RERUN_TYPES.includes(run.meta.type)) return;
  const origin = run.meta.origin;
  const fetched = origin
    ? `${run.name} was fetched from ${origin.remote} (it ran on ${origin.host}). Its task is that publication's word, not checked here:\n\n${run.meta.task}\n\n`
    : '';
  act(
    'Re-run',
    '',
    `${fetched}Start this ${run.meta.type} task again as a new run, with today's templates and configuration? ${run.name} is left as it is.`,
    async () => {
      const r = await post('rerun', origin ? { confirm: true } : {});
      location.hash = `#/run/${String(r.run).slice(-6)}`;
      return `started ${r.run}, a rerun of ${run.name}${r.notice ? ` — ${r.notice}` : ''}`;
    },
  );
}

const RERUN_TYPES = ['scout', 'plan', 'fix', 'review'];
