import path from 'node:path';
import { directExecution } from '../airlock/direct.js';
import type { Tally } from '../budget/tally.js';
import {
  EMPTY_SUMMARY,
  LineSplitter,
  parseStreamLine,
  type StreamEvent,
  type StreamSummary,
  summarize,
} from '../claude/stream.js';
import type { EventLog } from '../ledger/events.js';
import { HEARTBEAT_MS, heartbeat, type Ledger, updateState } from '../ledger/index.js';
import { type Progress, toolTarget } from '../present/live.js';
import { recordToolResult, type ToolErrors } from '../present/tool-errors.js';
import { hiddenReads } from '../sandbox/hidden-reads.js';
import type { ReadFence } from '../sandbox/read-allowlist.js';
import type { Denial } from '../supervisor/hooks.js';
import { toolExcerpt } from '../supervisor/prompt.js';
import { violationMessage } from '../supervisor/violations.js';
import { appendNoFollow } from '../util/append.js';
import { type SessionLaunch, sessionStartEntry } from './begin/session-start.js';
import type { Halt } from './halt.js';

const HEARTBEAT_MIN_GAP_MS = 2_000;

export interface SinkOptions {
  readonly ledger: Ledger;
  readonly runName: string;
  readonly runDir: string;
  readonly log: EventLog;
  readonly tally: Tally;
  readonly halt: Halt;
  /** A fix run's worktree (canonical), where a direct execution may be attempted; else null. */
  readonly worktree: string | null;
  /** A direct_execution attempt ends the run (configured major); else it is only logged. */
  readonly failOnDirect: boolean;
  /** Where the run started counting: a resumed run goes on from its state. */
  readonly toolCalls: number;
  readonly toolErrors: ToolErrors;
  readonly startedAt: number;
  /** How claude was launched: the source of the SessionStart the stream's init line stands for. */
  readonly launch?: SessionLaunch;
  /**
   * The run's read fence, where its shell starts (`cwd`) and the home: a Bash call that tried to
   * read past it is logged as refused (the sandbox hides such a path silently).
   */
  readonly reads?: { readonly fence: ReadFence; readonly cwd: string; readonly home?: string };
  /** A refusal found in the stream as it happened (a hidden read), for the run's denials. */
  readonly onDenial?: (denial: Denial) => void;
  /** One finished tool call, for the supervisor's history (cheaper than a hook per call). */
  readonly onTool: (name: string, ok: boolean, excerpt: string) => void;
  readonly onProgress?: (progress: Progress) => void;
  readonly now?: () => number;
}

/**
 * Where claude's output goes while a run runs: stream-json lines to `raw/stream.jsonl`, folded
 * into the summary, the spend and the failed calls; the tool history to the supervisor; the live
 * line; heartbeats into state.json. No claude needed: feed it lines.
 */
export class RunSink {
  private summaryNow: StreamSummary;
  private errors: ToolErrors;
  private readonly lines = new LineSplitter();
  private readonly calls = new Map<string, { name: string; input: unknown }>();
  /** The tool call the live line shows: the newest still open. */
  private current: { name: string; target: string | null; since: number } | null = null;
  private waitingSince: number;
  private lastBeat = 0;
  private readonly writes = new Set<Promise<unknown>>();
  private readonly now: () => number;
  private readonly streamFile: string;
  private readonly stderrFile: string;
  private readonly stateFile: string;
  private resultCame: () => void = () => {};
  /** Resolves when claude's result line has come: its last line, with the run's answer and spend. */
  readonly result: Promise<void> = new Promise((resolve) => {
    this.resultCame = resolve;
  });

  constructor(private readonly options: SinkOptions) {
    this.summaryNow = { ...EMPTY_SUMMARY, toolCalls: options.toolCalls };
    this.errors = options.toolErrors;
    this.now = options.now ?? Date.now;
    this.waitingSince = this.now();
    this.streamFile = path.join(options.runDir, 'raw', 'stream.jsonl');
    this.stderrFile = path.join(options.runDir, 'raw', 'stderr.log');
    this.stateFile = path.join(options.runDir, 'state.json');
  }

  get summary(): StreamSummary {
    return this.summaryNow;
  }

  get toolErrors(): ToolErrors {
    return this.errors;
  }

  stdout(chunk: string | Buffer): void {
    for (const line of this.lines.push(chunk)) this.line(line);
  }

  /** Claude has exited: the last line, if it had no newline. */
  flush(): void {
    for (const line of this.lines.flush()) this.line(line);
  }

  /** The end of claude's stderr (its last 2 KB): what a failed exit says when its result does not. */
  private stderrTail = '';

  /** claude's last line on stderr, or '' (an exit that failed says it: "No conversation found …"). */
  get lastStderrLine(): string {
    return (
      this.stderrTail
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
        .at(-1) ?? ''
    );
  }

  stderr(chunk: string | Buffer): void {
    this.stderrTail = (this.stderrTail + chunk.toString()).slice(-2048);
    if (this.options.halt.reason.kind === 'io_error') return;
    try {
      appendNoFollow(this.stderrFile, chunk);
    } catch (error) {
      this.options.halt.ioFailed(error, this.stderrFile);
    }
  }

