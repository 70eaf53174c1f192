import path from 'node:path';
import type { Io } from '../cli/context.js';
import { styler } from '../cli/style.js';
import { formatDuration } from '../config/duration.js';
import type { RunStatus } from '../ledger/types.js';
import type { Progress } from './execute.js';
import type { Finalized } from './finalize.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** The one live status line a terminal shows while a run works. Pure. */
export function liveLine(progress: Progress, frame: number): string {
  const what = progress.tool ?? 'thinking';
  const tools = `${progress.toolCalls} tool call${progress.toolCalls === 1 ? '' : 's'}`;
  return `${FRAMES[frame % FRAMES.length]} ${what} · ${tools} · ${formatDuration(progress.elapsedMs)}`;
}

/** Redraws the live line on a terminal (at most every 100 ms); silent elsewhere. */
export function liveReporter(io: Io): { update(p: Progress): void; clear(): void } {
  let frame = 0;
  let last = 0;
  let shown = false;
  return {
    update(progress) {
      if (!io.isTTY) return;
      const now = Date.now();
      if (now - last < 100) return;
      last = now;
      shown = true;
      io.out(`\r\x1b[2K${liveLine(progress, frame++)}`);
    },
    clear() {
      if (shown) io.out('\r\x1b[2K');
    },
  };
}

export function nextStep(status: RunStatus, name: string): string {
  switch (status) {
    case 'REVIEW':
      return `agentbox merge ${name}`;
    case 'CRASHED':
    case 'ABORTED':
    case 'STALLED':
      return `agentbox resume ${name}`;
    default:
      return `agentbox show ${name}`;
  }
}

export const succeeded = (status: RunStatus): boolean => status === 'DONE' || status === 'REVIEW';

export function printSummary(io: Io, runDir: string, root: string, done: Finalized, json: boolean): void {
  const next = nextStep(done.status, done.name);
  if (json) {
    io.out(
      `${JSON.stringify(
        {
          run: done.name,
          status: done.status,
          failure: done.failure,
          dir: runDir,
          files: done.files,
          changes: done.changes?.files ?? [],
          tool_calls: done.toolCalls,
          denials: done.denials,
          duration_ms: done.durationMs,
          next,
        },
        null,
        2,
      )}\n`,
    );
    return;
  }
  const s = styler(io);
  const ok = succeeded(done.status);
  const why = done.failure ? ` (${done.failure.kind}): ${done.failure.message}` : '';
  io.out(
    `${ok ? s.ok('✓') : s.bad('✗')} ${s.bold(done.name)} — ${ok ? s.ok(done.status) : s.bad(done.status)}${why}\n` +
      `  ${formatDuration(done.durationMs)} · ${done.toolCalls} tool call(s)${done.denials.length ? ` · ${done.denials.length} refused` : ''}\n`,
  );
  const changed = done.changes?.files.length ?? 0;
  if (changed > 0)
    io.out(`  ${changed} file(s) changed → changes.patch\n${indent(done.changes?.stat ?? '')}`);
  const rel = path.relative(root, runDir);
  for (const file of done.files) io.out(`  ${s.dim(file.padEnd(13))} ${path.join(rel, file)}\n`);
  io.out(`  ${s.dim('next'.padEnd(13))} ${next}\n`);
}

function indent(text: string): string {
  return text
    .trimEnd()
    .split('\n')
    .filter(Boolean)
    .map((l) => `    ${l}\n`)
    .join('');
}
