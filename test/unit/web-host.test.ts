import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { run as cli } from '../../src/cli/run.js';
import { memoryIo } from '../../src/context.js';
import { ensureLedger, openLedger } from '../../src/ledger/index.js';
import { startUiServer } from '../../src/web/server.js';
import { GIT_ENV, gitRepo, tempDir } from '../helpers/git-repo.js';

const SECRETS = {
  token: 'host-token-0123456789',
  session: 'host-session-0123456',
  csrf: 'host-key-0123456789',
};

/** A GET to `::1` with the Host header given. */
function getV6(port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '::1', port, path: '/api/runs', headers: { host, authorization: `Bearer ${SECRETS.token}` } },
      (res) => {
        res.resume();
        resolve(res.statusCode!);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('agentbox ui --host', () => {
  it('an IPv6 address is served as a URL and a Host header name it: in brackets', async () => {
    const repo = gitRepo();
    ensureLedger(repo.dir);
    const ui = await startUiServer({
      root: repo.dir,
      ledger: openLedger(repo.dir),
      env: {},
      secrets: SECRETS,
      host: '::1',
    });
    try {
      expect(ui.url).toBe(`http://[::1]:${ui.port}`);
      expect(ui.loginUrl).toBe(`http://[::1]:${ui.port}/?token=${SECRETS.token}`);
      expect(await getV6(ui.port, `[::1]:${ui.port}`)).toBe(200);
      expect(await getV6(ui.port, `::1:${ui.port}`)).toBe(403);
      expect(await getV6(ui.port, `127.0.0.1:${ui.port}`)).toBe(403);
    } finally {
      await ui.close();
    }
  });

  it.each(['0.0.0.0', '::', '[::]'])(
    '%s (every address) is refused with the address to give instead',
    async (host) => {
      const repo = gitRepo();
      ensureLedger(repo.dir);
      const io = memoryIo();
      const env = { ...GIT_ENV, PATH: process.env.PATH!, HOME: tempDir('agentbox-home-') };
      const code = await cli(['ui', '--no-open', '--host', host], { cwd: repo.dir, env, io });
      expect(code).toBe(2);
      expect(io.stderr).toContain(`agentbox ui --host "${host}": that listens on every address`);
      expect(io.stderr).toContain('agentbox ui --host 192.168.1.5');
      expect(io.stdout).not.toContain('token=');
    },
  );

  // Found by a user's eye: only the literal spellings were refused, and `--host 0` served the API
  // on every interface. What the kernel bound is checked now, however the address was spelt.
  it.each(['0', '0.0.0.00', '::0', '0:0:0:0:0:0:0:0'])(
    '%s (every address, spelt otherwise) is refused once bound, and nothing listens',
    async (host) => {
      const repo = gitRepo();
      ensureLedger(repo.dir);
      const io = memoryIo();
      const env = { ...GIT_ENV, PATH: process.env.PATH!, HOME: tempDir('agentbox-home-') };
      const code = await cli(['ui', '--no-open', '--host', host, '--port', '0'], { cwd: repo.dir, env, io });
      expect(code, io.stderr).toBe(2);
      expect(io.stderr).toContain(`"${host}" is every address of this machine`);
      expect(io.stderr).toContain('--host 192.168.1.5');
      expect(io.stdout).not.toContain('token=');
    },
  );
});
