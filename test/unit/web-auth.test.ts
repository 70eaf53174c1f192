import { describe, expect, it } from 'vitest';
import {
  authenticate,
  checkRequest,
  csrfProblem,
  hostAllowed,
  parseCookies,
  type Secrets,
  sessionCookie,
} from '../../src/web/auth.js';

const S: Secrets = { token: 'tok-123', session: 'ses-456', csrf: 'csrf-789' };
const SERVED = {
  hosts: ['127.0.0.1:4000', 'localhost:4000'],
  origins: ['http://127.0.0.1:4000', 'http://localhost:4000'],
  cookie: sessionCookie(4000),
};
const COOKIE = 'agentbox_session_4000=ses-456';
const KEY = { 'x-agentbox-csrf': 'csrf-789' };
const PAGE = {
  host: '127.0.0.1:4000',
  cookie: COOKIE,
  origin: 'http://127.0.0.1:4000',
  'x-agentbox-csrf': 'csrf-789',
};

describe('web auth: Host, token, CSRF', () => {
  it.each([
    ['127.0.0.1:4000', true],
    ['LOCALHOST:4000', true],
    ['127.0.0.1:4001', false],
    ['evil.example:4000', false],
    ['127.0.0.1', false],
    [undefined, false],
  ])('Host %s allowed: %s', (host, ok) => {
    expect(hostAllowed(host, SERVED.hosts)).toBe(ok);
  });

  it.each<[Record<string, string>, string | null]>([
    [{ authorization: 'Bearer tok-123' }, 'bearer'],
    [{ authorization: 'Bearer tok-12' }, null],
    [{ authorization: 'Bearer tok-1234' }, null],
    [{ authorization: 'bearer tok-123' }, null],
    [{ authorization: 'Basic tok-123' }, null],
    [{ authorization: 'Bearer ses-456' }, null],
    [{ cookie: COOKIE }, 'cookie'],
    [{ cookie: `other=1; ${COOKIE}` }, 'cookie'],
    [{ cookie: 'agentbox_session_4000=tok-123' }, null],
    [{ cookie: 'agentbox_session_4000=' }, null],
    // Another server's cookie (another port of this address), and the name before ports were in it.
    [{ cookie: 'agentbox_session_4001=ses-456' }, null],
    [{ cookie: 'agentbox_session=ses-456' }, null],
    [{ authorization: 'Bearer wrong', cookie: COOKIE }, null],
    [{}, null],
  ])('%j authenticates as %s', (headers, via) => {
    expect(authenticate({ method: 'GET', headers }, S, SERVED.cookie)).toBe(via);
  });

  it.each<[string, string, Record<string, string>, 'bearer' | 'cookie', string | null]>([
    // The page itself holds no secret: the cookie alone reads it.
    ['GET', '/', { host: 'x' }, 'cookie', null],
    // Every API read needs the page's key too: a cookie is sent to every port of this address.
    ['GET', '/api/runs', { host: 'x' }, 'cookie', 'missing or wrong x-agentbox-csrf header'],
    ['GET', '/api/runs', { host: 'x', ...KEY }, 'cookie', null],
    [
      'GET',
      '/api/runs',
      { host: 'x', 'x-agentbox-csrf': 'csrf-78' },
      'cookie',
      'missing or wrong x-agentbox-csrf header',
    ],
    ['GET', '/api/runs', { host: 'x', 'sec-fetch-site': 'same-origin', ...KEY }, 'cookie', null],
    // An address typed or bookmarked: no page sent it.
    ['GET', '/', { host: 'x', 'sec-fetch-site': 'none' }, 'cookie', null],
    [
      'GET',
      '/api/runs',
      { host: 'x', 'sec-fetch-site': 'none' },
      'cookie',
      'missing or wrong x-agentbox-csrf header',
    ],
    // The event stream (an EventSource sends no header) takes the key in its query; nothing else does.
    ['GET', '/api/events?csrf=csrf-789', { host: 'x' }, 'cookie', null],
    ['GET', '/api/events?csrf=csrf-78', { host: 'x' }, 'cookie', 'missing or wrong x-agentbox-csrf header'],
    ['GET', '/api/events', { host: 'x' }, 'cookie', 'missing or wrong x-agentbox-csrf header'],
    ['GET', '/api/runs?csrf=csrf-789', { host: 'x' }, 'cookie', 'missing or wrong x-agentbox-csrf header'],
    ['GET', '/api/events/?csrf=csrf-789', { host: 'x' }, 'cookie', 'missing or wrong x-agentbox-csrf header'],
    // A page on another port of this address is same-site: the browser sends it the SameSite=Strict
    // cookie; a run's data is for the page itself.
    [
      'GET',
      '/api/runs',
      { host: 'x', 'sec-fetch-site': 'same-site', ...KEY },
      'cookie',
      'a same-site request',
    ],
    ['GET', '/', { host: 'x', 'sec-fetch-site': 'cross-site' }, 'cookie', 'a cross-site request'],
    ['GET', '/api/runs', { 'sec-fetch-site': 'same-site' }, 'bearer', null],
    ['POST', '/api/runs', PAGE, 'cookie', null],
    ['POST', '/api/runs', { ...PAGE, 'sec-fetch-site': 'same-origin' }, 'cookie', null],
    ['POST', '/api/runs', { ...PAGE, 'sec-fetch-site': 'cross-site' }, 'cookie', 'a cross-site request'],
    ['POST', '/api/runs', { ...PAGE, 'sec-fetch-site': 'same-site' }, 'cookie', 'a same-site request'],
    ['POST', '/api/runs', { host: PAGE.host, cookie: COOKIE, ...KEY }, 'cookie', 'no Origin header'],
    [
      'POST',
      '/api/runs',
      { ...PAGE, origin: 'http://evil.example' },
      'cookie',
      'Origin http://evil.example is not this server',
    ],
    ['POST', '/api/runs', { ...PAGE, origin: 'null' }, 'cookie', 'Origin null is not this server'],
    [
      'PUT',
      '/api/settings',
      { host: PAGE.host, cookie: COOKIE, origin: PAGE.origin },
      'cookie',
      'missing or wrong x-agentbox-csrf header',
    ],
    [
      'DELETE',
      '/api/runs',
      { ...PAGE, 'x-agentbox-csrf': 'csrf-78' },
      'cookie',
      'missing or wrong x-agentbox-csrf header',
    ],
    // A write never takes the key from its query.
    [
      'POST',
      '/api/events?csrf=csrf-789',
      { host: PAGE.host, cookie: COOKIE, origin: PAGE.origin },
      'cookie',
      'missing or wrong x-agentbox-csrf header',
    ],
    ['POST', '/api/runs', { authorization: 'Bearer tok-123' }, 'bearer', null],
  ])('%s %s %j via %s: %s', (method, url, headers, via, problem) => {
    expect(csrfProblem({ method, url, headers }, via, S, SERVED.origins)).toBe(problem);
  });

  it('checkRequest: Host first (403), then the token (401), then CSRF (403)', () => {
    expect(checkRequest({ method: 'POST', headers: { host: 'evil:4000' } }, S, SERVED)).toMatchObject({
      ok: false,
      status: 403,
    });
    expect(checkRequest({ method: 'POST', headers: { host: PAGE.host } }, S, SERVED)).toMatchObject({
      ok: false,
      status: 401,
    });
    expect(
      checkRequest({ method: 'POST', headers: { host: PAGE.host, cookie: COOKIE } }, S, SERVED),
    ).toMatchObject({ ok: false, status: 403 });
    expect(checkRequest({ method: 'POST', headers: PAGE }, S, SERVED)).toEqual({ ok: true, via: 'cookie' });
    expect(checkRequest({ method: 'GET', headers: { host: PAGE.host, cookie: COOKIE } }, S, SERVED)).toEqual({
      ok: true,
      via: 'cookie',
    });
    const read = { method: 'GET', url: '/api/runs' };
    expect(checkRequest({ ...read, headers: { host: PAGE.host, cookie: COOKIE } }, S, SERVED)).toMatchObject({
      ok: false,
      status: 403,
    });
    expect(
      checkRequest({ ...read, headers: { host: PAGE.host, cookie: COOKIE, ...KEY } }, S, SERVED),
    ).toEqual({
      ok: true,
      via: 'cookie',
    });
  });

  it('parses cookies, first one of a name wins, malformed pairs skipped', () => {
    expect([...parseCookies('a=1; b = 2 ;=3; c; a=4')]).toEqual([
      ['a', '1'],
      ['b', '2'],
    ]);
    expect(parseCookies(undefined).size).toBe(0);
  });
});
