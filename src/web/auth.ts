import { timingSafeEqual } from 'node:crypto';

/**
 * The UI server's checks, pure so they can be table-tested: who is asking (the bearer token or the
 * session cookie), whether the request was addressed to this server (Host, against DNS rebinding),
 * and whether a state-changing request from a browser comes from the page itself (CSRF token and
 * same-origin `Origin`). A request passes all three or gets the status of the first it fails.
 */

export interface Secrets {
  /** The one-time token printed in the URL; API clients send it as `Authorization: Bearer`. */
  readonly token: string;
  /** The session cookie's value, set when the token is exchanged. */
  readonly session: string;
  /** What a page's state-changing request sends in `x-agentbox-csrf`. */
  readonly csrf: string;
}

export interface RequestFacts {
  readonly method: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export type Via = 'bearer' | 'cookie';
export type Verdict =
  | { readonly ok: true; readonly via: Via }
  | { readonly ok: false; readonly status: number; readonly reason: string };

export const SESSION_COOKIE = 'agentbox_session';
export const CSRF_HEADER = 'x-agentbox-csrf';

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

/** Who the request is from: the bearer token wins over the cookie; neither is null. */
export function authenticate(facts: RequestFacts, secrets: Secrets): Via | null {
  const auth = header(facts, 'authorization');
  if (auth !== undefined)
    return auth.startsWith('Bearer ') && sameSecret(auth.slice(7), secrets.token) ? 'bearer' : null;
  const cookie = parseCookies(header(facts, 'cookie')).get(SESSION_COOKIE);
  return sameSecret(cookie, secrets.session) ? 'cookie' : null;
}

/**
 * A state-changing request that a browser sent with the cookie must come from the page: its CSRF
 * token, and a same-origin `Sec-Fetch-Site` or `Origin`; a read must not come from another site's
 * page. A bearer request is an API client (a browser cannot add that header cross-site) and needs
 * neither. Returns the reason to refuse, or null.
 */
export function csrfProblem(
  facts: RequestFacts,
  via: Via,
  secrets: Secrets,
  origins: readonly string[],
): string | null {
  if (via === 'bearer') return null;
  const site = header(facts, 'sec-fetch-site');
  if (SAFE_METHODS.has(facts.method)) {
    // NOTE: a read with the cookie acts too (it records the patch as shown to the person, which
    // merge's gate reads), and a page on another port of this address is same-site: the browser
    // sends it the SameSite=Strict cookie. Only the page itself, or an address typed, may read.
    return site === undefined || site === 'same-origin' || site === 'none' ? null : `a ${site} request`;
  }
  if (site !== undefined && site !== 'same-origin') return `a ${site} request`;
  const origin = header(facts, 'origin');
  if (origin === undefined) return 'no Origin header';
  if (!origins.includes(origin.toLowerCase())) return `Origin ${origin} is not this server`;
  if (!sameSecret(header(facts, CSRF_HEADER), secrets.csrf)) return `missing or wrong ${CSRF_HEADER} header`;
  return null;
}

/** All three checks in order: Host (403), token (401), CSRF (403). */
export function checkRequest(
  facts: RequestFacts,
  secrets: Secrets,
  served: { readonly hosts: readonly string[]; readonly origins: readonly string[] },
): Verdict {
  if (!hostAllowed(header(facts, 'host'), served.hosts)) {
    return { ok: false, status: 403, reason: `Host ${header(facts, 'host') ?? '(none)'} is not this server` };
  }
  const via = authenticate(facts, secrets);
  if (via === null) return { ok: false, status: 401, reason: 'missing or wrong token' };
  const csrf = csrfProblem(facts, via, secrets, served.origins);
  if (csrf !== null) return { ok: false, status: 403, reason: csrf };
  return { ok: true, via };
}
