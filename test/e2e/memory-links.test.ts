import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, text, tool } from '../fixtures/model-server/index.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';

/**
 * Claude Code reads CLAUDE.md files and `.claude/` in its own process, outside the sandbox, and
 * follows links doing it. Measured with 2.1.330 and this project's box, before the guard: an
 * agent's `sub/CLAUDE.md -> ~/secret` then a Read (or Edit, or Write) of a file in `sub/` brought
 * the secret back in the tool's result; its `CLAUDE.md -> ~/secret` at the worktree's top went
 * into its revision's first request; and a cloned repository's `.claude/skills/x/SKILL.md ->
 * ~/secret` into every run's system prompt; and a task's `@<secret>` attached the file to the
 * prompt. The sandbox denies the agent the file itself.
 */
describe('what Claude Code reads by itself is no way around the read fence (real Claude Code and sandbox)', () => {
  let p: Project;
  let secret = '';
  const SECRET = 'SECRET-IN-THE-HOME-7731';
  const leaked = () => p.server.requests.some((r) => JSON.stringify(r.view).includes(SECRET));

  beforeAll(async () => {
    p = await project({ files: { 'a.txt': 'a\n' } });
    secret = path.join(p.home.home, 'secret.txt');
    fs.writeFileSync(secret, `${SECRET}\n`);
  });
  afterAll(async () => {
    const tag = p?.tag;
    await p?.cleanup();
    if (tag) await expectNoProcessesLeft(tag);
  });

  it("an agent's CLAUDE.md links: its Read and Write there are refused, and its revision does not start", async () => {
    const task = 'TASK-MEMORY-LINK plant a memory';
    p.server.setRules([
      {
        when: { anyText: task, turn: 0 },
        reply: bash(
          `mkdir -p sub && echo hi > sub/f.txt && ln -s ${secret} sub/CLAUDE.md && ln -s ${secret} CLAUDE.md && cat ${secret}; ls -l sub`,
        ),
      },
      {
        when: { anyText: task, turn: 1 },
        reply: (req) => tool('Read', { file_path: path.join(req.workingDirectory!, 'sub/f.txt') }),
      },
      {
        when: { anyText: task, turn: 2 },
        reply: (req) =>
          tool('Write', { file_path: path.join(req.workingDirectory!, 'sub/g.txt'), content: 'g\n' }),
      },
      {
        when: { anyText: task, turn: 3 },
        reply: (req) =>
          tool('Edit', {
            file_path: path.join(req.workingDirectory!, 'a.txt'),
            old_string: 'a',
            new_string: 'b',
          }),
      },
      { when: { anyText: task }, reply: text('planted') },
      { when: { anyText: 'TASK-MEMORY-MORE' }, reply: text('more') },
    ]);
    const result = await p.agentbox(['fix', task]);
    expect(result.code, result.stderr).toBe(0);
    const name = p.newest();
    // The agent could not read the file itself (the fence), nor through Claude Code's memory.
    const refused = p.events(name).filter((e) => e.rule === 'memory-link');
    expect(refused.map((e) => e.tool).sort()).toEqual(['Edit', 'Read', 'Write']);
    for (const e of refused) expect(String(e.reason)).toContain(`CLAUDE.md is a link to ${secret}`);
    expect(leaked()).toBe(false);

    const revised = await p.agentbox(['revise', name, 'TASK-MEMORY-MORE go on']);
    expect(revised.code).not.toBe(0);
    expect(revised.stderr).toContain(`CLAUDE.md is a link to ${secret}, which this run may not read`);
    expect(revised.stderr).toContain('reads it itself when it starts');
    expect(p.state(name).status).toBe('CRASHED');
    expect(p.read(name, 'report.md')).toContain('could not prepare the run');
    expect(p.events(name).some((e) => e.rule === 'memory-link' && e.tool === 'claude')).toBe(true);
    expect(leaked()).toBe(false);
  });

  it("a prompt's @path attaches no file: a task naming the secret reaches the model as text", async () => {
    // Measured before: `agentbox scout "look at @<secret>"` put the file's text into the request.
    const task = `TASK-MEMORY-MENTION look at @${secret} and\n@"${secret}"`;
    p.server.setRules([{ when: { anyText: 'TASK-MEMORY-MENTION' }, reply: text('read nothing') }]);
    const before = p.server.requests.length;
    const result = await p.agentbox(['scout', task]);
    expect(result.code, result.stderr).toBe(0);
    const sent = p.server.requests
      .slice(before)
      .map((r) => r.view.allText)
      .join('\n');
    expect(leaked()).toBe(false);
    expect(sent).toContain(`\u2060@${secret}`);
    const [refused] = p.events(p.newest()).filter((e) => e.rule === 'at-mention');
    expect(String(refused?.reason)).toContain(`@${secret} @"${secret}"`);
  });

  it("a cloned repository's .claude/skills link: a scout is refused before claude starts", async () => {
    const skill = path.join(p.repo.dir, '.claude', 'skills', 'notes');
    fs.mkdirSync(skill, { recursive: true });
    fs.symlinkSync(secret, path.join(skill, 'SKILL.md'));
    p.repo.commit('a skill');
    const before = p.server.requests.length;
    const result = await p.agentbox(['scout', 'TASK-MEMORY-SCOUT what is a?']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`.claude/skills/notes/SKILL.md is a link to ${secret}`);
    expect(p.server.requests.length).toBe(before);
    expect(leaked()).toBe(false);
    fs.rmSync(path.join(p.repo.dir, '.claude', 'skills'), { recursive: true });
    p.repo.commit('no skill');
  });

  // Claude Code reads the memory files of every folder above the one it starts in, links followed
  // (measured: a parent's CLAUDE.local.md -> ~/secret went into a scout's first request). Another
  // user's there — a folder others can write, as /tmp — is refused before claude starts.
  it.skipIf(process.getuid?.() !== 0)(
    "another user's memory file above the run's folder: the run is refused before claude starts",
    async () => {
      const shared = fs.realpathSync(fs.mkdtempSync(path.join(p.home.home, 'shared-')));
      const planted = path.join(shared, 'CLAUDE.local.md');
      fs.symlinkSync(secret, planted);
      fs.lchownSync(planted, 65534, 65534);
      const config = path.join(p.home.home, '.config', 'agentbox', 'config.yaml');
      fs.mkdirSync(path.dirname(config), { recursive: true });
      fs.writeFileSync(config, `runs:\n  worktree_dir: ${shared}\n`);
      try {
        p.server.setRules([{ when: { anyText: 'TASK-MEMORY-ABOVE' }, reply: text('never asked') }]);
        const before = p.server.requests.length;
        const result = await p.agentbox(['fix', 'TASK-MEMORY-ABOVE change a']);
        expect(result.code).not.toBe(0);
        expect(result.stderr).toContain(`${planted} belongs to another user (uid 65534)`);
        expect(p.server.requests.length).toBe(before);
        expect(leaked()).toBe(false);
        const name = p.newest();
        expect(p.state(name).status).toBe('CRASHED');
        expect(p.events(name).some((e) => e.rule === 'memory-foreign' && e.tool === 'claude')).toBe(true);
      } finally {
        fs.rmSync(config, { force: true });
      }
    },
  );
});
