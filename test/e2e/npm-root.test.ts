import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, text } from '../fixtures/model-server/index.js';
import { type Project, project } from '../helpers/project.js';

/**
 * Claude Code's sandbox start asks `npm root -g` (0.3 s of npm's own start, every run): agentbox
 * keeps npm's answer and gives claude an `npm` that prints it (src/sandbox/npm-root.ts). What the
 * agent runs is still the real npm, and the answer follows npm's configuration. Every npm call is
 * seen through a logging `npm` first on the person's PATH (in the home: a PATH folder the sandbox
 * lets the agent read), which then runs the real one: `<cwd>|<arguments>` per call. Claude Code's
 * own call runs from `/`, the agent's from its worktree; a call from inside the sandbox cannot
 * write the log (nothing there is writable), which is fine: only calls outside it are counted.
 */
describe('npm root -g at the sandbox start', () => {
  let p: Project;
  let env: Record<string, string>;
  let log: string;
  let wrapper: string;
  /** The real npm's answer (not through the logging one). */
  const real = (args: string[]) =>
    execFileSync('npm', args, { cwd: '/', env: p.env, encoding: 'utf8' }).trim();
  /** Calls of `npm root -g` made from `/` (Claude Code's, or agentbox asking npm on its behalf). */
  const rootCalls = () =>
    (fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '').split('\n').filter((l) => l === '/|root -g')
      .length;
  beforeAll(async () => {
    p = await project({ files: { 'src/app.ts': 'export const x = 1;\n' } });
    const bin = path.join(p.home.home, 'npm-spy');
    fs.mkdirSync(bin);
    log = path.join(p.home.home, 'npm-calls.log');
    wrapper = path.join(bin, 'npm');
    const npm = execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim();
    fs.writeFileSync(
      wrapper,
      `#!/bin/sh\nprintf '%s|%s\\n' "$PWD" "$*" >> '${log}' 2>/dev/null\nexec '${npm}' "$@"\n`,
      { mode: 0o755 },
    );
    env = { PATH: `${bin}:${p.env.PATH}` };
  });
  afterAll(async () => p?.cleanup());

  it("the agent's npm is the real one; claude's sandbox start asks npm once, then the kept answer", async () => {
    const task = 'npm in a fix run';
    const steps = [bash('npm --version'), bash('npm root -g'), bash('command -v npm'), bash('printenv PATH')];
    p.server.setRules([
      ...steps.map((reply, turn) => ({ when: { turn, anyText: task }, reply })),
      { when: { turn: steps.length, anyText: task }, reply: text('done') },
    ]);
    const first = p.server.requests.length;
    const fix = await p.agentbox(['fix', task], { env, timeoutMs: 180_000 });
    expect(fix.code, fix.stderr).toBe(0);
    const requests = p.server.requests.slice(first);
    const out = (turn: number) => {
      const result = requests.find((r) => r.view.turn === turn + 1)?.view.toolResults[0];
      expect(result?.isError, JSON.stringify(result)).toBe(false);
      return String(result?.content).trim();
    };
    expect(out(0)).toBe(real(['--version']));
    expect(out(1)).toBe(real(['root', '-g']));
    // The person's npm, found on the person's PATH: the shim's folder is hidden from the sandbox.
    expect(out(2)).toBe(wrapper);
    // The person's PATH, after the shim's folder (which the sandbox hides: `command -v` above).
    expect(`:${out(3)}`.endsWith(`:${env.PATH}`), out(3)).toBe(true);
    // Asked once from `/` (agentbox, as this HOME had no answer kept; or claude without the shim).
    expect(rootCalls()).toBe(1);
    p.server.setRules([{ when: { anyText: 'a scout' }, reply: text('ok') }]);
    const scout = await p.agentbox(['scout', 'a scout'], { env });
    expect(scout.code, scout.stderr).toBe(0);
    // The scout's claude asked nobody: the kept answer.
    expect(rootCalls()).toBe(1);
    const kept = JSON.parse(
      fs.readFileSync(path.join(p.home.home, '.local', 'state', 'agentbox', 'npm-root.json'), 'utf8'),
    );
    expect(kept.root).toBe(real(['root', '-g']));
  }, 300_000);

  it('a change to npm’s configuration is asked again, and the answer follows it', async () => {
    const prefix = path.join(p.home.home, 'npm-prefix');
    fs.writeFileSync(path.join(p.home.home, '.npmrc'), `prefix=${prefix}\n`);
    const before = rootCalls();
    p.server.setRules([{ when: { anyText: 'after npmrc' }, reply: text('ok') }]);
    const scout = await p.agentbox(['scout', 'after npmrc'], { env });
    expect(scout.code, scout.stderr).toBe(0);
    expect(rootCalls()).toBe(before + 1);
    const kept = JSON.parse(
      fs.readFileSync(path.join(p.home.home, '.local', 'state', 'agentbox', 'npm-root.json'), 'utf8'),
    );
    expect(kept.root).toBe(path.join(prefix, 'lib', 'node_modules'));
    expect(real(['root', '-g'])).toBe(kept.root);
  }, 300_000);
});
