// The run page's buttons: what the gate offers for the run's status (merge, discard, restart,
// stop, inject, resume), each the CLI's command behind a POST, most behind a confirmation.
import { api } from './api.js';
import { h, toast } from './dom.js';

/** `it ended ABORTED — agent_abort: …`: why a run did not pass (src/gate/merge-gate.ts). */
export const notPassingText = (np) =>
  `${np.status === 'REVIEW' ? 'it ended REVIEW but its checks failed' : `it ended ${np.status}`}${np.reasons.length ? ` — ${np.reasons.join('; ')}` : ''}`;

/** The buttons for `run` (GET /api/runs/:id); each redraws the page once it is answered. */
export function runActions(run, redraw) {
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
            redraw();
          },
        },
        label,
      ),
    );
  mergeAction(run, act);
  lifeActions(run, act);
  return actions;
}

/**
 * A run that did not pass (not REVIEW, or runs.verify failed) can be merged too, but the button
 * says so and the confirmation names its status first (as `agentbox merge` does).
 */
function mergeAction(run, act) {
  const status = run.state?.status;
  const failed = run.not_passing;
  if (!((status === 'REVIEW' || failed) && run.files.includes('changes.patch'))) return;
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
      const text = window.prompt('Message for the agent (it gets it at its next stop):');
      if (!text) return 'nothing sent';
      await post('inject', { text });
      return 'queued';
    });
  }
  if (['CRASHED', 'ABORTED', 'STALLED'].includes(status))
    act('Resume', '', null, async () => {
      const instructions = window.prompt('More instructions (optional):') ?? '';
      await post('resume', instructions ? { instructions } : {});
      return 'resuming';
    });
}
