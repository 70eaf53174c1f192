import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { normalize, playTour, tourSteps } from '../helpers/doc-tour.js';
import { tempDir } from '../helpers/git-repo.js';

/** The parser both doc tours use (README.md, docs/getting-started.md): what it reads, and refuses. */
const PAGE = [
  '# A page',
  '',
  '<!-- tour:start -->',
  '```text',
  '$ agentbox init',
  '✓ set up',
  '',
  '$ git status --short',
  '```',
  '<!-- tour:end -->',
  '',
  'Some prose, and a block that is not part of the tour:',
  '',
  '```text',
  '$ agentbox ui',
  '```',
  '',
  '<!-- tour:set agentbox.yaml -->',
  '```yaml',
  'runs:',
  '  verify: npm test',
  '```',
  '',
  '<!-- tour:start -->',
  '```text',
  '$ agentbox fix "a task" --detach',
  'started',
  '```',
  '<!-- tour:end -->',
  '',
].join('\n');

describe('doc tours', () => {
  it('reads every marked block in page order: commands with their output, and YAML keys to set', () => {
    expect(tourSteps(PAGE, 'page.md')).toEqual([
      { kind: 'command', command: 'agentbox init', output: ['✓ set up', ''] },
      { kind: 'command', command: 'git status --short', output: [] },
      { kind: 'set', file: 'agentbox.yaml', content: 'runs:\n  verify: npm test\n' },
      { kind: 'command', command: 'agentbox fix "a task" --detach', output: ['started'] },
    ]);
  });

  it.each([
    ['no tour block', '# nothing\n\n```text\n$ agentbox ui\n```\n', 'page.md has no <!-- tour:start -->'],
    [
      'output before the first command',
      '<!-- tour:start -->\n```text\norphan\n$ agentbox init\n```\n<!-- tour:end -->\n',
      'page.md: a tour block must start with a "$ " command line, not: orphan',
    ],
  ])('refuses a page with %s', (_label, page, message) => {
    expect(() => tourSteps(page, 'page.md')).toThrow(message);
  });

  it('a set step changes only the keys it names: the comments and other keys of the file stay', async () => {
    const dir = tempDir();
    fs.writeFileSync(
      path.join(dir, 'agentbox.yaml'),
      'supervisor:\n  verify: x\nruns:\n  # The project check.\n  verify:\n  # Setup.\n  setup:\nsandbox:\n  mode: # required\n',
    );
    const ran: string[] = [];
    await playTour(tourSteps(PAGE, 'page.md'), dir, async (words) => {
      ran.push(words.join(' | '));
      return '';
    });
    expect(ran).toEqual(['agentbox | init', 'git | status | --short', 'agentbox | fix | a task | --detach']);
    expect(fs.readFileSync(path.join(dir, 'agentbox.yaml'), 'utf8')).toBe(
      'supervisor:\n  verify: x\nruns:\n  # The project check.\n  verify: npm test\n  # Setup.\n  setup:\nsandbox:\n  mode: # required\n',
    );
    // A key the file does not have: the page would tell the reader to fill in something that is not there.
    const missing =
      '<!-- tour:start -->\n```text\n$ agentbox init\n```\n<!-- tour:end -->\n<!-- tour:set agentbox.yaml -->\n```yaml\nruns:\n  nope: 1\n```\n';
    await expect(playTour(tourSteps(missing, 'p.md'), dir, async () => '')).rejects.toThrow(
      'agentbox.yaml has no key runs.nope to fill in',
    );
  });

  it('normalizes what differs from run to run, and what a page shows for a path', () => {
    const printed =
      '✓ 26-11-27_0220__kebab-must__f3339c — REVIEW · 12s · $0.0010 in /tmp/agentbox-repo-Ab12Cd';
    const shown = '✓ 26-11-24_0737__kebab-must__e05a52 — REVIEW · 890ms · $0.0005 in /home/me/kebab';
    const also = { '<repo>': /\/home\/me\/kebab/g };
    expect(normalize(printed, also)).toEqual(normalize(shown, also));
    expect(normalize(printed, also)).toEqual(['✓ <run> — REVIEW · <time> · $<cost> in <repo>']);
  });
});
