import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRun, ensureLedger, openLedger, updateState } from '../../src/ledger/index.js';
import { runAgentbox } from '../helpers/bin.js';
import { GIT_ENV, gitRepo, tempDir } from '../helpers/git-repo.js';
import { ENVELOPE } from '../unit/fixtures/ledger.js';

/*
 * Every --json output is safe on a terminal too (src/util/json-out.ts): a run's task, its report and
 * its patch are text an agent wrote; what JSON.stringify leaves raw (an 8-bit CSI, a bidi override,
 * DEL, a line separator) reaches the built bin's stdout only as a `\uXXXX` escape, and the JSON still
 * parses to the text as written. The run is written into the ledger straight (no model needed).
 */
const HOSTILE = 'TASK \u009b2J\u009d0;TITLE\u009c \u202eevil\u202c \u2066x\u2069 \u007f \u2028 café 🙂';
const RAW = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

async function hostileRun() {
  const repo = gitRepo({ files: { 'a.txt': 'one\n' } });
  ensureLedger(repo.dir);
  const run = await createRun(openLedger(repo.dir), {
    type: 'fix',
    task: HOSTILE,
    envelope: ENVELOPE,
    repoShaStart: repo.git('rev-parse', 'HEAD'),
    now: new Date(),
  });
  await updateState(openLedger(repo.dir), run, { status: 'REVIEW' });
  const patch = `diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+${HOSTILE}\n`;
  fs.writeFileSync(path.join(run.dir, 'changes.patch'), patch);
  fs.writeFileSync(path.join(run.dir, 'report.md'), `REPORT ${HOSTILE}\n`);
  return { repo, run, patch };
}

describe('--json on a terminal', () => {
  it('status, show and diff escape C1, bidi and DEL, and parse back to the text as written', async () => {
    const { repo, run, patch } = await hostileRun();
    const home = tempDir('agentbox-home-');
    const env = {
      ...GIT_ENV,
      PATH: process.env.PATH ?? '',
      HOME: home,
      CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    };
    const json = async (args: string[], escaped: string[]) => {
      const r = await runAgentbox([...args, '--json'], { cwd: repo.dir, env });
      expect(r.code, r.stderr).toBe(0);
      for (const text of [...escaped, '\\u202eevil\\u202c \\u2066x\\u2069', 'café 🙂'])
        expect(r.stdout, args.join(' ')).toContain(text);
      expect(r.stdout, args.join(' ')).not.toMatch(RAW);
      return JSON.parse(r.stdout);
    };
    const c1 = ['\\u009b2J\\u009d0;TITLE\\u009c', '\\u007f', '\\u2028'];
    const shown = await json(['show', run.id], c1);
    expect(shown.meta.task).toBe(HOSTILE);
    // The list shows the task as the run's summary holds it (its C1 controls made spaces already).
    expect((await json(['status'], [])).runs[0].task).toBe(shown.state.summary.task);
    expect(shown.report).toBe(`REPORT ${HOSTILE}\n`);
    expect((await json(['diff', run.id], c1)).patch).toBe(patch);
  });
});
