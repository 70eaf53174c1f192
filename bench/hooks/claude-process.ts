/** One claude process of the hooks bench: spawned under `sh -c … times`, its stream read as executeRun reads it. */
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { LineSplitter, parseStreamLine, type StreamEvent } from '../../src/claude/stream.js';
import { toolExcerpt } from '../../src/supervisor/prompt.js';
import type { Supervisor } from '../../src/supervisor/supervisor.js';
import { CLAUDE_BIN, claudeEnv } from '../../test/helpers/claude.js';
import { bump } from '../hooks-lib.js';
import { live, reap } from './cleanup.js';
import { BENCH_TAG, BENCH_VAR, RUN_TIMEOUT_MS, RUN_VAR, SH_SCRIPT, TIMES_MARK } from './config.js';
import { home, server, worktree } from './fixture.js';

/** What the stream of one session said. */
export interface StreamRead {
  readonly toolErrors: boolean[];
  readonly hookResponses: Map<string, number>;
  readonly failedHooks: string[];
  result: StreamEvent | undefined;
}

/**
 * Reads the stream as executeRun does: a headless run's tool history comes from here (history
 * 'stream'), so the supervisor is fed each finished tool call.
 */
export function streamReader(
  supervisor: Supervisor | undefined,
  history: 'hooks' | 'stream',
): { read: StreamRead; onLine: (line: string) => void } {
  const read: StreamRead = { toolErrors: [], hookResponses: new Map(), failedHooks: [], result: undefined };
  const pending = new Map<string, { name: string; input: unknown }>();
  const onLine = (line: string) => {
    for (const event of parseStreamLine(line)) {
      if (event.kind === 'result') read.result = event;
      else if (event.kind === 'hook' && event.phase === 'response') {
        bump(read.hookResponses, event.event);
        if (event.outcome !== 'success') read.failedHooks.push(line.slice(0, 400));
      } else if (event.kind === 'tool_use') pending.set(event.id, { name: event.name, input: event.input });
      else if (event.kind === 'tool_result') {
        read.toolErrors.push(event.isError);
        const call = pending.get(event.toolUseId);
        pending.delete(event.toolUseId);
        if (supervisor && history === 'stream')
          supervisor.recordTool(call?.name ?? '', !event.isError, toolExcerpt(call?.input, event.text));
      }
    }
  };
  return { read, onLine };
}

export interface Spawned {
  readonly code: number | null;
  /** Wall time, spawn to exit. */
  readonly ms: number;
  readonly timedOut: boolean;
  /** claude's stderr, without the shell's `times`. */
  readonly stderr: string;
  readonly stdoutTail: string;
  /** The shell's `times` line for its children (claude and what it waited for), when it printed one. */
  readonly childTimes: string | undefined;
  /** CPU of this process meanwhile. */
  readonly benchCpuMs: number;
}

/** Runs claude with `argv` in the worktree to its end (or the timeout), each stdout line to `onLine`. */
export async function spawnClaude(
  argv: readonly string[],
  mark: string,
  onLine: (line: string) => void,
): Promise<Spawned> {
  const env = claudeEnv({ home, modelUrl: server.url, extra: { [BENCH_VAR]: BENCH_TAG, [RUN_VAR]: mark } });
  const lines = new LineSplitter();
  const cpuStart = process.cpuUsage();
  const started = performance.now();
  const child = spawn('/bin/sh', ['-c', SH_SCRIPT, CLAUDE_BIN, ...argv], {
    cwd: worktree,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  live.current = { child, mark };
  let stdoutTail = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdoutTail = (stdoutTail + chunk.toString('utf8')).slice(-1500);
    for (const line of lines.push(chunk)) onLine(line);
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    reap({ child, mark });
  }, RUN_TIMEOUT_MS);
  let ms = 0;
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', () => {
      ms = performance.now() - started;
    });
    child.once('close', (c) => resolve(c));
  });
  for (const line of lines.flush()) onLine(line);
  const cpu = process.cpuUsage(cpuStart);
  clearTimeout(timer);
  reap({ child, mark });
  live.current = undefined;
  // `times` prints the shell's own user/system times, then its children's.
  const at = stderr.lastIndexOf(`\n${TIMES_MARK}\n`);
  const childTimes = at < 0 ? undefined : stderr.slice(at).trim().split('\n')[2];
  if (at >= 0) stderr = stderr.slice(0, at);
  return { code, ms, timedOut, stderr, stdoutTail, childTimes, benchCpuMs: (cpu.user + cpu.system) / 1000 };
}
