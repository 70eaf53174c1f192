/** Running the demo's steps: each command shown, run in the project, its output streamed through. */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pc from 'picocolors';
import type { ModelServer } from '../../test/fixtures/model-server/index.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const AGENTBOX_BIN = path.join(REPO_ROOT, 'bin/agentbox.cjs');
export const STEP_TIMEOUT_MS = 45_000;
/** The steps demo() shows (scripts/demo/tour.ts). */
const STEPS = 14;

export const out = (s: string) => process.stdout.write(s);
export const quote = (arg: string) =>
  /^[\w@%+=:,./-]+$/.test(arg) ? arg : `"${arg.replace(/(["\\$`])/g, '\\$1')}"`;
export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Writes streamed output indented by two spaces, whatever the chunk boundaries are. */
export function indenter(write: (s: string) => void): { push(chunk: string): void; end(): void } {
  let atLineStart = true;
  return {
    push(chunk) {
      let s = '';
      for (const ch of chunk) {
        if (atLineStart && ch !== '\n') s += '  ';
        s += ch;
        atLineStart = ch === '\n';
      }
      write(s);
    },
    end() {
      if (!atLineStart) write('\n');
      atLineStart = true;
    },
  };
}

export class DemoFailure extends Error {}

export interface Context {
  readonly root: string;
  readonly project: string;
  readonly home: string;
  readonly server: ModelServer;
  readonly env: Record<string, string>;
  /** Marks every process the demo starts (children inherit it), for the sweep at the end. */
  readonly mark: string;
}

export const MARK_VAR = 'AGENTBOX_DEMO_MARK';
/** The step's child now running, and the signal that interrupted the demo (see main's handler). */
export const live: { current?: ReturnType<typeof spawn>; interrupted?: string } = {};
let stepNumber = 0;
function banner(shown: string): void {
  stepNumber += 1;
  out(`\n${pc.dim(`[${stepNumber}/${STEPS}]`)} ${pc.bold(pc.cyan(`$ ${shown}`))}\n`);
}

/**
 * Runs one command in the project, its output streamed through (indented) and returned. Fails the
 * demo when it exits non-zero, is killed, or takes longer than STEP_TIMEOUT_MS.
 */
export async function step(
  ctx: Context,
  shown: string,
  command: string,
  args: string[],
  options: { expectCode?: number } = {},
): Promise<string> {
  banner(shown);
  if (live.interrupted) throw new DemoFailure(`interrupted (${live.interrupted})`);
  const started = Date.now();
  const child = spawn(command, args, {
    cwd: ctx.project,
    env: { ...ctx.env, [MARK_VAR]: ctx.mark },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.current = child;
  let output = '';
  const sink = indenter(out);
  const collect = (chunk: Buffer) => {
    const s = chunk.toString('utf8');
    output += s;
    sink.push(s);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    // agentbox stops a run cleanly on SIGTERM; a second signal ends it at once.
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  }, STEP_TIMEOUT_MS);
  const { code, signal, error } = await new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    error?: Error;
  }>((resolve) => {
    child.once('error', (e) => resolve({ code: null, signal: null, error: e }));
    child.once('close', (c, s) => resolve({ code: c, signal: s }));
  });
  clearTimeout(timer);
  live.current = undefined;
  sink.end();
  const took = Date.now() - started;
  const expected = options.expectCode ?? 0;
  if (error) throw new DemoFailure(`\`${shown}\` could not start: ${error.message}`);
  if (timedOut) throw new DemoFailure(`\`${shown}\` took longer than ${seconds(STEP_TIMEOUT_MS)}`);
  if (live.interrupted) throw new DemoFailure(`interrupted (${live.interrupted})`);
  if (code !== expected) {
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    throw new DemoFailure(`\`${shown}\` ${how} (expected ${expected}); its output is above`);
  }
  out(`${pc.dim(`  (${seconds(took)})`)}\n`);
  return output;
}

export const agentbox = (ctx: Context, args: string[]) =>
  step(ctx, `agentbox ${args.map(quote).join(' ')}`, process.execPath, [AGENTBOX_BIN, ...args]);

/** Prints a file of the project the way `cat` would, indented. */
export function cat(ctx: Context, file: string): string {
  banner(`cat ${file}`);
  const full = path.join(ctx.project, file);
  if (!fs.existsSync(full)) throw new DemoFailure(`${file} does not exist`);
  const content = fs.readFileSync(full, 'utf8');
  const sink = indenter(out);
  sink.push(content);
  sink.end();
  return content;
}

/** The run a `scout`/`fix` command started, from its first line ("started <run>"). */
export function runName(output: string, shown: string): string {
  const name = /^started (\S+)$/m.exec(output)?.[1];
  if (!name) throw new DemoFailure(`\`${shown}\` did not say which run it started`);
  return name;
}

/**
 * After a run: every request of it must have been answered by the script (no fallback), and every
 * tool call the script made must have worked. Anything else means the run did not do what the
 * demo shows, even if it ended well.
 */
export function checkConversation(ctx: Context, since: number, what: string): void {
  const requests = ctx.server.requests.slice(since);
  if (requests.length === 0) throw new DemoFailure(`${what}: Claude Code never called the model`);
  const unscripted = requests.filter((r) => r.rule === undefined);
  if (unscripted.length > 0) {
    const first = unscripted[0]!.view;
    throw new DemoFailure(
      `${what}: the stand-in model got ${unscripted.length} request(s) its script does not answer ` +
        `(turn ${first.turn}, last user text: ${JSON.stringify(first.lastUserText.slice(0, 200))})`,
    );
  }
  for (const r of requests) {
    for (const result of r.view.toolResults) {
      if (result.isError) {
        throw new DemoFailure(
          `${what}: a tool call of the scripted agent failed (turn ${r.view.turn}): ${result.content.slice(0, 500)}`,
        );
      }
    }
  }
}

export function git(ctx: Context, args: string[]): Promise<string> {
  return step(ctx, `git ${args.map(quote).join(' ')}`, 'git', args);
}
