import { describe, expect, it } from 'vitest';
import {
  authenticate,
  checkRequest,
  csrfProblem,
  hostAllowed,
  parseCookies,
  type Secrets,
} from '../../src/web/auth.js';

const S: Secrets = { token: 'tok-123', session: 'ses-456', csrf: 'csrf-789' };
const SERVED = {
  hosts: ['127.0.0.1:4000', 'localhost:4000'],
  origins: ['http://127.0.0.1:4000', 'http://localhost:4000'],
};
const COOKIE = 'agentbox_session=ses-456';
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
    [{ cookie: 'agentbox_session=tok-123' }, null],
    [{ cookie: 'agentbox_session=' }, null],
    [{ authorization: 'Bearer wrong', cookie: COOKIE }, null],
    [{}, null],
  ])('%j authenticates as %s', (headers, via) => {
    expect(authenticate({ method: 'GET', headers }, S)).toBe(via);
  });

  it.each<[string, Record<string, string>, 'bearer' | 'cookie', string | null]>([
    ['GET', { host: 'x' }, 'cookie', null],
    ['GET', { host: 'x', 'sec-fetch-site': 'same-origin' }, 'cookie', null],
    // An address typed or bookmarked: no page sent it.
    ['GET', { host: 'x', 'sec-fetch-site': 'none' }, 'cookie', null],
    // A page on another port of this address is same-site: the browser sends it the SameSite=Strict
    // cookie, and a read can act (it records the patch as shown to the person, for merge's gate).
    ['GET', { host: 'x', 'sec-fetch-site': 'same-site' }, 'cookie', 'a same-site request'],
    ['GET', { host: 'x', 'sec-fetch-site': 'cross-site' }, 'cookie', 'a cross-site request'],
    ['GET', { 'sec-fetch-site': 'same-site' }, 'bearer', null],
    ['POST', PAGE, 'cookie', null],
    ['POST', { ...PAGE, 'sec-fetch-site': 'same-origin' }, 'cookie', null],
    ['POST', { ...PAGE, 'sec-fetch-site': 'cross-site' }, 'cookie', 'a cross-site request'],
    ['POST', { ...PAGE, 'sec-fetch-site': 'same-site' }, 'cookie', 'a same-site request'],
    [
      'POST',
      { host: PAGE.host, cookie: COOKIE, 'x-agentbox-csrf': 'csrf-789' },
      'cookie',
      'no Origin header',
    ],
    [
      'POST',
      { ...PAGE, origin: 'http://evil.example' },
      'cookie',
      'Origin http://evil.example is not this server',
    ],
    ['POST', { ...PAGE, origin: 'null' }, 'cookie', 'Origin null is not this server'],
    [
      'PUT',
      { host: PAGE.host, cookie: COOKIE, origin: PAGE.origin },
      'cookie',
      'missing or wrong x-agentbox-csrf header',
    ],
    [
      'DELETE',
      { ...PAGE, 'x-agentbox-csrf': 'csrf-78' },
      'cookie',
      'missing or wrong x-agentbox-csrf header',
    ],
    ['POST', { authorization: 'Bearer tok-123' }, 'bearer', null],
  ])('%s %j via %s: %s', (method, headers, via, problem) => {
    expect(csrfProblem({ method, headers }, via, S, SERVED.origins)).toBe(problem);
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
  });

  it('parses cookies, first one of a name wins, malformed pairs skipped', () => {
    expect([...parseCookies('a=1; b = 2 ;=3; c; a=4')]).toEqual([
      ['a', '1'],
      ['b', '2'],
    ]);
    expect(parseCookies(undefined).size).toBe(0);
  });
});
