import fs from 'node:fs';
import path from 'node:path';
import type { StreamSummary } from '../../claude/stream.js';
import { EventLog, eventLines } from '../../ledger/events.js';
import type { Denial } from '../../supervisor/hooks.js';
import { openOwn } from '../../util/read-own.js';
import { AGENT_RUN_DIR } from './artifacts.js';

/**
 * Refusals the human gate logged when the agent ran it anyway: into this run's events.jsonl, or —
 * from inside a fix run's sandbox, where the ledger is out of reach — into the agent's RUN_DIR in
 * its worktree, from where they are copied into events.jsonl here.
 * NOTE: the agent can write its RUN_DIR, so it could add refusals that never happened: noise in
 * the log, never a permission.
 */
export function loggedGateRefusals(runDir: string, worktree: string | null): Denial[] {
  const log = new EventLog(runDir);
  if (worktree) {
    const file = new EventLog(path.join(worktree, AGENT_RUN_DIR)).file;
    for (const e of agentGateLog(file, log))
      if (e.event === 'human_gate_refused') log.append({ ...e, via: AGENT_RUN_DIR });
    // Taken once: a resumed run does not copy them again (a link is removed, not what it names).
    fs.rmSync(file, { force: true });
  }
  return log
    .read()
    .filter((e) => e.event === 'human_gate_refused')
    .map((e) => ({ tool: 'Bash', rule: 'human-gate', reason: String(e.reason ?? '') }));
}

/** What of the agent's gate log is read: a few refusals a run, never this much. */
const MAX_AGENT_LOG = 1024 * 1024;

/**
 * The events of the gate log in the agent's RUN_DIR, which the agent can write: read as a file of
 * its own, never through a link and never a FIFO (`mkfifo events.jsonl` there blocked the run's end
 * for good), its first MAX_AGENT_LOG bytes. What is refused is logged (`agent_log_skipped`).
 */
function agentGateLog(file: string, log: EventLog): Record<string, unknown>[] {
  let fd: number;
  try {
    fd = openOwn(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      log.append({ event: 'agent_log_skipped', path: file, why: (error as Error).message });
    return [];
  }
  try {
    const buffer = Buffer.alloc(Math.min(fs.fstatSync(fd).size, MAX_AGENT_LOG));
    const read = fs.readSync(fd, buffer, 0, buffer.length, 0);
    return eventLines(buffer.subarray(0, read).toString('utf8'));
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Every refused action of the run, once: agentbox's guard (from the hooks, with the rule), Claude
 * Code's own refusals (from the stream: its deny rules, the project guard hook, human-only
 * commands), and the human gate refusing to run inside the run (logged by `agentbox merge`).
 */
export function allDenials(
  hooks: readonly Denial[],
  summary: StreamSummary,
  logged: readonly Denial[] = [],
): Denial[] {
  const out = [...hooks];
  const seen = new Set(hooks.map((d) => d.toolUseId).filter(Boolean));
  const RULE = {
    config: 'permission-rule',
    hook: 'guard-hook',
    skill: 'human-only-command',
    sandbox: 'sandbox',
    gate: 'human-gate',
    other: 'refused',
  } as const;
  // The gate logs its refusals itself where it can (`logged`, no tool call id); the stream also
  // shows them: only those beyond the logged count are new (from a sandbox, which logs none).
  let gateSeen = logged.length;
  for (const r of summary.refusals) {
    if (seen.has(r.toolUseId)) continue;
    if (r.by === 'gate' && gateSeen-- > 0) continue;
    out.push({
      toolUseId: r.toolUseId,
      tool: r.tool,
      rule: RULE[r.by],
      reason: r.message.replace(/<\/?tool_use_error>/g, ''),
      ...(r.input ? { input: r.input } : {}),
      ...(r.at ? { at: r.at } : {}),
    });
  }
  return [...out, ...logged];
}
