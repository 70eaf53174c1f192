import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { diff } from '../../src/commands/diff.js';
import { merge } from '../../src/commands/merge.js';
import { type CommandContext, memoryIo } from '../../src/context.js';
import type { AgentboxError } from '../../src/errors.js';
import { recordShown } from '../../src/ledger/reviewed.js';
import { GIT_ENV } from '../helpers/git-repo.js';
import { reviewRun } from './fixtures/review-run.js';

/*
 * merge's next steps lead somewhere (found by a tester): with no terminal, a patch that changed
 * since it was shown pointed to `merge --yes`, which refuses that patch until it is shown again;
 * an already merged run said so with no next step at all.
 */

const fixRun = () => reviewRun({ files: { 'a.txt': 'a\n' }, agent: { 'a.txt': 'b\n' }, task: 'change a' });
const context = (cwd: string) => ({ cwd, env: {}, io: memoryIo() }) as CommandContext;
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('merged');
    },
    (e: unknown) => e as AgentboxError,
  );

describe("merge's hints lead to a command that goes on", () => {
  beforeAll(() => {
    for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
  });
  afterAll(() => vi.unstubAllEnvs());

  it('no terminal, the patch changed since it was shown: the hint shows it first (diff), then merge', async () => {
    const r = await fixRun();
    recordShown(r.dir, 'f'.repeat(64), 'diff');
    const error = await refusal(merge(context(r.repo.dir), r.id, {}));
    expect(error.message).toBe('refusing to merge without a confirmation');
    expect(error.hint).toBe(
      `the patch changed since it was last shown here: see it first (agentbox diff ${r.id}), then merge: agentbox merge ${r.id} in a terminal, or agentbox merge ${r.id} --yes`,
    );
    // The way it names goes on: shown, then merged with --yes.
    await diff(context(r.repo.dir), r.id, {});
    expect(await merge(context(r.repo.dir), r.id, { yes: true })).toBe(0);
  });

  it('no terminal, a patch never shown: --yes, as before', async () => {
    const r = await fixRun();
    const error = await refusal(merge(context(r.repo.dir), r.id, {}));
    expect(error.hint).toBe(`run it in a terminal to be asked, or pass --yes: agentbox merge ${r.id} --yes`);
  });

  it('an already merged run: where to see it, and how to start new work', async () => {
    const r = await fixRun();
    expect(await merge(context(r.repo.dir), r.id, { yes: true })).toBe(0);
    const error = await refusal(merge(context(r.repo.dir), r.id, { yes: true }));
    expect(error.message).toBe(`run ${r.name} is already merged`);
    expect(error.hint).toBe(
      `see it: agentbox show ${r.id}; for new work on it: agentbox fix "…", or run its task again: agentbox rerun ${r.id}`,
    );
  });
});
