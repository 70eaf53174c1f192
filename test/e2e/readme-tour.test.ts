import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, type Rule, text } from '../fixtures/model-server/index.js';
import { REPO_ROOT } from '../helpers/bin.js';
import { normalize, playTour, tourSteps } from '../helpers/doc-tour.js';
import { type Project, project } from '../helpers/project.js';

/**
 * The README's tour is true (issue 16): every command in its fenced block runs, in a temporary
 * repository with the scripted model, and prints what the README shows — run names, ids, commit
 * hashes, times, costs and paths aside. `TOUR_WRITE=<file>` writes what it printed (the repository
 * as /home/me/greet), to paste.
 */
const README = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');

/** The README shows the repository as /home/me/greet. */
const SHOWN = { '<repo>': /\/home\/me\/greet/g };

const RULES: Rule[] = [
  // First: the scout's prompt also holds the fix's task (in git's recent commits).
  {
    when: { anyText: 'what does greet() return' },
    reply: text('`greet(name)` returns `hello <name>` (src/greet.js, line 1).'),
  },
  {
    when: { anyText: 'make greet() use the name', turn: 0 },
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell command writes a JS template literal
    reply: bash('sed -i \'s/"hello"/`hello ${name}`/\' src/greet.js'),
  },
  {
    when: { anyText: 'make greet() use the name' },
    reply: text('greet() now says hello to the name it is given: `greet("Ada")` returns "hello Ada".'),
  },
];

describe('the README tour', () => {
  let p: Project;
  beforeAll(async () => {
    p = await project({ files: { 'src/greet.js': 'module.exports = (name) => "hello";\n' } });
  });
  afterAll(async () => p?.cleanup());

  it('every command runs and prints what the README shows', async () => {
    const steps = tourSteps(README, 'README.md');
    expect(steps.length).toBeGreaterThanOrEqual(5);
    p.server.setRules(RULES);
    const results = await playTour(
      steps,
      p.repo.dir,
      async ([bin, ...args], command) => {
        if (bin === 'git') return p.repo.git(...args);
        if (bin !== 'agentbox') throw new Error(`the tour runs agentbox and git only, not: ${command}`);
        const r = await p.agentbox(args, { timeoutMs: 120_000 });
        expect(r.code, `${command}\n${r.stdout}${r.stderr}`).toBe(0);
        return r.stdout + r.stderr;
      },
      { asShown: (printed) => printed.replaceAll(p.repo.dir, '/home/me/greet') },
    );
    for (const { step, printed } of results) {
      expect(normalize(printed, SHOWN), step.command).toEqual(normalize(step.output.join('\n'), SHOWN));
    }
  }, 300_000);
});
