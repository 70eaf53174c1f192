import path from 'node:path';
import type { CommandContext } from '../context.js';
import { AgentboxError, isAgentboxError } from '../errors.js';
import { assertHuman } from '../gate/gate.js';
import { findRepo } from '../git/repo.js';
import { type Ledger, openLedger } from '../ledger/index.js';
import { loadTrustedConfig } from '../trust/index.js';
import { thousands } from '../util/number.js';
import { openPage } from '../web/open-page.js';
import { interruptedRuns, startRecover } from '../web/recovery.js';
import { UiRefusalLog } from '../web/refusal-log.js';
import { loadUiState, saveUiState, uiStateFile } from '../web/secrets.js';
import { startUiServer, type UiServer } from '../web/server.js';

export interface UiOptions {
  readonly port?: string;
  readonly host?: string;
  /** commander's --no-open: false. */
  readonly open?: boolean;
  /** New secrets: the old address and every browser's login stop working. */
  readonly newToken?: boolean;
}

function parsePort(text: string | undefined): number | null {
  if (text === undefined) return null;
  if (!/^\d+$/.test(text) || Number(text) > 65535) {
    throw new AgentboxError('USAGE', `--port takes a port number from 0 to 65535, not "${text}"`, {
      hint: 'agentbox ui --port 4780 (0: any free port)',
    });
  }
  return Number(text);
}

/**
 * Runs interrupted by a crash or reboot (the watchdog, which ran before this command, marked them):
 * `runs.restart_mode` auto recovers them in the background, ask leaves it to the page's Recover
 * button, off does nothing. A broken config is reported and changes nothing.
 */
async function applyRestartMode(ctx: CommandContext, root: string, ledger: Ledger): Promise<void> {
  let mode: 'auto' | 'ask' | 'off';
  try {
    // A repository's `auto` is looser than the default `ask`: it counts once the repository is trusted.
    mode = loadTrustedConfig({ repoRoot: root, env: ctx.env }).config.runs.restart_mode;
  } catch (error) {
    ctx.io.err(`agentbox ui: ${(error as Error).message}\n`);
    return;
  }
  if (mode === 'off') return;
  const runs = await interruptedRuns(root, ctx.env);
  if (runs.length === 0) return;
  const names = someNames(runs.map((r) => r.run));
  if (mode === 'ask') {
    ctx.io.out(`  ${runs.length} interrupted run(s) can be recovered from the page: ${names}\n`);
    return;
  }
  const started = startRecover(root, ledger, ctx.env);
  ctx.io.out(
    `  recovering ${runs.length} interrupted run(s) in the background (runs.restart_mode: auto): ${names}\n  its output: ${started.log}\n`,
  );
}

/** Whether `host` names this machine alone: 127.0.0.0/8, ::1, their IPv4-mapped form, localhost. Pure. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  const v4 = /^(?:::ffff:)?(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  return v4 !== null && v4[1] === '127' && v4.slice(1).every((n) => Number(n) <= 255);
}

/**
 * `agentbox ui`: the local web dashboard, until Ctrl-C. A human-gate command (it can merge), so it
 * refuses to start inside a run; it listens on 127.0.0.1 unless --host says otherwise.
 */
export async function ui(ctx: CommandContext, options: UiOptions): Promise<number> {
  assertHuman(ctx.env, 'ui', ctx.cwd);
  const port = parsePort(options.port);
  const repo = await findRepo(ctx.cwd, ctx.env);
  const ledger = openLedger(repo.root);
  const host = options.host ?? '127.0.0.1';
  refuseWildcard(host);
  if (!isLoopbackHost(host)) {
    ctx.io.err(
      `agentbox ui: listening on ${host}, not only this machine: anyone who can reach it and has the token can merge\n`,
    );
  }
  const place = { env: ctx.env, root: repo.root, ledger };
  const kept = loadUiState(place, (line) => ctx.io.err(`${line}\n`), options.newToken === true);
  const refusals = new UiRefusalLog(ledger);
  const base = {
    root: repo.root,
    ledger,
    env: ctx.env,
    host,
    secrets: kept,
    onProblem: (problem: Parameters<UiRefusalLog['record']>[0]) => refusals.record(problem),
  };
  let server: UiServer;
  try {
    // Last time's port by default, so an open page finds the server again after a restart.
    server = await startUiServer({ ...base, port: port ?? kept.port ?? 0 });
  } catch (error) {
    if (isAgentboxError(error)) throw error;
    if (port !== null || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') {
      throw new AgentboxError(
        'USAGE',
        `agentbox ui cannot listen on ${host}:${port ?? kept.port}: ${(error as Error).message}`,
        {
          hint: 'pick another port (agentbox ui --port 0 takes any free one)',
        },
      );
    }
    server = await startUiServer({ ...base, port: 0 });
  }
  saveUiState(place, { ...kept, port: server.port });
  ctx.io.out(`agentbox ui: ${server.loginUrl}\n  (Ctrl-C to stop; runs go on without it)\n`);
  await applyRestartMode(ctx, repo.root, ledger);
  // With thousands of interrupted runs that check grows the heap: given back once things are quiet.
  server.worked();
  if (options.open !== false) openPage(server.loginUrl, path.dirname(uiStateFile(place)), ctx.env);
  await new Promise<void>((resolve) => {
    if (!ctx.onInterrupt) return;
    const off = ctx.onInterrupt(() => {
      off();
      resolve();
    });
  });
  await server.close();
  return 0;
}

/** The names of the runs, the first `max` of them when there are more (thousands fill a screen). */
export function someNames(names: readonly string[], max = 5): string {
  const shown = names.slice(0, max).join(', ');
  return names.length > max
    ? `${shown} and ${thousands(names.length - max)} more (agentbox recover --dry-run lists them)`
    : shown;
}

/**
 * `--host 0.0.0.0` (or `::`) would listen on every address, but the server answers only requests
 * addressed to the one it listens on (its Host check, against DNS rebinding): a browser elsewhere
 * would get 403 for every page. The person names the address the browser will use instead.
 */
function refuseWildcard(host: string): void {
  if (!['0.0.0.0', '::', '[::]', '', '*'].includes(host.trim())) return;
  throw new AgentboxError(
    'USAGE',
    `agentbox ui --host ${JSON.stringify(host)}: that listens on every address, and the page answers only requests addressed to the one it listens on (against DNS rebinding)`,
    {
      hint: 'name the address your browser will use, e.g. agentbox ui --host 192.168.1.5, or keep the default 127.0.0.1 and forward the port (ssh -L)',
    },
  );
}
