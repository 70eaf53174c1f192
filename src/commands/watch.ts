import { formatDuration } from '../config/duration.js';
import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { groupOf } from '../group/open.js';
import { readGroup } from '../group/store.js';
import { followGroup, type GroupSighting } from '../group/watch.js';
import type { RunDetails } from '../ledger/index.js';
import { runIdOf } from '../ledger/names.js';
import type { Ledger } from '../ledger/paths.js';
import { stepText } from '../present/live.js';
import { nextStep } from '../present/next-step.js';
import { endHead, succeeded } from '../present/print.js';
import { followRun, type RunSighting } from '../present/watch.js';
import { openRun } from '../run/open.js';
import { followTranscript } from '../transcript/follow.js';
import { entryPrinter } from '../transcript/render.js';
import { styler } from '../util/style.js';
import { terminalLine } from '../util/terminal-text.js';

const first = (text: unknown, max = 120) => {
  const line = terminalLine(
    String(text ?? '')
      .split('\n')[0]!
      .trim(),
  );
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/**
 * One line of events.jsonl as `watch` shows it, or null for what it leaves out; every field may be
 * the agent's text, so the line is safe for a terminal as a whole. Pure.
 */
export function eventLine(e: Record<string, unknown>): string | null {
  const line = rawEventLine(e);
  return line === null ? null : terminalLine(line);
}

function rawEventLine(e: Record<string, unknown>): string | null {
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
    case 'setup_started':
    case 'setup_finished':
      return stepText({
        step: 'setup',
        command: String(e.command ?? ''),
        ...(e.event === 'setup_finished'
          ? {
              end: {
                ok: e.ok === true,
                exitCode: typeof e.exit_code === 'number' ? e.exit_code : null,
                timedOut: e.timed_out === true,
                durationMs: typeof e.duration_ms === 'number' ? e.duration_ms : 0,
              },
            }
          : {}),
      });
    case 'verify':
      return `verify: ${e.ok ? 'passed' : 'FAILED'} — ${first(e.detail)}`;
    case 'budget':
      return `budget: ${first(e.reason ?? e.detail)}`;
    case 'revise':
      return `revision ${e.revision}: the person's review is the agent's next turn — ${first(e.review)}`;
    case 'stop_requested':
      return `stop requested (${e.by})`;
    default:
      return null;
  }
}

/** How a followed run ended, in two lines; returns the exit code (0: DONE or REVIEW). */
function printEnd(
  ctx: CommandContext,
  run: RunDetails,
  seen: Extract<RunSighting, { kind: 'ended' | 'gone' }>,
): number {
  const s = styler(ctx.io);
  if (seen.kind === 'gone') {
    ctx.io.out(
      `${s.bad('✗')} ${run.name}: its agentbox process is gone (agentbox status marks it; agentbox resume ${run.meta.run_id} continues it)\n`,
    );
    return 1;
  }
  const code = succeeded(seen.status) ? 0 : 1;
  ctx.io.out(`${endHead(s, { ...seen, name: run.name })} · exit ${code}\n`);
  ctx.io.out(`  next ${nextStep(seen.status, runIdOf(run.name), seen.failure)}\n`);
  return code;
}

/**
 * `agentbox watch <run> --transcript`: the run's transcript as it comes (the lines of `agentbox
 * show --transcript`: the agent's text, each call and its result, refusals, the supervisor), then
 * its end as `watch` says it.
 */
async function watchTranscript(ctx: CommandContext, run: RunDetails, pollMs?: number): Promise<number> {
  const marks = styler(ctx.io);
  const width = ctx.io.isTTY ? (ctx.io.columns ?? 100) : Number.POSITIVE_INFINITY;
  const print = entryPrinter(width, marks);
  for await (const seen of followTranscript(run, ctx.env, pollMs)) {
    if (seen.kind !== 'entry') return printEnd(ctx, run, seen);
    ctx.io.out(`${print(seen.entry)}\n`);
  }
  return 1; // not reached: followTranscript ends with 'ended' or 'gone'
}

/** A sighting of a run as its line (without the clock), or null for what watch leaves out. */
function sightingLine(seen: Extract<RunSighting, { kind: 'tool' | 'event' }>): string | null {
  if (seen.kind === 'tool') return terminalLine(`${seen.name}${seen.target ? ` ${seen.target}` : ''}`);
  return eventLine(seen.event);
}

