import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { bash, type Rule, text } from '../fixtures/model-server/index.js';
import { REPO_ROOT } from './bin.js';
import { normalize, playTour, tourSteps } from './doc-tour.js';
import type { Project } from './project.js';

/**
 * The README's tour (issue 16), played by test/e2e/readme-tour.test.ts against this checkout's
 * build and by test/e2e/pack.test.ts against the installed package: every command in its fenced
 * block runs, in a temporary repository with the scripted model, and prints what the README shows
 * — run names, ids, commit hashes, times, costs and paths aside.
 */
const README = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');

/** The README shows the repository as /home/me/greet. */
const SHOWN = { '<repo>': /\/home\/me\/greet/g };

/** The repository the tour starts in. */
export const TOUR_FILES = { 'src/greet.js': 'module.exports = (name) => "hello";\n' };

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

/** Plays the tour in `p` (made with TOUR_FILES) and checks every command printed what is shown. */
export async function playReadmeTour(p: Project): Promise<void> {
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
}
