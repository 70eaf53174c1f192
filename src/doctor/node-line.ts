import type { CheckResult } from './checks.js';

/**
 * The Node.js lines agentbox is tested on, and the day each reaches its end of life (the Node.js
 * release schedule: an even line ends 30 April, three years after it began). A line past it gets
 * no security fixes; two of agentbox's dependencies already declare they need 22.12 or later
 * (docs/internals.md, Node versions).
 */
export const NODE_LINES: Readonly<Record<number, string>> = {
  20: '2026-04-30',
  22: '2027-04-30',
  24: '2028-04-30',
};

/** The lines to move to, newest last: those still supported on `today`. Pure. */
function supportedLines(today: Date): number[] {
  return Object.entries(NODE_LINES)
    .filter(([, end]) => Date.parse(`${end}T23:59:59Z`) >= today.getTime())
    .map(([line]) => Number(line));
}

const DAY_MS = 86_400_000;

/**
 * The Node line doctor runs on (`process.versions.node`) against the table: ✓ with its end date
 * while it is supported, a warning past that date or on a line agentbox is not tested on. Never a
 * failure: every command still works there. Pure.
 */
export function nodeLineResult(version: string, today: Date): CheckResult {
  const name = 'node';
  const line = Number(version.split('.')[0]);
  const end = NODE_LINES[line];
  const moveTo = supportedLines(today).filter((l) => l !== line);
  const advice = moveTo.length > 0 ? `move to Node ${moveTo.join(' or ')}` : 'move to a supported Node line';
  if (!end) {
    const tested = Object.keys(NODE_LINES).join(', ');
    return {
      name,
      ok: true,
      warn: true,
      detail: `Node ${version}: agentbox is tested on the lines ${tested}, not ${line}`,
      fix: advice,
    };
  }
  const left = Math.floor((Date.parse(`${end}T23:59:59Z`) - today.getTime()) / DAY_MS);
  if (left < 0)
    return {
      name,
      ok: true,
      warn: true,
      detail: `Node ${version}: line ${line} reached its end of life on ${end}, and gets no more security fixes${engineNote(version)}`,
      fix: `${advice}; agentbox still runs on ${line}, and a later release may drop it`,
    };
  const soon = left <= 90 ? ` — ${left} day(s) left: plan the move (${advice})` : '';
  return {
    name,
    ok: true,
    detail: `Node ${version}: line ${line} is supported until ${end}${soon}${engineNote(version)}`,
  };
}

/**
 * Below 22.12, npm prints EBADENGINE for two dependencies that declare `node >= 22.12.0`; they
 * work there (the smoke suite runs on Node 20), so it is said, not failed. Pure.
 */
export function engineNote(version: string): string {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major < 22 || (major === 22 && minor < 12)
    ? '; npm prints EBADENGINE at install for @anthropic-ai/sandbox-runtime and sanitize-html (they declare node >= 22.12; they work here)'
    : '';
}
