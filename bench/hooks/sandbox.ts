import { probeSandbox } from '../../src/sandbox/available.js';
import { median } from '../hooks-lib.js';
import { timedRun } from './checks.js';
import { RUNS, SANDBOX_CALLS } from './config.js';
import { MIXES } from './fixture.js';
import { VARIANTS } from './variants.js';

/**
 * What Claude Code's sandbox itself costs per Bash call (bubblewrap + its proxy around every
 * command): the same session with no hooks, with and without the sandbox block a fix run gets.
 * Not agentbox's per-call work, and not gated: it is the price of the kernel boundary, the same
 * for anyone who turns Claude Code's sandbox on. Skipped when bwrap/socat are missing.
 */
export async function sandboxFigure(): Promise<string | null> {
  if (SANDBOX_CALLS === 0) return null;
  if (!probeSandbox(process.env).ok) {
    return '  sandbox: skipped (bubblewrap or socat missing)';
  }
  const bash = MIXES.find((m) => m.name === 'Bash')!;
  const plain: number[] = [];
  const boxed: number[] = [];
  for (let round = 0; round < RUNS; round++) {
    for (const sandbox of round % 2 ? [true, false] : [false, true]) {
      const r = await timedRun(VARIANTS[0]!, bash, SANDBOX_CALLS, sandbox);
      (sandbox ? boxed : plain).push(r.ms);
    }
  }
  const per = (median(boxed) - median(plain)) / SANDBOX_CALLS;
  const paired = median(boxed.map((v, i) => v - plain[i]!)) / SANDBOX_CALLS;
  console.log(
    `\nClaude Code's sandbox alone, ${SANDBOX_CALLS} × Bash true, median of ${RUNS}: ` +
      `${Math.round(median(plain))} ms without, ${Math.round(median(boxed))} ms with`,
  );
  return (
    `  not agentbox's: Claude Code's own sandbox adds ${per.toFixed(1)} ms per Bash call ` +
    `(paired ${paired.toFixed(1)} ms), with or without agentbox; Read and Write do not go through it`
  );
}
