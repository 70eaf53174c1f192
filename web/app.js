// agentbox ui: the page's entry module. Native ES modules, no framework, no build step: each view
// is its own module (runs.js, run.js, new-run.js, settings.js), drawn with the helpers of dom.js
// and api.js. This one routes the hash to a view and redraws it when the ledger changes (SSE).
// The page's Content-Security-Policy runs no inline script, and nothing from another origin.
import { h, main } from './dom.js';
import { showNew } from './new-run.js';
import { notifyEnded } from './notify.js';
import { showRun } from './run.js';
import { showRuns } from './runs.js';
import { showSettings } from './settings.js';

/** Draws are queued, one after another: a redraw never interleaves with the one before. */
let rendering = Promise.resolve();
function render() {
  rendering = rendering.then(async () => {
    const [, page, arg] = location.hash.split('/');
    try {
      if (page === 'run' && arg) await showRun(decodeURIComponent(arg), render);
      // A form being filled is not drawn again under the person's hands.
      else if (page === 'new') {
        if (!document.getElementById('new-run')) showNew();
      } else if (page === 'settings') {
        if (!document.getElementById('settings')) await showSettings(render);
      } else await showRuns(render);
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