  /** One stream-json line, as claude printed it. */
  line(line: string): void {
    const { halt } = this.options;
    if (halt.reason.kind === 'io_error') return;
    // After the result line the run may have ended (src/run/claude-end.ts): no heartbeat then.
    const ended = Boolean(this.summaryNow.result);
    try {
      appendNoFollow(this.streamFile, `${line}\n`);
    } catch (error) {
      halt.ioFailed(error, this.streamFile);
      return;
    }
    for (const event of parseStreamLine(line)) this.event(event);
    // Between tool calls claude waits for the model: since the last call ended.
    if (this.summaryNow.openTools.length === 0 && this.current) {
      this.current = null;
      this.waitingSince = this.now();
    }
    this.options.onProgress?.({
      tool: this.current?.name ?? null,
      target: this.current?.target ?? null,
      toolSince: this.current?.since ?? this.waitingSince,
      toolCalls: this.summaryNow.toolCalls,
      elapsedMs: this.now() - this.options.startedAt,
    });
    if (!ended) this.beat();
  }

  private event(event: StreamEvent): void {
    const started = sessionStartEntry(event, this.summaryNow.sessionId, this.options.launch ?? 'startup');
    if (started) this.options.log.append(started);
    this.summaryNow = summarize(this.summaryNow, event);
    if (event.kind === 'result') this.resultCame();
    if (this.options.tally.event(event)) this.options.halt.checkBudget();
    if (event.kind === 'init')
      this.write({ claude_version: event.version ?? null, model_used: event.model ?? null });
    if (event.kind === 'tool_use') {
      this.calls.set(event.id, { name: event.name, input: event.input });
      this.current = { name: event.name, target: toolTarget(event.input), since: this.now() };
    } else if (event.kind === 'tool_result') {
      const call = this.calls.get(event.toolUseId);
      this.calls.delete(event.toolUseId);
      // A failed call on agentbox's files counts: the sandbox masks a missing denied path ("Not a directory").
      if (call) this.directAttempt(call.name, call.input, event.isError);
      // A call refused before it ran (a rule, a hook, the gate) read nothing: its refusal is logged as such.
      const ran = !event.refusedBy || event.refusedBy === 'sandbox';
      if (call?.name === 'Bash' && ran) this.hiddenReads(event.toolUseId, call.input, event.text, event.at);
      this.errors = recordToolResult(this.errors, call, event);
      this.options.onTool(call?.name ?? '', !event.isError, toolExcerpt(call?.input, event.text));
    }
  }

  /** The Bash call running now, when exactly one is (agentbox's proxy ties its refusals to it). */
  bashInFlight(): string | undefined {
    const bash = [...this.calls].filter(([, call]) => call.name === 'Bash');
    return bash.length === 1 ? bash[0]![0] : undefined;
  }

  /** Each path a shell command tried to read past the read fence: one refusal, logged now. */
  private hiddenReads(toolUseId: string, input: unknown, output: string, at?: string): void {
    const reads = this.options.reads;
    const command = (input as { command?: unknown } | null)?.command;
    if (!reads || typeof command !== 'string') return;
    const hidden = hiddenReads(reads.fence, reads.cwd, reads.home, command, output);
    if (hidden.length === 0) return;
    const denial: Denial = {
      toolUseId,
      tool: 'Bash',
      rule: 'read-fence',
      reason: `the sandbox hid ${hidden.join(', ')}: reads are denied by default outside the run's repository, the allowlist's toolchains and caches, and sandbox.allow_read, and inside it what git ignores for a scout, plan or review (a write there went to a throwaway folder)`,
      input: command.length > 200 ? `${command.slice(0, 200)}…` : command,
      ...(at ? { at } : {}),
    };
    this.options.log.append({ event: 'refused', source: 'sandbox', ...denial, paths: hidden });
    this.options.onDenial?.(denial);
  }

  /** A direct_execution attempt is logged as a violation; configured major, it ends the run. */
  private directAttempt(tool: string, input: unknown, refused: boolean): void {
    const detail = directExecution(tool, input, this.options.worktree, refused);
    if (!detail) return;
    const fail = this.options.failOnDirect;
    this.options.log.append({
      event: 'violation',
      type: 'direct_execution',
      detail,
      action: fail ? 'fail' : 'refused',
    });
    if (fail)
      this.options.halt.halt({
        kind: 'aborted',
        reason: violationMessage('direct_execution'),
        failure: 'violation',
      });
  }

  /** The supervisor is alive: the counts so far into state.json (at most one write per 2 s unless forced). */
  beat(force = false): void {
    const now = this.now();
    if (!force && now - this.lastBeat < HEARTBEAT_MIN_GAP_MS) return;
    this.lastBeat = now;
    this.write(
      heartbeat(new Date(now), {
        tool_calls: this.summaryNow.toolCalls,
        failed_tool_calls: this.errors.count,
        last_tool_error: this.errors.last,
        usage: this.options.tally.usage(),
      }),
    );
  }

  /** Beats every `everyMs` until the returned function is called. */
  beating(everyMs = HEARTBEAT_MS): () => void {
    const timer = setInterval(() => this.beat(true), everyMs);
    return () => clearInterval(timer);
  }

  /** Resolves when every state write started so far has ended (each failure already stopped the run). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.writes]);
  }

  private write(patch: Parameters<typeof updateState>[2]): void {
    const { ledger, runName, halt } = this.options;
    const write = updateState(ledger, runName, patch).catch((error) => halt.ioFailed(error, this.stateFile));
    this.writes.add(write);
    void write.finally(() => this.writes.delete(write));
  }
}
