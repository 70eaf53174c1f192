import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, text } from '../fixtures/model-server/index.js';
import { REPO_ROOT } from '../helpers/bin.js';
import { type Project, project } from '../helpers/project.js';

/**
 * The README's tour is true (issue 16): every command in its fenced block runs, in a temporary
 * repository with the scripted model, and prints what the README shows — run names, ids, commit
 * hashes, times, costs and paths aside. `TOUR_WRITE=<file>` writes what it printed, to paste.
 */
const README = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');

interface Step {
  readonly command: string;
  readonly output: string[];
}

function tourSteps(readme: string): Step[] {
  const block = /<!-- tour:start -->\s*```text\n([\s\S]*?)```\s*<!-- tour:end -->/.exec(readme)?.[1];
  if (!block) throw new Error('README.md has no <!-- tour:start --> … <!-- tour:end --> block');
  const steps: { command: string; output: string[] }[] = [];
  for (const line of block.replace(/\n$/, '').split('\n')) {
    if (line.startsWith('$ ')) steps.push({ command: line.slice(2), output: [] });
    else steps.at(-1)?.output.push(line);
  }
  return steps;
}

/** Words as a POSIX shell splits them, for the quoting the tour uses ("…" and '…'). */
function words(command: string): string[] {
  return [...command.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

/** What differs from run to run, replaced by a placeholder; spacing collapsed (columns vary). */
function normalize(out: string): string[] {
  return out
    .replace(/\u001b\[[0-9;]*m/g, '')
    .replace(/\d\d-\d\d-\d\d_\d{4}__[a-z0-9-]+__[0-9a-f]{6}/g, '<run>')
    .replace(/\/tmp\/agentbox-repo-\w+|\/home\/me\/greet/g, '<repo>')
    .replace(/\b[0-9a-f]{7,40}\b/g, '<sha>')
    .replace(/\b[0-9a-f]{6}\b/g, '<id>')
    .replace(/\$\d+\.\d+/g, '$<cost>')
    .replace(/\b\d+(\.\d+)?(ms|s|m|h)\b/g, '<time>')
    .replace(/pid \d+/g, 'pid <n>')
    .replace(/[ \t]+/g, ' ')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/\n+$/, '')
    .split('\n');
}

describe('the README tour', () => {
  let p: Project;
  beforeAll(async () => {
    p = await project({ files: { 'src/greet.js': 'module.exports = (name) => "hello";\n' } });
  });
  afterAll(async () => p?.cleanup());

  it('every command runs and prints what the README shows', async () => {
    const steps = tourSteps(README);
    expect(steps.length).toBeGreaterThanOrEqual(5);
    p.server.setRules([
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
    ]);
    const printed: string[] = [];
    const outputs: string[] = [];
    for (const step of steps) {
      const [bin, ...args] = words(step.command);
      let out: string;
      if (bin === 'agentbox') {
        const r = await p.agentbox(args, { timeoutMs: 120_000 });
        expect(r.code, `${step.command}\n${r.stdout}${r.stderr}`).toBe(0);
        out = r.stdout + r.stderr;
      } else if (bin === 'git') {
        out = p.repo.git(...args);
      } else throw new Error(`the tour runs agentbox and git only, not: ${step.command}`);
      printed.push(`$ ${step.command}`, out.replace(/\n+$/, ''), '');
      outputs.push(out);
    }
    if (process.env.TOUR_WRITE) fs.writeFileSync(process.env.TOUR_WRITE, printed.join('\n'));
    for (const [i, step] of steps.entries()) {
      expect(normalize(outputs[i]!), step.command).toEqual(normalize(step.output.join('\n')));
    }
  }, 300_000);
});
