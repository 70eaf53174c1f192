import { formatDuration } from '../config/duration.js';
import type { Io } from '../context.js';
import { terminalLine, terminalName } from '../util/terminal-text.js';

/** What a run is doing, as the executor reports it on every stream line. */
export interface Progress {
  /** The tool call under way; null: claude waits for the model. */
  readonly tool: string | null;
  /** What it works on (a file, a command), when it says. */
  readonly target?: string | null;
  /** When that call started, or (no call) when claude began to wait for the model; ms since the epoch. */
  readonly toolSince?: number | null;
  readonly toolCalls: number;
  readonly elapsedMs: number;
}

/**
 * A step agentbox runs itself in a fix run's worktree — `runs.setup` before claude starts,
 * `runs.verify` at each Stop — reported when it starts and again when it ends.
 */
export interface StepReport {
  readonly step: 'setup' | 'verify';
  readonly command: string;
  /** Since the run (this process's part of it) started, as Progress. */
  readonly elapsedMs: number;
  /** Absent: it has just started. */
  readonly end?: {
    readonly ok: boolean;
    /** null: it was killed, or could not start. */
    readonly exitCode: number | null;
    readonly timedOut: boolean;
    /** Stopped from outside (Ctrl-C, agentbox stop). */
    readonly stopped?: boolean;
    readonly durationMs: number;
  };
}

/** What a run reports while it runs: where claude is, or a step of agentbox's own. */
export type RunProgress = Progress | StepReport;

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const PATH_KEYS = new Set(['file_path', 'notebook_path', 'path']);
const TARGET_KEYS = [
  'command',
  'file_path',
  'notebook_path',
  'pattern',
  'path',
  'url',
  'skill',
  'description',
];

/**
 * What a tool call works on, in one short line: its command, file, pattern… The agent wrote it:
 * it comes out safe for a terminal (src/util/terminal-text.ts), cut after cleaning. Pure.
 */
export function toolTarget(input: unknown): string | null {
  if (typeof input !== 'object' || input === null) return null;
  for (const key of TARGET_KEYS) {
    const v = (input as Record<string, unknown>)[key];
    if (typeof v === 'string' && v.trim() !== '') {
      // A file is named as it is (escaped, never stripped); a command or pattern is prose.
      const line = PATH_KEYS.has(key) ? terminalName(v) : terminalLine(v.replace(/\s+/g, ' ').trim());
      if (line.length <= 60) return line;
      // A path is told by its end, a command by its start.
      return PATH_KEYS.has(key) ? `…${line.slice(-59)}` : `${line.slice(0, 59)}…`;
    }
  }
  return null;
}

/** "1 tool call", "3 tool calls": the one spelling everywhere. */
export const toolCalls = (n: number) => `${n} tool call${n === 1 ? '' : 's'}`;

/**
 * The live line: what is happening and for how long (`Bash npm test · 12s`, `waiting for the
 * model · 8s`), the tool calls so far and the run's clock. Pure: `now` is passed in.
 */
export function liveLine(progress: Progress, frame: number, now: number, since: number): string {
  const elapsed = progress.elapsedMs + Math.max(0, now - since);
  const doing = progress.tool
    ? `${terminalLine(progress.tool)}${progress.target ? ` ${terminalLine(progress.target)}` : ''}`
    : 'waiting for the model';
  const started = progress.toolSince ?? since - progress.elapsedMs;
  const how =
    progress.tool || progress.toolCalls > 0 ? ` · ${formatDuration(Math.max(0, now - started))}` : '';
  return `${FRAMES[frame % FRAMES.length]} ${doing}${how} · ${toolCalls(progress.toolCalls)} · ${formatDuration(elapsed)}`;
}

/** The plain line piped output gets for each tool call (a CI log is never silent for long). Pure. */
export function toolLine(progress: Progress): string {
  const clock = formatDuration(progress.elapsedMs);
  return `[${clock}] ${terminalLine(`${progress.tool ?? '?'}${progress.target ? ` ${progress.target}` : ''}`)}`;
}

/**
 * A step's start or end, as piped output, a terminal's scrollback and `watch` show it:
 * `setup started: npm ci`, `setup passed after 1m 32s: npm ci`,
 * `verify FAILED (exit code 1) after 7s: npm test`. Pure.
 */
export function stepText(report: Omit<StepReport, 'elapsedMs'>): string {
  const command = toolTarget({ command: report.command }) ?? '';
  const end = report.end;
  if (!end) return `${report.step} started: ${command}`;
  const took = formatDuration(end.durationMs);
  const why = end.timedOut
    ? 'timed out'
    : end.stopped
      ? 'stopped'
      : end.exitCode === null
        ? 'killed, or could not start'
        : `exit code ${end.exitCode}`;
  const how = end.ok ? `passed after ${took}` : `FAILED (${why}) after ${took}`;
  return `${report.step} ${how}: ${command}`;
}

/** The same with the run's clock in front, as a tool call's line: `[1m 2s] setup started: npm ci`. Pure. */
export const stepLine = (report: StepReport): string =>
  `[${formatDuration(report.elapsedMs)}] ${stepText(report)}`;

/**
 * On a terminal: one live line, redrawn on every stream line (at most every 100 ms) and at least
 * once a second in between, so a long model turn never looks dead; a step of agentbox's own shows
 * in it while it runs and leaves its end in the scrollback. Piped: a plain line per tool call, and
 * one when each step starts and ends (a CI log is never silent for a whole `npm ci`). `clear()`
 * stops the clock.
 */
export function liveReporter(io: Io, tickMs = 1000): { update(p: RunProgress): void; clear(): void } {
  let frame = 0;
  let lastDraw = 0;
  let shown = false;
  let latest: Progress | null = null;
  let latestAt = 0;
  let calls = 0;
  let timer: NodeJS.Timeout | undefined;
  const draw = () => {
    if (!latest) return;
    lastDraw = Date.now();
    shown = true;
    io.out(`\r\x1b[2K${liveLine(latest, frame++, lastDraw, latestAt)}`);
  };
  const show = (progress: Progress) => {
    latest = progress;
    latestAt = Date.now();
    if (!timer) {
      timer = setInterval(draw, tickMs);
      timer.unref();
    }
    if (latestAt - lastDraw >= 100) draw();
  };
  const step = (report: StepReport) => {
    if (!io.isTTY) {
      io.out(`${stepLine(report)}\n`);
      return;
    }
    if (report.end) io.out(`\r\x1b[2K${stepLine(report)}\n`);
    lastDraw = 0;
    // While it runs it is what the run does; after it, claude starts or waits for the model.
    show({
      tool: report.end ? null : report.step,
      target: report.end ? null : toolTarget({ command: report.command }),
      toolSince: Date.now(),
      toolCalls: latest?.toolCalls ?? 0,
      elapsedMs: report.elapsedMs,
    });
  };
  return {
    update(progress) {
      if ('step' in progress) return step(progress);
      if (!io.isTTY) {
        if (progress.toolCalls > calls && progress.tool) io.out(`${toolLine(progress)}\n`);
        calls = Math.max(calls, progress.toolCalls);
        return;
      }
      show(progress);
    },
    clear() {
      if (timer) clearInterval(timer);
      timer = undefined;
      if (shown) io.out('\r\x1b[2K');
    },
  };
}
