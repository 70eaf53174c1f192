/**
 * What agentbox's hooks cost per tool call: a scripted session of N tool calls (default 200)
 * through the real Claude Code CLI, with and without agentbox hooks. Target: at most 1.5 ms per tool
 * call for what a real `agentbox fix` run has (the project guard that `agentbox init` writes + the
 * run's --settings exactly as planLaunch builds them), against the same session without any
 * agentbox hook.
 *
 * Variants (each a whole `claude -p … --output-format stream-json --verbose` process, timed from
 * spawn to exit, all in the same fix worktree outside the repository):
 *   none                    no project settings, no --settings
 *   project guard           .claude/settings.json with GUARD_GROUP (three command hooks on Bash,
 *                           each under an `if`), what `agentbox init` installs
 *   agentbox fix run        the project guard + planLaunch's --settings for a sandboxed fix run (hooks:
 *                           guard.writes, history 'stream', everyBashCall false; deny rules left
 *                           out: they are not hooks) + a live endpoint with the real handler and
 *                           Supervisor (mode rules, history fed from the stream as executeRun does)
 *   fix run, sandbox off    the same with the sandbox off (both have a guard hook on every Write/Edit:
 *                           a write loads the CLAUDE.md around it, src/airlock/memory-links.ts)
 *   agentbox scout run      the same for a scout run (writes: false)
 *   reference: every hook   the project guard + runSettings with everyBashCall and history
 *                           'hooks': a hook on every Bash call and a PostToolUse on every call (the
 *                           earlier design), for comparison only
 * Three tool mixes: N × `Bash true`, N × `Read <worktree>/a.txt`, N × `Write <worktree>/w-<n>.txt`
 * (a new file each). Variants take turns (round-robin, start rotated every round) so load drifts hit
 * all alike; figures are medians of `--runs` rounds; overhead per call = (median variant − median
 * none) / N, and the paired estimate is the median of same-round differences / N.
 *
 * Every timed run is checked: exit 0, N tool results none of them an error, the endpoint saw exactly
 * the hook calls the settings call for, and the supervisor's history got every tool call. First a
 * preflight (also the warm-up) runs every variant × mix once with --include-hook-events, a few mix
 * calls and probes that each `if` condition is meant to catch, and compares the hook_response lines
 * per event and the endpoint's refusals with what the settings say: hooks fire where intended, and
 * only there.
 *
 * The parts are in bench/hooks/: config (command line, constants), cleanup (nothing left behind),
 * fixture, run-hooks (the run's settings), session and claude-process (one timed session), checks
 * (timed sessions and the preflight), report (rounds and the table), sandbox (its own figure).
 *
 * Run: `npx tsx bench/hooks.bench.ts [--calls 200] [--runs 5]`. Exits 1 when "agentbox fix run" is
 * over 1.5 ms per call for any mix, 2 when the setup is broken.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { CLAUDE_BIN } from '../test/helpers/claude.js';
// NOTE: the fixture is built as these modules load (bench/hooks/fixture.ts); it imports
// cleanup.ts first, so the handlers that remove it are in place before any of it exists.
import { preflight } from './hooks/checks.js';
import { cleanup } from './hooks/cleanup.js';
import { CALLS, PREFLIGHT_CALLS, RUNS, TARGET_MS_PER_CALL } from './hooks/config.js';
import { MIXES, PROBES } from './hooks/fixture.js';
import { measure, printHandlerTimes, printTable } from './hooks/report.js';
import { sandboxFigure } from './hooks/sandbox.js';
import { GATED, VARIANTS } from './hooks/variants.js';
import { claudeVersion, loadAverage } from './hooks-lib.js';

let exitCode = 0;
try {
  console.log(
    `hooks bench: ${CALLS} tool calls per session, ${RUNS} rounds, Claude Code ${claudeVersion(CLAUDE_BIN)}`,
  );
  console.log(`load average at start (1/5/15 min): ${loadAverage()} on ${os.cpus().length} CPUs`);
  const t0 = performance.now();
  const notes = await preflight();
  console.log(
    `preflight: ${VARIANTS.length} variants × ${MIXES.length} mixes, ${PREFLIGHT_CALLS} calls + ` +
      `${PROBES.length} probes each; hooks fire as configured (${((performance.now() - t0) / 1000).toFixed(1)} s). ` +
      'hook responses per session:',
  );
  for (const note of notes) console.log(note);
  const results = await measure();
  const { gated, missed } = printTable(results);
  printHandlerTimes(results);
  const sandboxLine = await sandboxFigure();
  console.log(`\nload average at end (1/5/15 min): ${loadAverage()}`);
  console.log(`"${GATED.name}" against the same session without agentbox hooks:`);
  for (const line of gated) console.log(line);
  if (sandboxLine) console.log(sandboxLine);
  console.log(`gated: ≤ ${TARGET_MS_PER_CALL} ms per call on every mix: ${missed ? '✗' : '✓'}`);
  exitCode = missed ? 1 : 0;
} catch (error) {
  console.error(`\nbench setup broken: ${(error as Error).message}`);
  exitCode = 2;
} finally {
  const left = await cleanup();
  if (left.length > 0) {
    console.error(`processes left behind (killed):\n  ${left.join('\n  ')}`);
    exitCode = 2;
  }
}
process.exitCode = exitCode;
