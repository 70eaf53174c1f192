import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AGENT_RUN_DIR } from '../../src/run/end/artifacts.js';
import { loggedGateRefusals } from '../../src/run/end/denials.js';
import { tempDir } from '../helpers/git-repo.js';

/**
 * The human gate's refusals logged from inside a fix run land in the agent's RUN_DIR, which the
 * agent writes (src/run/end/denials.ts): the run's end reads that log as a file of its own. A FIFO
 * there blocked the end for good; a link was read through, outside the sandbox.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function layout() {
  const root = tempDir('agentbox-gate-log-');
  dirs.push(root);
  const worktree = path.join(root, 'wt');
  const runDir = path.join(root, 'run');
  fs.mkdirSync(path.join(worktree, AGENT_RUN_DIR), { recursive: true });
  fs.mkdirSync(runDir);
  const agentLog = path.join(worktree, AGENT_RUN_DIR, 'events.jsonl');
  const events = () =>
    fs.existsSync(path.join(runDir, 'events.jsonl'))
      ? fs
          .readFileSync(path.join(runDir, 'events.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l))
      : [];
  return { root, worktree, runDir, agentLog, events };
}

describe('loggedGateRefusals', () => {
  it('copies the refusals the gate logged in the RUN_DIR, once', () => {
    const l = layout();
    fs.writeFileSync(
      l.agentLog,
      `${JSON.stringify({ event: 'human_gate_refused', reason: 'merge from inside a run' })}\nnot json\n[1]\n`,
    );
    expect(loggedGateRefusals(l.runDir, l.worktree)).toEqual([
      { tool: 'Bash', rule: 'human-gate', reason: 'merge from inside a run' },
    ]);
    expect(fs.existsSync(l.agentLog)).toBe(false);
    expect(loggedGateRefusals(l.runDir, l.worktree)).toHaveLength(1);
  });

  it('a FIFO in its place is refused at once and logged (it blocked the end for good), and removed', () => {
    const l = layout();
    execFileSync('mkfifo', [l.agentLog]);
    expect(loggedGateRefusals(l.runDir, l.worktree)).toEqual([]);
    expect(l.events()).toEqual([expect.objectContaining({ event: 'agent_log_skipped', path: l.agentLog })]);
    expect(fs.existsSync(l.agentLog)).toBe(false);
  });

  it('a link in its place is not read through (a file of the person’s, here one that would pass), only removed', () => {
    const l = layout();
    const outside = path.join(l.root, 'outside.jsonl');
    fs.writeFileSync(outside, `${JSON.stringify({ event: 'human_gate_refused', reason: 'SECRET' })}\n`);
    fs.symlinkSync(outside, l.agentLog);
    expect(loggedGateRefusals(l.runDir, l.worktree)).toEqual([]);
    expect(JSON.stringify(l.events())).not.toContain('SECRET');
    expect(fs.existsSync(l.agentLog)).toBe(false);
    expect(fs.existsSync(outside)).toBe(true);
  });
});
