import fs from 'node:fs';
import path from 'node:path';
import { type InsideRun, insideRun, procReader } from '../airlock/inside.js';
import type { Env } from '../context.js';
import { AgentboxError } from '../errors.js';
import { EventLog } from '../ledger/events.js';
import { findLedgerRoot } from '../watchdog/probe.js';

/**
 * The human gate refuses to run inside an agent: when this process or any of its ancestors is a
 * Claude Code session or an agentbox run's process (see src/airlock/inside.ts: the ancestors'
 * environments are what an agent cannot undo). The hooks and deny rules stop `agentbox merge`
 * before it starts; this stops it when it started anyway (`A=merge; agentbox $A`, `env -u …`), and
 * the calling run records the attempt.
 */
export function assertHuman(env: Env, command: string, cwd?: string): void {
  const inside = insideRun(env, process.pid, procReader);
  if (!inside) return;
  const reason = `agentbox ${command} is the human gate and does not run inside ${inside.what}`;
  recordGateRefusal(inside, cwd, { event: 'human_gate_refused', command, reason });
  throw new AgentboxError('HUMAN_GATE', reason, {
    hint: `run it yourself in a terminal: agentbox ${command} <run>`,
  });
}

/**
 * The refusal goes into the calling run's events.jsonl: through its ledger folder when this process
 * can find and write it, else its RUN_DIR. Inside a fix run's sandbox neither is writable: the
 * failed command is then logged from the stream when the run ends.
 */
function recordGateRefusal(inside: InsideRun, cwd: string | undefined, entry: Record<string, unknown>): void {
  const { run } = inside;
  const dirs: string[] = [];
  const root = run && cwd ? findLedgerRoot(cwd) : null;
  const ledgerDir = root && run ? path.join(root, '.agents', 'runs', run) : null;
  if (ledgerDir && fs.existsSync(path.join(ledgerDir, 'events.jsonl'))) dirs.push(ledgerDir);
  if (inside.runDir) dirs.push(inside.runDir);
  for (const dir of dirs) {
    try {
      new EventLog(dir).append(entry);
      return;
    } catch {
      // Not writable from here (a sandbox): try the next one.
    }
  }
}
