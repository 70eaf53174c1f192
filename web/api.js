// The JSON API, as the page's only way to the server: every request carries the page's key, which
// the token exchange kept in this origin's storage (web/login-done.js), and a failure is thrown with
// its status and the server's `{ error }`.

/** The page's key; '' when this browser has none (it logged in before keys, or its storage was cleared). */
export function storedKey() {
  try {
    return localStorage.getItem('agentbox.key') ?? '';
  } catch {
    return '';
  }
}

/** `headers`: more request headers (the new-run form's Idempotency-Key). */
export async function api(method, path, body, headers = {}) {
  const res = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers:
      body === undefined
        ? { ...headers, 'x-agentbox-csrf': storedKey() }
        : { ...headers, 'content-type': 'application/json', 'x-agentbox-csrf': storedKey() },
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
