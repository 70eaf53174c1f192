import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateState } from '../../src/ledger/index.js';
import { patchSha256 } from '../../src/ledger/reviewed.js';
import { startUiServer, type UiServer } from '../../src/web/server.js';
import { request } from '../helpers/ui.js';
import { create, ledgerRepo } from './fixtures/ledger.js';

const SECRETS = {
  token: 'shown-token-0123456789',
  session: 'shown-session-01234',
  csrf: 'shown-key-0123456789',
};
const bearer = { authorization: `Bearer ${SECRETS.token}` };

/**
 * A patch is recorded as shown (what `merge --yes` compares with what it applies) only when the
 * page says it drew it where the person sees it — `POST /api/runs/<run>/shown` with its hash —
 * never by a read: a script polling the API, or a tab in the background, has shown nobody anything.
 */
describe('POST /api/runs/<run>/shown', () => {
  const { repo, ledger } = ledgerRepo();
  let ui: UiServer;
  beforeAll(async () => {
    ui = await startUiServer({ root: repo.dir, ledger, env: {}, secrets: SECRETS });
  });
  afterAll(() => ui?.close());

  const fixRun = async (patch: string | null) => {
    const run = await create(ledger, 'add x', '2026-03-01T10:00:00Z', { type: 'fix' });
    await updateState(ledger, run.name, { status: 'REVIEW' });
    if (patch !== null) fs.writeFileSync(path.join(run.dir, 'changes.patch'), patch);
    const reviewed = () => {
      const file = path.join(run.dir, 'reviewed.jsonl');
      return fs.existsSync(file)
        ? fs
            .readFileSync(file, 'utf8')
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l))
        : [];
    };
    return { run, reviewed };
  };
  const post = (id: string, body: unknown) =>
    request(ui.port, `/api/runs/${id}/shown`, {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const PATCH = 'diff --git a/x b/x\nnew file mode 100644\n--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+x\n';

  it('reads record nothing; the hash the page drew is recorded once; another is 409 and recorded not', async () => {
    const { run, reviewed } = await fixRun(PATCH);
    const sha = patchSha256(run.dir)!;
    const detail = await request(ui.port, `/api/runs/${run.id}`, { headers: bearer });
    expect(detail.status).toBe(200);
    expect(detail.json().patch_sha256).toBe(sha);
    expect((await request(ui.port, `/api/runs/${run.id}/diff`, { headers: bearer })).status).toBe(200);
    expect(reviewed()).toEqual([]);

    const other = 'f'.repeat(64);
    const stale = await post(run.id, { patch_sha256: other });
    expect(stale.status).toBe(409);
    expect(stale.json()).toMatchObject({ code: 'PATCH_CHANGED', patch_sha256: sha });
    expect(stale.json().error).toContain(
      `the patch changed since the page drew it: ${'f'.repeat(12)} → ${sha.slice(0, 12)}`,
    );
    expect(reviewed()).toEqual([]);

    for (const bad of [{}, { patch_sha256: 'abc' }, { patch_sha256: sha.toUpperCase() }, { patch_sha256: 1 }])
      expect((await post(run.id, bad)).status, JSON.stringify(bad)).toBe(400);
    expect(reviewed()).toEqual([]);

    const ok = await post(run.id, { patch_sha256: sha });
    expect([ok.status, ok.json()]).toEqual([200, { run: run.name, patch_sha256: sha, recorded: true }]);
    expect((await post(run.id, { patch_sha256: sha })).status).toBe(200);
    expect(reviewed()).toEqual([expect.objectContaining({ event: 'shown', sha256: sha, by: 'ui' })]);
  });

  it('a run without a patch is 404, an unknown run 404; nothing written', async () => {
    const { run, reviewed } = await fixRun(null);
    expect((await post(run.id, { patch_sha256: 'a'.repeat(64) })).status).toBe(404);
    expect((await post('zzzzzz', { patch_sha256: 'a'.repeat(64) })).status).toBe(404);
    expect(reviewed()).toEqual([]);
  });

  it("a browser's record needs the page's key, like every write", async () => {
    const { run, reviewed } = await fixRun(PATCH);
    const sha = patchSha256(run.dir)!;
    const answer = await request(ui.port, `/api/runs/${run.id}/shown`, {
      method: 'POST',
      headers: {
        cookie: `agentbox_session_${ui.port}=${SECRETS.session}`,
        origin: ui.url,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ patch_sha256: sha }),
    });
    expect(answer.status).toBe(403);
    expect(reviewed()).toEqual([]);
  });
});
