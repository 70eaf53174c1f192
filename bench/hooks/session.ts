/** One whole claude session of the hooks bench, with the run's side (supervisor, endpoint) it has. */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { judgeToolUse } from '../../src/airlock/guard.js';
import { type Endpoint, startEndpoint } from '../../src/endpoint/server.js';
import { createRunHookHandler } from '../../src/supervisor/hooks.js';
import { Supervisor } from '../../src/supervisor/supervisor.js';
import { bump, type Call, type Expected, expectHooks, type HookTable } from '../hooks-lib.js';
import { type Spawned, type StreamRead, spawnClaude, streamReader } from './claude-process.js';
import { PROMPT, RUN_TIMEOUT_MS } from './config.js';
import {
  guardFile,
  guardJson,
  home,
  log,
  projectHooks,
  runDir,
  SANDBOX_BLOCK,
  scopes,
  server,
  worktree,
} from './fixture.js';
import { runHooks } from './run-hooks.js';
import type { Mix, RunResult, Variant } from './variants.js';

/** The run's side of a session, filled in as it is set up (so that what was started is closed). */
interface RunSide {
  supervisor?: Supervisor;
  endpoint?: Endpoint;
  hooks?: HookTable;
  handlerMs: number;
  readonly handled: Map<string, number>;
  readonly denials: string[];
  readonly problems: string[];
}

/** One whole claude session making `calls` in the worktree, timed from spawn to exit. */
export async function runOnce(
  variant: Variant,
  mix: Mix,
  calls: readonly Call[],
  opts: { hookEvents?: boolean; sandbox?: boolean } = {},
): Promise<{ result: RunResult; expected: Expected; supervisor: Supervisor | undefined }> {
  const what = `${variant.name} / ${mix.name} × ${calls.length}${opts.hookEvents ? ' (preflight)' : ''}`;
  await prepareWorktree(variant, calls);
  const side: RunSide = { handlerMs: 0, handled: new Map(), denials: [], problems: [] };
  const run = variant.run;
  const history = run?.settings === 'every' ? 'hooks' : 'stream';
  try {
    if (run) await startRunSide(run, history, side);
    const scope = run ? scopes[run.type] : undefined;
    const expected = expectHooks(variant.guard ? projectHooks : undefined, side.hooks, calls, (call) =>
      scope ? !judgeToolUse(scope, call.tool, call.input, worktree).allow : false,
    );
    const stream = streamReader(side.supervisor, history);
    const mark = randomBytes(8).toString('hex');
    const spawned = await spawnClaude(claudeArgv(side.hooks, mix, opts), mark, stream.onLine);
    // Ask the supervisor's view after claude ended: its Stop answer came before the last lines.
    return { result: checkSession(what, spawned, stream.read, side), expected, supervisor: side.supervisor };
  } finally {
    await side.endpoint?.close();
    // Every session starts alike: no transcripts piling up in the Claude home, no recorded
    // requests, no growing event log.
    fs.rmSync(path.join(home.configDir, 'projects'), { recursive: true, force: true });
    fs.rmSync(log.file, { force: true });
  }
}

/** The project guard as the variant has it, no files from an earlier Write mix, the model's script. */
async function prepareWorktree(variant: Variant, calls: readonly Call[]): Promise<void> {
  if (variant.guard) {
    fs.mkdirSync(path.dirname(guardFile), { recursive: true });
    fs.writeFileSync(guardFile, guardJson);
  } else {
    fs.rmSync(path.dirname(guardFile), { recursive: true, force: true });
  }
  for (const f of fs.readdirSync(worktree)) if (/^w-\d+\.txt$/.test(f)) fs.rmSync(path.join(worktree, f));
  await server.script(calls);
}

/** What executeRun sets up: a supervisor (here in mode rules), the airlock, the endpoint. */
async function startRunSide(
  run: NonNullable<Variant['run']>,
  history: 'hooks' | 'stream',
  side: RunSide,
): Promise<void> {
  const supervisor = new Supervisor({
    config: { mode: 'rules', maxIterations: 50, loopLimit: 3 },
    task: PROMPT,
    runType: run.type,
    runDir,
    log,
    history,
    startedAt: Date.now(),
  });
  side.supervisor = supervisor;
  const handler = createRunHookHandler({
    scope: scopes[run.type],
    log,
    launchDir: worktree,
    supervisor,
    onDenial: (d) => side.denials.push(`${d.tool}: ${d.reason}`),
  });
  side.endpoint = await startEndpoint({
    handler: async (event, input) => {
      bump(side.handled, event);
      const start = performance.now();
      try {
        return await handler(event, input);
      } finally {
        side.handlerMs += performance.now() - start;
      }
    },
    onProblem: (p) => side.problems.push(`endpoint ${p.status} ${p.reason}`),
  });
  side.hooks = runHooks(run, side.endpoint);
}

function claudeArgv(
  hooks: HookTable | undefined,
  mix: Mix,
  opts: { hookEvents?: boolean; sandbox?: boolean },
): string[] {
  return [
    '-p',
    PROMPT,
    '--output-format',
    'stream-json',
    '--verbose',
    ...(hooks || opts.sandbox
      ? [
          `--settings=${JSON.stringify({ permissions: { deny: [] }, ...(hooks ? { hooks } : {}), ...(opts.sandbox ? SANDBOX_BLOCK : {}) })}`,
        ]
      : []),
    ...(opts.hookEvents ? ['--include-hook-events'] : []),
    '--allowedTools',
    mix.allowedTools,
  ];
}

/** The session ended well (else throws with what went wrong), and what it measured. */
function checkSession(what: string, spawned: Spawned, read: StreamRead, side: RunSide): RunResult {
  const { code, childTimes, stderr, stdoutTail, timedOut } = spawned;
  const seconds = [...(childTimes ?? '').matchAll(/(\d+)m([\d.]+)s/g)].map(
    (m) => Number(m[1]) * 60 + Number(m[2]),
  );
  const tail = () => `${stderr}\n${stdoutTail}`.trim().slice(-1500);
  if (timedOut) throw new Error(`${what}: timed out after ${RUN_TIMEOUT_MS} ms\n${tail()}`);
  if (code !== 0) throw new Error(`${what}: claude exited with ${code}\n${tail()}`);
  if (seconds.length !== 2) throw new Error(`${what}: no CPU times from sh: ${childTimes}\n${tail()}`);
  const { result } = read;
  if (result?.kind !== 'result' || result.subtype !== 'success' || result.isError) {
    throw new Error(`${what}: no successful result line: ${JSON.stringify(result)?.slice(0, 400)}`);
  }
  if (read.failedHooks.length > 0) throw new Error(`${what}: a hook failed: ${read.failedHooks[0]}`);
  if (side.problems.length > 0) throw new Error(`${what}: ${side.problems.slice(0, 3).join('; ')}`);
  return {
    ms: spawned.ms,
    claudeCpuMs: (seconds[0]! + seconds[1]!) * 1000,
    benchCpuMs: spawned.benchCpuMs,
    handlerMs: side.handlerMs,
    toolErrors: read.toolErrors,
    hookResponses: read.hookResponses,
    handled: side.handled,
    denials: side.denials,
  };
}
