import { spawn } from 'node:child_process';
import type { CommandContext } from '../cli/context.js';
import { AgentboxError } from '../errors.js';
import { findRepo } from '../git/repo.js';
import { openLedger } from '../ledger/index.js';
import { assertHuman } from '../run/gate.js';
import { startUiServer } from '../web/server.js';

export interface UiOptions {
  readonly port?: string;
  readonly host?: string;
  /** commander's --no-open: false. */
  readonly open?: boolean;
}

function parsePort(text: string | undefined): number {
  if (text === undefined) return 0;
  if (!/^\d+$/.test(text) || Number(text) > 65535) {
    throw new AgentboxError('USAGE', `--port takes a port number from 0 to 65535, not "${text}"`, {
      hint: 'agentbox ui --port 4780 (0: any free port)',
    });
  }
  return Number(text);
}

/** Opens `url` in the person's browser; where there is no opener, the printed line is enough. */
function openBrowser(url: string): void {
  const opener =
    process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  try {
    const child = spawn(opener, [url], { stdio: 'ignore', detached: true });
    child.on('error', () => {});
    child.unref();
  } catch {
    // No opener: the URL is printed.
  }
}

/**
 * `agentbox ui`: the local web dashboard, until Ctrl-C. A human-gate command (it can merge), so it
 * refuses to start inside a run; it listens on 127.0.0.1 unless --host says otherwise.
 */
export async function ui(ctx: CommandContext, options: UiOptions): Promise<number> {
  assertHuman(ctx.env, 'ui', ctx.cwd);
  const port = parsePort(options.port);
  const repo = await findRepo(ctx.cwd);
  const ledger = openLedger(repo.root);
  const host = options.host ?? '127.0.0.1';
  if (host !== '127.0.0.1' && host !== 'localhost') {
    ctx.io.err(
      `agentbox ui: listening on ${host}, not only this machine: anyone who can reach it and has the token can merge\n`,
    );
  }
  const server = await startUiServer({ root: repo.root, ledger, env: ctx.env, port, host });
  ctx.io.out(`agentbox ui: ${server.loginUrl}\n  (Ctrl-C to stop; runs go on without it)\n`);
  if (options.open !== false) openBrowser(server.loginUrl);
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
