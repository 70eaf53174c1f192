import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/bin.js';
import { expectNoProcessesLeft, killTagged, newTestTag } from '../helpers/processes.js';

interface DemoResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the demo as a user would (without the build: `npm test` has built before vitest). */
function runDemo(tag: string, timeoutMs: number): Promise<DemoResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['tsx', 'scripts/demo.ts'], {
      cwd: REPO_ROOT,
      // The demo passes AGENTBOX_TEST_TAG on to everything it starts, claude's Bash tool included.
      env: { ...process.env, AGENTBOX_TEST_TAG: tag, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      killTagged(tag);
      reject(new Error(`the demo took longer than ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

describe('the demo (scripts/demo.ts, npm run demo)', () => {
  it('shows init, a scout, a fix and its merge on the real Claude Code, and leaves nothing behind', async () => {
    const tag = newTestTag();
    let result: DemoResult;
    try {
      result = await runDemo(tag, 100_000);
    } finally {
      await expectNoProcessesLeft(tag).finally(() => killTagged(tag));
    }
    const out = result.stdout;
    expect(result.code, `${out}\n${result.stderr}`).toBe(0);
    expect(out).toContain('✓ demo finished');

    // The scout's answer, read back from its report.md.
    expect(out).toMatch(
      /\$ cat \.agents\/runs\/\S+__why-does-greet-print-undefined__[0-9a-f]{6}\/report\.md/,
    );
    expect(out).toContain('## Why greet() prints "undefined"');
    expect(out).toContain('(src/greet.js:4)');
    // The fix's patch: the edit and the new test file.
    expect(out).toMatch(
      /\$ cat \.agents\/runs\/\S+__make-greet-use-the-name-it-is__[0-9a-f]{6}\/changes\.patch/,
    );
    expect(out).toContain('-function greet({ name }) {');
    expect(out).toContain('+function greet(name) {');
    expect(out).toContain('diff --git a/test/greet.test.js b/test/greet.test.js');
    // The human gate, and the result in the main working tree.
    expect(out).toContain('✓ merged 2 file(s)');
    expect(out).toMatch(/\$ node test\/greet\.test\.js\n {2}ok - greet\(\) uses the name it is given\n/);
    expect(out).toMatch(/\$ node src\/cli\.js Ada\n {2}Hello, Ada!\n/);
    expect(out).toMatch(/MERGED .*make greet\(\) use the name it is given/);

    // Its temporary project and Claude home are gone.
    const project = /^ {2}project +(\S+)/m.exec(out)?.[1];
    const home = /^ {2}claude home +(\S+)/m.exec(out)?.[1];
    expect(project).toBeDefined();
    expect(home).toBeDefined();
    expect(fs.existsSync(project!)).toBe(false);
    expect(fs.existsSync(home!)).toBe(false);
  });
});
