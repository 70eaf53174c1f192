// The token exchange's answer (`/?token=…`, src/web/server.ts): the page's key, which every API
// request sends (web/api.js), kept in this origin's storage and nowhere else. The session cookie
// alone is not enough: a browser sends it to every server on this address, whatever the port, and
// only this origin's pages read its storage. Then the page, at the clean URL with the place the
// printed address named after it, if any (`…/?token=…#/run/<id>`), as a redirect would keep it.
const KEY = 'agentbox.key';
const key = document.querySelector('meta[name="agentbox-key"]').content;
try {
  localStorage.setItem(KEY, key);
  location.replace(`/${location.hash}`);
} catch {
  document.getElementById('login').textContent =
    'This browser keeps no storage for this page (a private window that refuses it?), and agentbox ui needs it to keep your login: open the address in a normal window.';
}
