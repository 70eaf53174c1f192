import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureLedger, openLedger } from '../../src/ledger/index.js';
import { sessionCookie } from '../../src/web/auth.js';
import { startUiServer, type UiServer } from '../../src/web/server.js';
import { gitRepo } from '../helpers/git-repo.js';
import { request } from '../helpers/ui.js';

const SECRETS = {
  token: 'tok-paths-0123456789',
  session: 'ses-paths-0123456789',
  csrf: 'key-paths-0123456789',
};

/**
 * Spellings of a request a hostile page, local server or script may try against a real server: a
 * path, a method, the page's key somewhere else than its header. Each is checked by the same
 * parse the router uses, so none reaches a route the checks did not see; a malformed one is the
 * client's (4xx), never the server's fault (500).
 */
describe('agentbox ui: spellings of a path, a method and the key', () => {
  let ui: UiServer;
  const repo = gitRepo();
  beforeAll(async () => {
    ensureLedger(repo.dir);
    ui = await startUiServer({ root: repo.dir, ledger: openLedger(repo.dir), env: {}, secrets: SECRETS });
  });
  afterAll(() => ui?.close());

  const cookie = () => `${sessionCookie(ui.port)}=${SECRETS.session}`;
  const key = { 'x-agentbox-csrf': SECRETS.csrf };

  it.each<[string, string, Record<string, string>, number]>([
    ['GET', '/api/runs', {}, 200],
    // The key only in its header (the event stream alone takes it in its query).
    ['GET', '/api/runs?csrf=KEY', { nokey: '1' }, 403],
    ['GET', '/api/events/?csrf=KEY', { nokey: '1' }, 403],
    ['GET', '/api/runs', { nokey: '1', cookie: 'x-agentbox-csrf=KEY' }, 403],
    // A protocol-relative or absolute target is parsed as the router parses it: the key is still needed.
    ['GET', '//api/runs', { nokey: '1' }, 403],
    ['GET', 'http://evil.example/api/runs', { nokey: '1' }, 403],
    // Dot segments and encoded slashes never name a run outside the ledger.
    ['GET', '/api/runs/%2e%2e', {}, 404],
    ['GET', '/api/runs/..%2f..%2fetc', {}, 400],
    // A malformed escape is the client's.
    ['GET', '/api/runs/%E0', {}, 400],
    ['GET', '/api/runs/%', {}, 400],
    // Methods: HEAD reads nothing; OPTIONS and PATCH are refused without a same-origin Origin.
    ['HEAD', '/api/runs', {}, 404],
    ['OPTIONS', '/api/runs', {}, 403],
    ['PATCH', '/api/settings', {}, 403],
  ])('%s %s %j → %i', async (method, path, extra, status) => {
    const { nokey, cookie: more, ...rest } = extra;
    const headers: Record<string, string> = {
      cookie: more ? `${cookie()}; ${more.replace('KEY', SECRETS.csrf)}` : cookie(),
      ...(nokey ? {} : key),
      ...rest,
    };
    const answer = await request(ui.port, path.replace('KEY', SECRETS.csrf), { method, headers });
    expect(answer.status).toBe(status);
  });
});
