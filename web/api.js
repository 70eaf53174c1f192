// The JSON API, as the page's only way to the server: every request carries the CSRF token the
// server put in the page, and a failure is thrown with its status and the server's `{ error }`.

const CSRF = document.querySelector('meta[name="csrf"]').content;

/** `headers`: more request headers (the new-run form's Idempotency-Key). */
export async function api(method, path, body, headers = {}) {
  const res = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers:
      body === undefined
        ? { ...headers, 'x-agentbox-csrf': CSRF }
        : { ...headers, 'content-type': 'application/json', 'x-agentbox-csrf': CSRF },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = new Error(data.error || `${res.status}`);
    err.status = res.status;
    err.data = data;
    throw err;
  }
  return data;
}
