import type { CommandContext } from '../context.js';
import { controlSession, sessionJson } from '../interactive/control.js';
import { openRun } from '../run/open.js';
import { terminalJson } from '../util/json-out.js';

/** `agentbox state <run> [--json]`: a running session's state, from its control socket. */
export async function state(ctx: CommandContext, ref: string, options: { json?: boolean }): Promise<number> {
  const { run } = await openRun(ctx.cwd, ref, ctx.env);
  const reply = await controlSession(run, 'state');
  if (options.json) {
    ctx.io.out(`${terminalJson(sessionJson(run, reply), 2)}\n`);
    return 0;
  }
  const s = reply as Record<string, unknown>;
  const rows: [string, unknown][] = [
    ['running', s.running],
    ['pid', s.pid],
    ['cwd', `${s.cwd} (${s.cwd_source})`],
    ['session', s.session_id],
    ['restarts', s.restart_count],
    ['last exit', s.last_exit ? terminalJson(s.last_exit) : '—'],
    ['policy', s.policy_state],
    ['idle', s.idle],
    ['queued', s.queued],
  ];
  ctx.io.out(`${run.name}\n${rows.map(([k, v]) => `  ${k.padEnd(10)} ${v ?? '—'}`).join('\n')}\n`);
  return 0;
}
