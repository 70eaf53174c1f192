import fs from 'node:fs';
import path from 'node:path';
import stringWidth from 'string-width';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { text, tool } from '../fixtures/model-server/index.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { startPty } from '../helpers/pty.js';

describe('names fit the screen: short ids and their prefixes (issue 14, item 9)', () => {
  let p: Project;
  beforeAll(async () => {
    p = await project();
  });
  afterAll(async () => p?.cleanup());

  it('a real fix run: hints print the short id, and every command takes the id or a unique prefix of it', async () => {
    const task = 'add a file';
    p.server.setRules([
      {
        when: { turn: 0, anyText: task },
        reply: (req) =>
          tool('Write', { file_path: path.join(req.workingDirectory!, 'a.txt'), content: 'a\n' }),
      },
      { when: { turn: 1, anyText: task }, reply: text('wrote a.txt') },
    ]);
    const fix = await p.agentbox(['fix', task]);
    expect(fix.stderr).toBe('');
    expect(fix.code).toBe(0);
    const name = p.newest();
    const id = name.slice(-6);
    expect(fix.stdout).toContain(`next          agentbox diff ${id}, then agentbox merge ${id}\n`);
    expect(p.read(name, 'report.md')).toContain(`apply it with \`agentbox merge ${id}\`.`);

    const shown = await p.agentbox(['show', id.slice(0, 3)]);
    expect(shown.code).toBe(0);
    expect(shown.stdout.split('\n')[0]).toBe(name);
    expect(shown.stdout).toContain(`next: agentbox diff ${id}, then agentbox merge ${id}\n`);

    // Another run whose id shares the first three characters: ids are random, so this one is a
    // copy of the run folder under such a name.
    const twin = `${name.slice(0, -6)}${id.slice(0, 3)}${id[3] === 'f' ? 'eee' : 'fff'}`;
    fs.cpSync(p.runDir(name), p.runDir(twin), { recursive: true });
    const ambiguous = await p.agentbox(['merge', id.slice(0, 3), '--yes']);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toContain(`"${id.slice(0, 3)}" matches 2 runs:\n`);
    expect(ambiguous.stderr).toContain(`    ${id}  ${name}\n`);
    expect(ambiguous.stderr).toContain(`    ${twin.slice(-6)}  ${twin}\n`);
    expect(ambiguous.stderr).toContain('→ type more of the id, in the same command: e.g. ');
    expect(p.state(name).status).toBe('REVIEW');
    fs.rmSync(p.runDir(twin), { recursive: true });

    const merged = await p.agentbox(['merge', id.slice(0, 4), '--yes']);
    expect(merged.stderr).toBe('');
    expect(merged.code).toBe(0);
    expect(merged.stdout).toContain(`agentbox discard ${id}`);
    expect(p.repo.read('a.txt')).toBe('a\n');
    const discarded = await p.agentbox(['discard', id.toUpperCase().slice(0, 5)]);
    expect(discarded.code).toBe(0);
    expect(p.state(name).status).toBe('MERGED');

    // A prefix no id has: its first character differs from the only run's.
    const missing = await p.agentbox(['show', `${id[0] === '0' ? '1' : '0'}00`]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('run "agentbox status" to list runs');
    await expectNoProcessesLeft(p.tag);
  });

  it('status fits an 80-column terminal: short ids, the task cut to what is left', async () => {
    const task = `a long task ${'that goes on and on '.repeat(6)}日本語のタスク`;
    p.server.setRules([{ when: { anyText: 'a long task' }, reply: text('done') }]);
    expect((await p.agentbox(['scout', task])).code).toBe(0);
    const term = startPty(['status'], { cwd: p.repo.dir, env: p.env, cols: 80 });
    expect(await term.exited).toBe(0);
    const lines = term
      .output()
      .replace(/\u001b\[[0-9;]*m/g, '')
      .split(/\r?\n/)
      .filter(Boolean);
    expect(lines[0]).toMatch(/^ID\s+TYPE\s+STATUS\s+AGE\s+COST\s+TASK$/);
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(stringWidth(line), line).toBeLessThanOrEqual(80);
    expect(lines[1]).toMatch(new RegExp(`^${p.newest().slice(-6)}  scout .*a long task that goes on.*…$`));
    // Piped, nothing is cut (as gh and git print to a pipe); $COLUMNS asks for a width anyway.
    const piped = await p.agentbox(['status']);
    expect(piped.stdout.split('\n')[1]).toMatch(new RegExp(`^${p.newest().slice(-6)}  scout .*  ${task}$`));
    const fitted = await p.agentbox(['status'], { env: { COLUMNS: '80' } });
    const row = fitted.stdout.split('\n')[1]!;
    expect(row).toMatch(/…$/);
    expect(stringWidth(row)).toBeLessThanOrEqual(80);
    // --wide names runs in full.
    const wide = await p.agentbox(['status', '--wide']);
    expect(wide.stdout).toContain(p.newest());
  });
});
