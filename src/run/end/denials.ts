import fs from 'node:fs';
import path from 'node:path';
import type { StreamSummary } from '../../claude/stream.js';
import { EventLog } from '../../ledger/events.js';
import type { Denial } from '../../supervisor/hooks.js';
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
    const agentLog = new EventLog(path.join(worktree, AGENT_RUN_DIR));
    for (const e of agentLog.read())
      if (e.event === 'human_gate_refused') log.append({ ...e, via: AGENT_RUN_DIR });
    // Taken once: a resumed run does not copy them again.
    fs.rmSync(agentLog.file, { force: true });
  }
  return log
    .read()
    .filter((e) => e.event === 'human_gate_refused')
    .map((e) => ({ tool: 'Bash', rule: 'human-gate', reason: String(e.reason ?? '') }));
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
