/** The hooks bench's timed rounds and what it prints of them. */
import { performance } from 'node:perf_hooks';
import { loadAverage, median, renderTable } from '../hooks-lib.js';
import { fmtCounts, timedRun } from './checks.js';
import { CALLS, RUNS, TARGET_MS_PER_CALL } from './config.js';
import { MIXES } from './fixture.js';
import { GATED, type Mix, type RunResult, VARIANTS, type Variant } from './variants.js';

/** `${mix}\t${variant}` → one result per round. */
export type Results = Map<string, RunResult[]>;
const key = (mix: Mix, variant: Variant) => `${mix.name}\t${variant.name}`;

/** RUNS rounds of every variant × mix, the variants' order rotated each round (load drifts hit all alike). */
export async function measure(): Promise<Results> {
  const results: Results = new Map();
  for (let round = 0; round < RUNS; round++) {
    const roundStart = performance.now();
    for (const mix of MIXES) {
      for (let i = 0; i < VARIANTS.length; i++) {
        const variant = VARIANTS[(i + round) % VARIANTS.length]!;
        const r = await timedRun(variant, mix);
        results.set(key(mix, variant), [...(results.get(key(mix, variant)) ?? []), r]);
      }
    }
    console.log(
      `round ${round + 1}/${RUNS}: ${((performance.now() - roundStart) / 1000).toFixed(1)} s, load ${loadAverage()}`,
    );
  }
  return results;
}

const COLS = [
  'variant',
  'tool',
  'median',
  'per call',
  'min–max',
  'overhead/call',
  'paired/call',
  'ratio',
  '',
  'claude cpu/call',
  'agentbox cpu/call',
];
const perCall = (variant: number[], base: number[]) => (median(variant) - median(base)) / CALLS;
const ms = (n: number) => `${n.toFixed(2)} ms`;
const signed = (n: number) => `${n < 0 ? '−' : '+'}${ms(Math.abs(n))}`;

/** Prints the table of every variant × mix; returns the gated variant's lines and whether it missed. */
export function printTable(results: Results): { gated: string[]; missed: boolean } {
  const rows: string[][] = [];
  const gated: string[] = [];
  let missed = false;
  for (const mix of MIXES) {
    const base = results.get(key(mix, VARIANTS[0]!))!;
    for (const variant of VARIANTS) {
      const { row, ok, gatedLine } = variantRow(mix, variant, results.get(key(mix, variant))!, base);
      rows.push(row);
      if (gatedLine) gated.push(gatedLine);
      if (variant === GATED && !ok) missed = true;
    }
    const baseMs = base.map((r) => r.ms);
    const spread = (Math.max(...baseMs) - Math.min(...baseMs)) / CALLS;
    rows.push([`  noise: 'none' spans ${spread.toFixed(2)} ms per call over ${RUNS} runs`]);
  }
  console.log(
    `\nwhole claude process, ${CALLS} tool calls, median of ${RUNS} (target ${TARGET_MS_PER_CALL} ms per call ` +
      `for "${GATED.name}"):\n` +
      `  overhead/call = (median − median of none) / ${CALLS}; paired/call = median of same-round ` +
      `differences / ${CALLS}; ratio = overhead/call ÷ ${TARGET_MS_PER_CALL} ms;\n  cpu/call: the same for CPU ` +
      'time, of claude + the processes it waited for, and of this process (hook endpoint, stream reader, ' +
      `model server; ${VARIANTS[0]!.name}: totals)`,
  );
  console.log(renderTable(COLS, rows));
  return { gated, missed };
}

/** One variant's row against the base (no hooks) of the same mix. */
function variantRow(
  mix: Mix,
  variant: Variant,
  runs: RunResult[],
  base: RunResult[],
): { row: string[]; ok: boolean; gatedLine?: string } {
  const baseMs = base.map((r) => r.ms);
  const t = runs.map((r) => r.ms);
  const isBase = variant === VARIANTS[0];
  const overhead = perCall(t, baseMs);
  // Same-round differences: robust to slow drifts in machine load.
  const paired = median(t.map((v, i) => v - baseMs[i]!)) / CALLS;
  const ratio = overhead / TARGET_MS_PER_CALL;
  const ok = ratio <= 1;
  const gatedLine =
    variant === GATED
      ? `  ${mix.name}: without hooks ${ms(median(baseMs) / CALLS)} per call, with a fix run's hooks ` +
        `${ms(median(t) / CALLS)}: ${signed(overhead)} per call (paired ${signed(paired)}), ` +
        `${ratio.toFixed(2)} × the ${TARGET_MS_PER_CALL} ms target ${ok ? '✓' : '✗'}`
      : undefined;
  const cpu = (of: (r: RunResult) => number) =>
    isBase ? `(${Math.round(median(runs.map(of)))} ms)` : ms(perCall(runs.map(of), base.map(of)));
  const row = [
    variant.name,
    mix.name,
    `${Math.round(median(t))} ms`,
    ms(median(t) / CALLS),
    `${Math.round(Math.min(...t))}–${Math.round(Math.max(...t))}`,
    isBase ? '—' : ms(overhead),
    isBase ? '—' : ms(paired),
    isBase ? '—' : ratio.toFixed(2),
    isBase || variant !== GATED ? '' : ok ? '✓' : '✗',
    cpu((r) => r.claudeCpuMs),
    cpu((r) => r.benchCpuMs),
  ];
  return gatedLine ? { row, ok, gatedLine } : { row, ok };
}

/** The hook calls the endpoint got per session (last round), and its handler time per call. */
export function printHandlerTimes(results: Results): void {
  console.log('\nhook calls the endpoint got per session (last round), and its handler time per call:');
  for (const mix of MIXES) {
    for (const variant of VARIANTS.filter((v) => v.run)) {
      const runs = results.get(key(mix, variant))!;
      const last = runs.at(-1)!;
      const hookCalls = [...last.handled.values()].reduce((a, b) => a + b, 0);
      const handlerUs = (median(runs.map((r) => r.handlerMs)) / hookCalls) * 1000;
      console.log(
        `  ${variant.name} / ${mix.name}: ${fmtCounts(last.handled)}; ${handlerUs.toFixed(0)} µs per hook call`,
      );
    }
  }
}
