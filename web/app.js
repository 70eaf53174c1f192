// agentbox ui: the page's entry module. Native ES modules, no framework, no build step: each view
// is its own module (runs.js, run.js, new-run.js, settings.js), drawn with the helpers of dom.js
// and api.js. This one routes the hash to a view and redraws it when the ledger changes (SSE).
// The page's Content-Security-Policy runs no inline script, and nothing from another origin.
import { api, storedKey } from './api.js';
import { restoreAfterLogin } from './deep-link.js';
import { h, main, pageKey, tickAges } from './dom.js';
import { showGroup } from './group.js';
import { showNew } from './new-run.js';
import { notifyEnded } from './notify.js';
import { showRun } from './run.js';
import { forgetPlace } from './run-place.js';
import { showRuns } from './runs.js';
import { showSettings } from './settings.js';

/** Draws are queued, one after another: a redraw never interleaves with the one before. */
let rendering = Promise.resolve();
function render() {
  rendering = rendering.then(async () => {
    const [, page, arg] = location.hash.split('/');
    if (!storedKey()) {
      delete main.dataset.page;
      main.replaceChildren(h('p', { class: 'panel warn' }, NO_KEY));
      return;
    }
    try {
      if (page === 'run' && arg) await showRun(decodeURIComponent(arg), render);
      else if (page === 'group' && arg) await showGroup(decodeURIComponent(arg), render);
      // A form being filled is not drawn again under the person's hands.
      else if (page === 'new') {
        if (!document.getElementById('new-run')) showNew();
      } else if (page === 'settings') {
        if (!document.getElementById('settings')) await showSettings(render);
      } else await showRuns(render);
      document.body.dataset.rendered = String(Date.now());
    } catch (e) {
      delete main.dataset.page;
      main.replaceChildren(h('p', { class: 'panel warn' }, `Could not load: ${e.message}`));
    }
  });
  return rendering;
}

let pending;
const GONE = 'agentbox ui is not answering — reconnecting…';
/** A server that answers but no longer knows this browser (`agentbox ui --new-token`). */
const LOGGED_OUT = 'agentbox ui no longer knows this page — open the address it printed';
/** A browser with the cookie but not the page's key (logged in before keys, or its storage cleared). */
const NO_KEY =
  'This browser has no login for this page: open the address agentbox ui printed (it carries the token).';

/** The connection, said in words beside the dot: a grey dot alone told nobody the server was gone. */
function showLive(on, text = GONE) {
  document.getElementById('live').classList.toggle('on', on);
  document.getElementById('live-text').textContent = on ? '' : text;
}

function connect() {
  // An EventSource sends no header: the page's key goes in the query (src/web/auth.ts).
  const source = new EventSource(`/api/events?csrf=${encodeURIComponent(storedKey())}`);
  // Each time the stream opens, the page is drawn again: a change that fell between the first draw
  // (made at once, not after the browser's ~25 ms to open the stream) and the stream is not lost.
  // The runs' statuses notifications compare with are read after the draw: the server answers the
  // page's own requests first.
  source.onopen = () => {
    showLive(true);
    render().then(notifyEnded);
  };
  source.onerror = () => {
    showLive(false);
    // EventSource reconnects by itself, except after an answer that was not a stream (a server
    // that was starting or stopping): then a new one, until the server answers.
    if (source.readyState !== EventSource.CLOSED) return;
    api('GET', '/api/runs?limit=1').then(
      () => setTimeout(connect, 1000),
      (e) => (e.status === 401 || e.status === 403 ? showLive(false, LOGGED_OUT) : setTimeout(connect, 1000)),
    );
  };
  source.addEventListener('change', () => {
    clearTimeout(pending);
    pending = setTimeout(() => {
      // Not while the person types (a redraw would move what they type into); once they leave the
      // box, the change they were spared is drawn (the page stayed on the old patch for good).
      if (document.activeElement?.tagName !== 'TEXTAREA') render();
      else missed = true;
      notifyEnded();
    }, 50);
  });
}

/** A change came while a text box had the focus: drawn once the focus leaves the boxes. */
let missed = false;
document.addEventListener('focusout', () =>
  setTimeout(() => {
    if (!missed || document.activeElement?.tagName === 'TEXTAREA') return;
    missed = false;
    render();
  }, 0),
);

window.addEventListener('hashchange', () => {
  // Another place on the same run's page (a deep link): drawn in place, the page goes there.
  if (main.dataset.page === pageKey()) {
    render();
    return;
  }
  delete main.dataset.page;
  forgetPlace();
  render();
  main.focus();
});
// The place a link asked for before the token exchange (web/login.js kept it).
restoreAfterLogin();
document.getElementById('live').after(h('span', { id: 'live-text', class: 'live-text', role: 'status' }));
render();
connect();
// Ages count up between updates, from the browser's clock.
setInterval(tickAges, 1000);
