import fs from 'node:fs';
import path from 'node:path';
import { LineSplitter, parseStreamLine } from '../claude/stream.js';
import { formatDuration } from '../config/duration.js';
import type { CommandContext } from '../context.js';
import { findRepo } from '../git/repo.js';
import { openLedger, readRun, readState, resolveRun } from '../ledger/index.js';
import { runIdOf } from '../ledger/names.js';
import { isAlive } from '../process/reap.js';
import { styler } from '../util/style.js';
import { toolTarget } from './live.js';
import { nextStep, succeeded } from './print.js';

/** New whole lines of a growing file, from where the last read stopped. */
class Tail {
  private offset = 0;
  private readonly lines = new LineSplitter();
  constructor(private readonly file: string) {}
  read(): string[] {
    let fd: number;
    try {
      fd = fs.openSync(this.file, 'r');
    } catch {
      return [];
    }
    try {
      const out: string[] = [];
      const chunk = Buffer.alloc(64 * 1024);
      for (;;) {
        const n = fs.readSync(fd, chunk, 0, chunk.length, this.offset);
        if (n === 0) break;
        this.offset += n;
        out.push(...this.lines.push(chunk.subarray(0, n)));
      }
      return out;
    } finally {
      fs.closeSync(fd);
    }
  }
}

const first = (text: unknown, max = 120) => {
  const line = String(text ?? '')
    .split('\n')[0]!
    .trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/** One line of events.jsonl as `watch` shows it, or null for what it leaves out. Pure. */
export function eventLine(e: Record<string, unknown>): string | null {
  switch (e.event) {
    case 'Stop':
      return e.decision
        ? `supervisor: ${e.decision} (${e.source})${e.reason || e.text ? ` — ${first(e.reason ?? e.text)}` : ''}`
        : null;
    case 'violation':
      return `violation: ${e.type} — ${first(e.detail)} (${e.action})`;
    case 'refused':
      return `refused: ${e.tool} by ${e.source} — ${first(e.reason)}`;
    case 'PreToolUse':
      return e.decision === 'deny' ? `refused: ${e.tool} by agentbox's guard — ${first(e.reason)}` : null;
    case 'human_gate_refused':
      return `refused: the human gate — ${first(e.reason)}`;
    case 'verify':
      return `verify: ${e.ok ? 'passed' : 'FAILED'} — ${first(e.detail)}`;
    case 'budget':
      return `budget: ${first(e.reason ?? e.detail)}`;
    case 'stop_requested':
      return `stop requested (${e.by})`;
    default:
      return null;
  }
}

/**
 * `agentbox watch <run>`: follows a run live, from its start — its tool calls with their targets,
 * the supervisor's decisions, violations and refusals — and ends with its outcome and exit code
 * (0: DONE or REVIEW). Works for detached and foreground runs alike, and for a finished run
 * (it prints what happened and the outcome). Reads only.
 */
export async function watch(
  ctx: CommandContext,
  ref: string,
  options: { pollMs?: number } = {},
): Promise<number> {
  const repo = await findRepo(ctx.cwd);
  const ledger = openLedger(repo.root);
  const run = readRun(ledger, resolveRun(ledger, ref));
  const s = styler(ctx.io);
  const stream = new Tail(path.join(run.dir, 'raw', 'stream.jsonl'));
  const events = new Tail(path.join(run.dir, 'events.jsonl'));
  const started = Date.parse(run.state?.started_at ?? run.meta.created_at);
  // An event carries its own time (a finished run replays at its times); a stream line has none.
  const clock = (at?: unknown) => {
    const t = typeof at === 'string' && Number.isFinite(Date.parse(at)) ? Date.parse(at) : Date.now();
    return `[${formatDuration(Math.max(0, t - started))}]`;
  };
  ctx.io.out(`${s.bold(run.name)} — ${run.meta.type}: ${first(run.meta.task, 100)}\n`);
  for (;;) {
    for (const line of stream.read()) {
      for (const e of parseStreamLine(line)) {
        if (e.kind === 'tool_use') {
          const target = toolTarget(e.input);
          ctx.io.out(`${s.dim(clock())} ${e.name}${target ? ` ${target}` : ''}\n`);
        }
      }
    }
    for (const line of events.read()) {
      let e: Record<string, unknown>;
      try {
        e = JSON.parse(line);
      } catch {
        continue;
      }
      const text = eventLine(e);
      if (text) ctx.io.out(`${s.dim(clock(e.ts))} ${text}\n`);
    }
    const state = readState(run.dir);
    if (state && state.status !== 'ACTIVE' && state.status !== 'STALLED') {
      const ok = succeeded(state.status);
      const why = state.failure ? ` (${state.failure.kind}): ${state.failure.message}` : '';
      const code = ok ? 0 : 1;
      ctx.io.out(`${ok ? s.ok('✓') : s.bad('✗')} ${run.name} — ${state.status}${why} · exit ${code}\n`);
      ctx.io.out(`  next ${nextStep(state.status, runIdOf(run.name), state.failure?.kind)}\n`);
      return code;
    }
    if (state && !isAlive(state.pid, state.pid_start) && state.pid !== null) {
      ctx.io.out(
        `${s.bad('✗')} ${run.name}: its agentbox process is gone (agentbox status marks it; agentbox resume ${run.meta.run_id} continues it)\n`,
      );
      return 1;
    }
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 250));
  }
}
