/** The hooks bench's command line and constants (see bench/hooks.bench.ts). */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    calls: { type: 'string', default: '200' },
    runs: { type: 'string', default: '5' },
    'sandbox-calls': { type: 'string', default: '20' },
  },
});
/** Bash calls per session for the sandbox's own figure (each sandboxed command costs far more). */
export const SANDBOX_CALLS = Number(args['sandbox-calls']);
export const CALLS = Number(args.calls);
export const RUNS = Number(args.runs);
if (
  !Number.isInteger(CALLS) ||
  CALLS < 1 ||
  !Number.isInteger(RUNS) ||
  RUNS < 1 ||
  !Number.isInteger(SANDBOX_CALLS) ||
  SANDBOX_CALLS < 0
) {
  console.error(
    'usage: npx tsx bench/hooks.bench.ts [--calls <n ≥ 1>] [--runs <n ≥ 1>] [--sandbox-calls <n ≥ 0, 0: skip>]',
  );
  process.exit(2);
}
export const TARGET_MS_PER_CALL = 1.5;
export const PREFLIGHT_CALLS = 3;
export const RUN_TIMEOUT_MS = 180_000;
export const SUPERVISOR_TIMEOUT_MS = 30_000;
export const HISTORY_KEPT = 50; // the supervisor keeps the last 50 tool calls
export const PROMPT = 'Benchmark session: make the scripted tool calls, then answer.';
/** Every process of this bench carries BENCH_VAR=<tag>; every process of one session RUN_VAR=<mark>. */
export const BENCH_VAR = 'AGENTBOX_HOOKS_BENCH';
export const RUN_VAR = 'AGENTBOX_HOOKS_BENCH_RUN';
export const BENCH_TAG = randomBytes(8).toString('hex');
export const TIMES_MARK = '@@hooks-bench-times';
/**
 * claude runs under `sh -c` only for the shell's `times` (POSIX): the CPU of claude and of every
 * process it waited for (its command hooks, the Bash tool's shells). It costs one small shell per
 * run, alike for every variant.
 */
export const SH_SCRIPT = `"$0" "$@"; s=$?; printf '\\n${TIMES_MARK}\\n' >&2; times >&2; exit $s`;
