import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildAgentEnv } from '../claude/env.js';
import { spawnClaude } from '../claude/spawn.js';
import { parseStreamLine, type ResultEvent } from '../claude/stream.js';
import { LINEAGE_VAR } from '../process/reap.js';
import type { Env } from '../util/env.js';

/** `result`: the call's result line (`--output-format json`), with its usage and cost, when it printed one. */
export type ModelReply =
  | { readonly ok: true; readonly output: string; readonly durationMs: number; readonly result?: ResultEvent }
  | {
      readonly ok: false;
      readonly error: string;
      readonly durationMs: number;
      readonly result?: ResultEvent;
    };

export interface AskOptions {
  readonly bin: string;
  readonly model: string | null;
  readonly timeoutMs: number;
  readonly env: Env;
  /** Aborted when the run ends: the call is ended (an answer with ok: false). */
  readonly signal?: AbortSignal;
}

/**
 * One supervisor decision: a fresh `claude -p` with no tools, started in an empty temporary
 * folder (so no project settings, hooks or commands load: it cannot recurse into this
 * supervisor), with the agent's whitelisted environment minus agentbox's own variables (but for
 * AGENTBOX_LINEAGE, so the call can be found and ended like every child), and a
 * timeout. Never throws: a failed, killed or timed-out call is an answer with ok: false.
 * `--output-format json` prints one result object: the answer is its `result`, and its usage and
 * cost count toward the run's budget. Output that is not such an object is taken as the answer.
 */
export async function askSupervisorModel(prompt: string, options: AskOptions): Promise<ModelReply> {
  const started = Date.now();
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-supervisor-'));
  const env = buildAgentEnv(options.env, { cwd });
  for (const name of Object.keys(env)) {
    if (name.startsWith('AGENTBOX_') && name !== LINEAGE_VAR) delete env[name];
  }
  const args = [
    '-p',
    '--output-format',
    'json',
    '--tools',
    '',
    ...(options.model ? ['--model', options.model] : []),
    '--',
    prompt,
  ];
  let stdout = '';
  let stderr = '';
  try {
    const child = spawnClaude(options.bin, args, {
      cwd,
      env,
      onStdout: (chunk) => {
        stdout += chunk.toString('utf8');
      },
      onStderr: (chunk) => {
        stderr += chunk.toString('utf8');
      },
    });
    const ending = endCall(child, options);
    const exit = await child.exited;
    ending.dispose();
    const durationMs = Date.now() - started;
    if (ending.timedOut()) return { ok: false, error: `timed out after ${options.timeoutMs} ms`, durationMs };
    if (exit.spawnError)
      return { ok: false, error: `could not start ${options.bin}: ${exit.spawnError}`, durationMs };
    const result = parseStreamLine(stdout).find((e): e is ResultEvent => e.kind === 'result');
    const spent = result ? { result } : {};
    if (exit.code !== 0) {
      const why = exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`;
      return {
        ok: false,
        error: `${why}${stderr.trim() ? `: ${stderr.trim().slice(0, 300)}` : ''}`,
        durationMs,
        ...spent,
      };
    }
    return { ok: true, output: result ? result.result : stdout, durationMs, ...spent };
  } finally {
    fs.rmSync(cwd, { recursive: true, force: true });
  }
}

/** Ends the call after its timeout, or at once when the run ends (its signal aborts). */
function endCall(child: { stop(graceMs: number): Promise<unknown> }, options: AskOptions) {
  let timedOut = false;
  const stop = () => void child.stop(1000);
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, options.timeoutMs);
  if (options.signal?.aborted) stop();
  options.signal?.addEventListener('abort', stop, { once: true });
  return {
    timedOut: () => timedOut,
    dispose: () => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', stop);
    },
  };
}