/**
 * `agentbox watch <run>`: follows a run live, from its start — its tool calls with their targets,
 * the supervisor's decisions, violations and refusals — and ends with its outcome and exit code
 * (0: DONE or REVIEW). Works for detached and foreground runs alike, and for a finished run
 * (it prints what happened and the outcome). `--transcript`: the whole transcript instead. Reads only.
 */
export async function watch(
  ctx: CommandContext,
  ref: string,
  options: { pollMs?: number; transcript?: boolean } = {},
): Promise<number> {
  const group = await groupOf(ctx, ref);
  if (group) return watchGroup(ctx, group.ledger, group.name, options);
  const { run } = await openRun(ctx.cwd, ref, ctx.env);
  const s = styler(ctx.io);
  const started = Date.parse(run.state?.started_at ?? run.meta.created_at);
  // Each line at its own time since the run started, live and in a replay alike.
  const clock = (at: number) => s.dim(`[${formatDuration(Math.max(0, at - started))}]`);
  const revision = run.state?.revision ? ` — revision ${run.state.revision.number}` : '';
  ctx.io.out(`${s.bold(run.name)} — ${run.meta.type}: ${first(run.meta.task, 100)}${revision}\n`);
  if (options.transcript) return watchTranscript(ctx, run, options.pollMs);
  for await (const seen of followRun(run, options.pollMs)) {
    if (seen.kind === 'ended' || seen.kind === 'gone') return printEnd(ctx, run, seen);
    const text = sightingLine(seen);
    if (text) ctx.io.out(`${clock(seen.at)} ${text}\n`);
  }
  return 1; // not reached: followRun ends with 'ended' or 'gone'
}

/**
 * `agentbox watch <group>`: every attempt at once, each line after its attempt (`[2] …`), live and
 * in a replay alike; an attempt that waits its turn is followed from when it starts. Ends when the
 * group does: exit 0 when it has something to merge (REVIEW) or is DONE. `--transcript` is one
 * run's: it is refused with the attempts to pick from.
 */
async function watchGroup(
  ctx: CommandContext,
  ledger: Ledger,
  name: string,
  options: { pollMs?: number; transcript?: boolean },
): Promise<number> {
  const group = readGroup(ledger, name);
  if (options.transcript) {
    const runs = group.state.members.filter((m) => m.run).map((m) => `${m.attempt}: ${runIdOf(m.run!)}`);
    throw new AgentboxError(
      'USAGE',
      `--transcript follows one run; ${name} is a group of ${group.meta.attempts}`,
      {
        hint: `pick an attempt: agentbox watch <attempt's id> --transcript${runs.length > 0 ? ` (${runs.join(', ')})` : ''}`,
      },
    );
  }
  const s = styler(ctx.io);
  const started = Date.parse(group.state.started_at || group.meta.created_at);
  const clock = (at: number) => s.dim(`[${formatDuration(Math.max(0, at - started))}]`);
  ctx.io.out(`${s.bold(name)} — fix ×${group.meta.attempts}: ${first(group.meta.task, 100)}\n`);
  for await (const g of followGroup(ledger, name, options.pollMs)) {
    if (g.kind === 'group') return printGroupEnd(ctx, g);
    const k = `[${g.attempt}]`;
    const seen = g.seen;
    if (seen.kind === 'ended' || seen.kind === 'gone') {
      const line =
        seen.kind === 'gone'
          ? `${s.bad('✗')} ${g.run} — its agentbox process is gone`
          : endHead(s, { ...seen, name: g.run });
      ctx.io.out(`${k} ${line}\n`);
      continue;
    }
    const text = sightingLine(seen);
    if (text) ctx.io.out(`${k} ${clock(seen.at)} ${text}\n`);
  }
  return 1; // not reached: followGroup ends with the group's end
}

function printGroupEnd(ctx: CommandContext, g: Extract<GroupSighting, { kind: 'group' }>): number {
  const s = styler(ctx.io);
  const id = g.group.meta.group_id;
  if (g.gone || g.status === 'CRASHED') {
    ctx.io.out(
      `${s.bad('✗')} group ${g.group.name}: its agentbox process is gone (agentbox status marks it; agentbox recover ${id} takes it up)\n`,
    );
    return 1;
  }
  const ok = succeeded(g.status);
  ctx.io.out(`${ok ? s.ok('✓') : s.bad('✗')} group ${g.group.name} — ${g.status} · exit ${ok ? 0 : 1}\n`);
  ctx.io.out(`  next: agentbox show ${id}${g.status === 'REVIEW' ? ` · agentbox merge ${id}` : ''}\n`);
  return ok ? 0 : 1;
}
