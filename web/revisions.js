// A revised fix run's patch sets on its page (issue 39): which revision it is on, and each
// revision with the person's review, its cost, duration and verify result, and its own change
// (its interdiff, GET /api/runs/<run>/revisions/<k>/interdiff) drawn as the run's diff is.
import { api } from './api.js';
import { drawDiff } from './diff.js';
import { badge, h, usd } from './dom.js';

const seconds = (ms) => (ms < 60_000 ? `${(ms / 1000).toFixed(1)}s` : `${Math.round(ms / 60_000)}m`);

const verifyText = (v) =>
  v === null || v === undefined ? 'runs.verify not run' : v ? 'runs.verify passed' : 'runs.verify FAILED';

/** The "Revisions" section: nothing for a run never revised. */
export function revisionsSection(run) {
  const revisions = run.revisions ?? [];
  if (revisions.length === 0) return [];
  const on = run.state?.revision?.number ?? 1;
  const running = run.state?.status === 'ACTIVE';
  return [
    h('h2', { id: 'revisions-title' }, 'Revisions'),
    h(
      'p',
      { id: 'revision-now' },
      `On revision ${on} of ${revisions.length}${running ? ', running now' : ''}.`,
    ),
    h(
      'ol',
      { id: 'revisions', 'aria-labelledby': 'revisions-title' },
      revisions.map((r) => revisionItem(run, r)),
    ),
  ];
}

function revisionItem(run, r) {
  const rec = r.record;
  const facts = rec
    ? [
        ' ',
        badge(rec.status),
        ` · ${verifyText(rec.verified)} · ${usd(rec.cost_usd)} · ${seconds(rec.duration_ms)}`,
        // A fetched run's revisions are its publication's word, as its status is (run.claim).
        run.claim ? ' (claimed)' : null,
      ]
    : [' — running'];
  return h(
    'li',
    { 'data-key': `revision-${r.revision}`, class: 'revision', 'data-revision': r.revision },
    h('strong', {}, `Revision ${r.revision}`),
    ...facts,
    r.feedback === null
      ? r.revision === 1
        ? h('p', { class: 'muted' }, 'The task, as the run first ran.')
        : null
      : h(
          'details',
          { class: 'feedback' },
          h('summary', {}, 'Feedback'),
          h('pre', {}, r.feedback),
          r.feedback_cut
            ? h(
                'p',
                { class: 'muted' },
                `Cut here: ${r.feedback_cut} bytes in all, in revisions/${r.revision}/feedback.md of the run's folder.`,
              )
            : null,
        ),
    r.interdiff ? interdiffDetails(run, r.revision) : null,
  );
}

/** Its own change, fetched and drawn when first opened. */
function interdiffDetails(run, k) {
  const target = h('div', { class: 'interdiff', id: `interdiff-${k}`, 'data-sig': `interdiff-${k}` });
  return h(
    'details',
    {
      class: 'interdiff-box',
      ontoggle: async (e) => {
        const box = e.target.querySelector('.interdiff');
        if (!e.target.open || !box || box.dataset.drawn) return;
        box.dataset.drawn = '1';
        const answer = await api('GET', `/api/runs/${run.id}/revisions/${k}/interdiff`);
        if (answer.patch === null)
          box.replaceChildren(h('p', {}, `Too large to show here: agentbox diff ${run.id} --revision ${k}`));
        else if (answer.patch === '') box.replaceChildren(h('p', { class: 'muted' }, 'It changed nothing.'));
        else {
          await drawDiff(box, answer.patch, `revision ${k}`);
          if (answer.claimed)
            box.prepend(
              h(
                'p',
                { class: 'muted' },
                'Against the earlier revision as its publication claims it (not checked here); the last revision ends on the patch Merge applies.',
              ),
            );
        }
      },
    },
    h('summary', {}, `Revision ${k}'s own change (interdiff)`),
    target,
  );
}
