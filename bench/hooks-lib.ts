/**
 * Helpers for bench/hooks.bench.ts: statistics, the model of which hooks a settings object should
 * fire for one tool call (the preflight compares it with what Claude Code really fired), and the
 * table.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export const loadAverage = (): string =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');

export function claudeVersion(claudeBin: string): string {
  try {
    const pkg = path.resolve(path.dirname(claudeBin), '..', 'package.json');
    return String(JSON.parse(fs.readFileSync(pkg, 'utf8')).version);
  } catch {
    return '(unknown version)';
  }
}

export const bump = (map: Map<string, number>, key: string, by = 1): void => {
  if (by !== 0) map.set(key, (map.get(key) ?? 0) + by);
};

// ---- which hooks a settings object fires -------------------------------------------------------

/** One scripted tool call, as the model server sends it. */
export interface Call {
  readonly tool: string;
  readonly input: Record<string, unknown>;
}
type Hook = Record<string, unknown>;
export type HookTable = Record<string, readonly { matcher?: string; hooks: readonly Hook[] }[]>;

const escapeRe = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&');

/**
 * A permission-rule pattern as a RegExp. Bash: `*` is any text. Paths: `**` any path, `*` one
 * segment's worth, and `//abs` is the absolute path `/abs`.
 */
function rulePattern(tool: string, pattern: string): RegExp {
  if (tool === 'Bash') return new RegExp(`^${pattern.split('*').map(escapeRe).join('.*')}$`, 's');
  if (!pattern.startsWith('//')) throw new Error(`the bench models only //absolute path rules: ${pattern}`);
  const body = pattern
    .slice(1)
    .split('**')
    .map((part) => part.split('*').map(escapeRe).join('[^/]*'))
    .join('.*');
  return new RegExp(`^${body}$`, 's');
}

/** Does a hook's `if` rule (`Tool(pattern)`) cover this call? */
export function ifCovers(rule: string, call: Call): boolean {
  const m = /^([A-Za-z]+)\((.*)\)$/s.exec(rule);
  if (!m) throw new Error(`the bench cannot read the hook condition ${rule}`);
  if (m[1] !== call.tool) return false;
  const subject = call.tool === 'Bash' ? call.input.command : call.input.file_path;
  return typeof subject === 'string' && rulePattern(call.tool, m[2]!).test(subject);
}

/** The hooks of `event` in `table` that should run for `call` (matcher, then `if`). */
export function hooksFor(table: HookTable | undefined, event: string, call: Call | null): Hook[] {
  return (table?.[event] ?? []).flatMap((group) => {
    const matcher = group.matcher ?? '';
    const matches =
      call === null || matcher === '' || matcher === '*' || new RegExp(`^(?:${matcher})$`).test(call.tool);
    if (!matches) return [];
    return group.hooks.filter((h) => call === null || typeof h.if !== 'string' || ifCovers(h.if, call));
  });
}

/** How many hooks of each event one session should run, and how many of them reach the endpoint. */
export interface Expected {
  /** hook_response lines per event (--include-hook-events); SessionEnd never gets one. */
  readonly responses: Map<string, number>;
  /** Calls per event the endpoint's handler must see (SessionEnd: not counted, it may come or not). */
  readonly handled: Map<string, number>;
  /** Per scripted call: refused by the endpoint. */
  readonly denied: boolean[];
}

/**
 * What a session of `calls` should fire, from the settings alone: the project file's hooks
 * (`project`), the run's (`run`, all http but SessionStart's command hook, which forwards to the
 * endpoint) and `deniedByEndpoint` (the airlock's verdict, asked only when a run hook fires).
 */
export function expectHooks(
  project: HookTable | undefined,
  run: HookTable | undefined,
  calls: readonly Call[],
  deniedByEndpoint: (call: Call) => boolean,
): Expected {
  const responses = new Map<string, number>();
  const handled = new Map<string, number>();
  const both = (event: string, n: number) => {
    bump(responses, event, n);
    bump(handled, event, n);
  };
  const denied: boolean[] = [];
  if (run)
    for (const event of ['SessionStart', 'UserPromptSubmit']) both(event, hooksFor(run, event, null).length);
  for (const call of calls) {
    bump(responses, 'PreToolUse', hooksFor(project, 'PreToolUse', call).length);
    const pre = hooksFor(run, 'PreToolUse', call).length;
    both('PreToolUse', pre);
    const refused = pre > 0 && deniedByEndpoint(call);
    denied.push(refused);
    // A call refused by a PreToolUse hook never runs: no PostToolUse, no PostToolUseFailure.
    if (!refused) both('PostToolUse', hooksFor(run, 'PostToolUse', call).length);
  }
  if (run) both('Stop', hooksFor(run, 'Stop', null).length);
  return { responses, handled, denied };
}

// ---- the table ------------------------------------------------------------------------------------

/** Rows of cells, or a single cell for a note line; the first `left` columns are left-aligned. */
export function renderTable(cols: readonly string[], rows: readonly string[][], left = 2): string {
  const widths = cols.map((c, i) =>
    Math.max(c.length, ...rows.filter((r) => r.length > 1).map((r) => r[i]?.length ?? 0)),
  );
  const line = (r: readonly string[]) =>
    r
      .map((cell, i) => (i < left ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(cols), ...rows.map((r) => (r.length > 1 ? line(r) : r[0]!))].join('\n');
}
