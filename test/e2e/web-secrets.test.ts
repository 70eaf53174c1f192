import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { waitFor } from '../helpers/pty.js';
import { CHROMIUM, launchChromium, request, startUi } from '../helpers/ui.js';

/** A free port, chosen the way a hostile repository would pick one for its committed state. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/**
 * A cloned repository that carries `.agents/ui/state.json` (a token and port of its author's
 * choosing, world-readable) does not choose the web UI's token: `agentbox ui` never reads it,
 * removes it, says so, and keeps its own secrets in the person's state dir.
 */
describe('agentbox ui and a committed .agents/ui/state.json', () => {
  let p: Project;
  beforeAll(async () => {
    p = await project();
  });
  afterAll(async () => p?.cleanup());

  it('the chosen token and port are not used; the file is removed and the person told', async () => {
    const chosen = {
      token: 'T'.repeat(32),
      session: 'S'.repeat(32),
      csrf: 'C'.repeat(32),
      port: await freePort(),
    };
    const legacy = path.join(p.repo.dir, '.agents', 'ui', 'state.json');
    fs.mkdirSync(path.dirname(legacy), { recursive: true });
    fs.writeFileSync(legacy, JSON.stringify(chosen), { mode: 0o644 });
    const ui = await startUi(p.repo.dir, p.env);
    try {
      expect(ui.token).not.toBe(chosen.token);
      expect(ui.port).not.toBe(chosen.port);
      expect((await request(ui.port, `/api/runs?token=${chosen.token}`)).status).toBe(401);
      expect(
        (await request(ui.port, '/api/runs', { headers: { authorization: `Bearer ${chosen.token}` } }))
          .status,
      ).toBe(401);
      expect(
        (
          await request(ui.port, '/api/runs', {
            headers: {
              cookie: `agentbox_session_${ui.port}=${chosen.session}`,
              'x-agentbox-csrf': chosen.csrf,
            },
          })
        ).status,
      ).toBe(401);
      expect(ui.output()).toContain(`removed ${legacy} without using it`);
      expect(fs.existsSync(legacy)).toBe(false);
      const uiDir = path.join(p.home.home, '.local', 'state', 'agentbox', 'ui');
      const [id] = fs.readdirSync(uiDir);
      const kept = path.join(uiDir, id!, 'state.json');
      expect(JSON.parse(fs.readFileSync(kept, 'utf8')).token).toBe(ui.token);
      expect(fs.statSync(kept).mode & 0o777).toBe(0o600);
    } finally {
      await ui.stop();
    }
    // Widened by someone else: not used again, replaced, and said.
    const uiDir = path.join(p.home.home, '.local', 'state', 'agentbox', 'ui');
    const kept = path.join(uiDir, fs.readdirSync(uiDir)[0]!, 'state.json');
    const before = JSON.parse(fs.readFileSync(kept, 'utf8')).token;
    fs.chmodSync(kept, 0o644);
    const again = await startUi(p.repo.dir, p.env);
    try {
      expect(again.token).not.toBe(before);
      expect(again.output()).toMatch(/not using .*state\.json: its mode is 0644, not 0600/);
    } finally {
      await again.stop();
    }
  }, 60_000);

  it("opens the browser on a file of the person's, so the token is on no command line other users read", async () => {
    if (!CHROMIUM) throw new Error('no Chromium: apt-get install -y chromium, or set CHROMIUM_PATH');
    const argv = path.join(p.home.home, 'opener-argv.txt');
    const opener = path.join(p.home.home, 'opener.sh');
    fs.writeFileSync(opener, `#!/bin/sh\nprintf '%s\\n' "$@" > '${argv}'\n`, { mode: 0o755 });
    const ui = await startUi(p.repo.dir, { ...p.env, BROWSER: opener }, [], undefined, { open: true });
    const browser = await launchChromium();
    try {
      await waitFor(() => fs.existsSync(argv) && fs.readFileSync(argv, 'utf8').includes('\n'), 'the opener');
      const [arg, ...rest] = fs.readFileSync(argv, 'utf8').trim().split('\n');
      expect(rest).toEqual([]);
      expect(arg).toMatch(/^file:\/\/\/.*\/open\.html$/);
      expect(arg).not.toContain(ui.token);
      const file = fileURLToPath(arg!);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
      expect(fs.readFileSync(file, 'utf8')).toContain(`url=${ui.loginUrl}"`);
      // The file sends the browser on to the login: the page, logged in.
      const page = await browser.newPage();
      await page.goto(arg!);
      await page.waitForURL(`${ui.url}/`);
      await page.getByRole('heading', { name: 'Runs' }).waitFor();
    } finally {
      await browser.close();
      await ui.stop();
    }
  });

  it('leaves no process behind', async () => {
    await expectNoProcessesLeft(p.tag);
  });
});
