import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { findRepo } from '../git/repo.js';
import { openLedger, type RunDetails, readRun, resolveRun } from '../ledger/index.js';
import { assertHuman } from '../run/gate.js';
import { stopHeadless } from '../run/stop.js';
import { styler } from '../util/style.js';
import { type IpcMethod, ipcRequest } from './ipc.js';

async function sessionRun(ctx: CommandContext, ref: string): Promise<RunDetails> {
  const repo = await findRepo(ctx.cwd);
  const ledger = openLedger(repo.root);
  return readRun(ledger, resolveRun(ledger, ref));
}

/** Sends one request to an interactive session's control socket. */
export async function control(
  ctx: CommandContext,
  ref: string,
  method: IpcMethod,
  params: Record<string, unknown> = {},
): Promise<{ run: RunDetails; result: unknown }> {
  const run = await sessionRun(ctx, ref);
  const socket = run.state?.socket_path;
  if (run.meta.type === 'interactive' && !socket) {
    const status = run.state?.status ?? 'unknown';
    const why = run.state?.failure?.message;
    throw new AgentboxError(
      'USAGE',
      `session ${run.name} is not running (${status}${why ? `: ${why}` : ''})`,
      { hint: `continue it with agentbox start --resume ${run.meta.run_id}` },
    );
  }
  if (run.meta.type !== 'interactive' || !socket) {
    throw new AgentboxError(
      'USAGE',
      `run ${run.name} is not an interactive session (it has no control socket)`,
      {
        hint: 'agentbox restart/stop/state work on sessions started with agentbox start',
      },
    );
  }
  return { run, result: await ipcRequest(socket, method, params) };
}

export async function restart(
  ctx: CommandContext,
  ref: string,
  options: { fresh?: boolean },
): Promise<number> {
  assertHuman(ctx.env, 'restart', ctx.cwd);
  const { run } = await control(ctx, ref, 'restart', { mode: options.fresh ? 'fresh' : 'resume' });
  ctx.io.out(
    `${styler(ctx.io).ok('✓')} restarting claude in ${run.name} (${options.fresh ? 'a fresh session' : 'resuming its session'})\n`,
  );
  return 0;
}

export async function stop(ctx: CommandContext, ref: string, options: { force?: boolean }): Promise<number> {
  assertHuman(ctx.env, 'stop', ctx.cwd);
  const headless = await sessionRun(ctx, ref);
  if (headless.meta.type !== 'interactive') {
    return stopHeadless(ctx, headless, options);
  }
  const { run } = await control(ctx, ref, 'stop', { graceful: !options.force });
  ctx.io.out(`${styler(ctx.io).ok('✓')} stopping ${run.name}\n`);
  return 0;
}

export async function state(ctx: CommandContext, ref: string, options: { json?: boolean }): Promise<number> {
  const { run, result } = await control(ctx, ref, 'state');
  if (options.json) {
    ctx.io.out(`${JSON.stringify({ run: run.name, ...(result as object) }, null, 2)}\n`);
    return 0;
  }
  const s = result as Record<string, unknown>;
  const rows: [string, unknown][] = [
    ['running', s.running],
    ['pid', s.pid],
    ['cwd', `${s.cwd} (${s.cwd_source})`],
    ['session', s.session_id],
    ['restarts', s.restart_count],
    ['last exit', s.last_exit ? JSON.stringify(s.last_exit) : '—'],
    ['policy', s.policy_state],
    ['idle', s.idle],
    ['queued', s.queued],
  ];
  ctx.io.out(`${run.name}\n${rows.map(([k, v]) => `  ${k.padEnd(10)} ${v ?? '—'}`).join('\n')}\n`);
  return 0;
}
