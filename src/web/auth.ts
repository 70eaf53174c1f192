import { timingSafeEqual } from 'node:crypto';

/**
 * The UI server's checks, pure so they can be table-tested: who is asking (the bearer token or the
 * session cookie), whether the request was addressed to this server (Host, against DNS rebinding),
 * and whether a browser's request comes from the page itself (the page's key, and for a
 * state-changing request a same-origin `Origin`). A request passes all three or gets the status of
 * the first it fails.
 *
 * NOTE: a cookie is not bound to a port: the browser sends this server's cookie to every server on
 * 127.0.0.1, a dev server an agent wrote included, and that server could replay it. So a cookie
 * alone reads nothing but the page (which holds no secret): every API request needs the page's key
 * too, which the token exchange hands to the page and the page keeps in its origin's storage
 * (scheme, host and port: no other server's page reads it).
 */

export interface Secrets {
  /** The one-time token printed in the URL; API clients send it as `Authorization: Bearer`. */
  readonly token: string;
  /** The session cookie's value, set when the token is exchanged. */
  readonly session: string;
  /**
   * The page's key: handed to the page once, at the token exchange, and kept in its origin's
   * storage; every API request the page makes sends it in `x-agentbox-csrf` (the event stream, which
   * cannot send a header, as `?csrf=`). Never in the page itself, which the cookie alone reads.
   */
  readonly csrf: string;
}

export interface RequestFacts {
  readonly method: string;
  /** The path and query (`req.url`); `/` when not given. */
  readonly url?: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** Where this server answers, and the name of its cookie there. */
export interface Served {
  readonly hosts: readonly string[];
  readonly origins: readonly string[];
  readonly cookie: string;
}

export type Via = 'bearer' | 'cookie';
export type Verdict =
  | { readonly ok: true; readonly via: Via }
  | { readonly ok: false; readonly status: number; readonly reason: string };

export const CSRF_HEADER = 'x-agentbox-csrf';
/** The one request that takes the page's key in its query: an EventSource sends no header. */
const KEY_IN_QUERY = '/api/events';

/**
 * `agentbox_session_<port>`: one per server. Cookies are per host, not per port, so one name for
 * all would have a second `agentbox ui` (another repository's) log the first one's page out.
 */
export const sessionCookie = (port: number): string => `agentbox_session_${port}`;

const SAFE_METHODS = new Set(['GET', 'HEAD']);

/** Equal strings, compared in constant time (a wrong guess learns nothing from the timing). */
export function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function header(facts: RequestFacts, name: string): string | undefined {
  const value = facts.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The cookies of a `Cookie` header; a malformed pair is skipped. */
export function parseCookies(text: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (text ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (name && !out.has(name)) out.set(name, value);
  }
  return out;
}

/** The `Host` header names an address this server answers as (exactly, port included). */
export function hostAllowed(host: string | undefined, allowed: readonly string[]): boolean {
  return host !== undefined && allowed.includes(host.toLowerCase());
}

/** Who the request is from: the bearer token wins over the cookie (named `cookie`); neither is null. */
export function authenticate(facts: RequestFacts, secrets: Secrets, cookie: string): Via | null {
  const auth = header(facts, 'authorization');
  if (auth !== undefined)
    return auth.startsWith('Bearer ') && sameSecret(auth.slice(7), secrets.token) ? 'bearer' : null;
  const session = parseCookies(header(facts, 'cookie')).get(cookie);
  return sameSecret(session, secrets.session) ? 'cookie' : null;
}

/** Why a cookie request does not carry the page's key (its header, or the event stream's query), or null. */
function keyProblem(facts: RequestFacts, url: URL, secrets: Secrets): string | null {
  const inQuery =
    facts.method === 'GET' && url.pathname === KEY_IN_QUERY ? url.searchParams.get('csrf') : null;
  const given = header(facts, CSRF_HEADER) ?? inQuery ?? undefined;
  return sameSecret(given, secrets.csrf) ? null : `missing or wrong ${CSRF_HEADER} header`;
}

/**
 * A request a browser sent with the cookie must come from the page: the page's key on every API
 * request (read or write), and for a state-changing one a same-origin `Sec-Fetch-Site` and
 * `Origin`; a read must not come from another site's page. The page itself (`GET /`) holds no
 * secret and needs only the cookie. A bearer request is an API client (a browser cannot add that
 * header cross-site) and needs neither. Returns the reason to refuse, or null.
 */
export function csrfProblem(
  facts: RequestFacts,
  via: Via,
  secrets: Secrets,
  origins: readonly string[],
): string | null {
  if (via === 'bearer') return null;
  const site = header(facts, 'sec-fetch-site');
  const url = new URL(facts.url ?? '/', 'http://x');
  if (SAFE_METHODS.has(facts.method)) {
    // NOTE: a page on another port of this address is same-site: the browser sends it the
    // SameSite=Strict cookie. Only the page itself, or an address typed, may read a run's data.
    if (site !== undefined && site !== 'same-origin' && site !== 'none') return `a ${site} request`;
    return url.pathname === '/' ? null : keyProblem(facts, url, secrets);
  }
  if (site !== undefined && site !== 'same-origin') return `a ${site} request`;
  const origin = header(facts, 'origin');
  if (origin === undefined) return 'no Origin header';
  if (!origins.includes(origin.toLowerCase())) return `Origin ${origin} is not this server`;
  return keyProblem(facts, url, secrets);
}

/** All three checks in order: Host (403), token (401), CSRF (403). */
export function checkRequest(facts: RequestFacts, secrets: Secrets, served: Served): Verdict {
  if (!hostAllowed(header(facts, 'host'), served.hosts)) {
    return { ok: false, status: 403, reason: `Host ${header(facts, 'host') ?? '(none)'} is not this server` };
  }
  const via = authenticate(facts, secrets, served.cookie);
  if (via === null) return { ok: false, status: 401, reason: 'missing or wrong token' };
  const csrf = csrfProblem(facts, via, secrets, served.origins);
  if (csrf !== null) return { ok: false, status: 403, reason: csrf };
  return { ok: true, via };
}
