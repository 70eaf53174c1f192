// The page agentbox ui answers a browser it does not know yet (no session cookie: a link opened in
// a fresh browser). The token exchange (`/?token=…`, src/web/server.ts) ends at the clean `/`,
// which would drop the place the link named (`#/run/<id>/entry/…`): it is kept here, in this
// origin's storage, and the page goes there after the exchange (web/deep-link.js).
const place = location.hash;
if (/^#\/(run|group)\/\S{1,500}$/.test(place)) {
  try {
    localStorage.setItem('agentbox.after-login', JSON.stringify({ hash: place, at: Date.now() }));
    const note = document.createElement('p');
    note.id = 'kept';
    note.textContent = 'The place this link points to is kept: the page opens there once you are logged in.';
    document.body.append(note);
  } catch {
    // No storage (a private window that refuses it): the link opens the runs list after the login.
  }
}
