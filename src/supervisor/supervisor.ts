import type { HookAnswer, HookInput } from '../endpoint/server.js';
import type { EventLog } from '../ledger/events.js';
import { block, type CheckRecord, type Decision, type SupervisorEnd } from './decision.js';
import { pendingCount, takePending } from './inbox.js';
import type { ModelReply } from './model.js';
import { decideByModel } from './model-decision.js';
import { supervisorPrompt, type ToolRecord, toolExcerpt } from './prompt.js';
import {
  type Counters,
  decideByRules,
  nextCounters,
  type StopFacts,
  type SupervisorConfig,
} from './rules.js';
import { checkStop } from './stop-check.js';
import type { StopChecks } from './violations.js';

export type { CheckRecord, SupervisorEnd } from './decision.js';

export interface SupervisorOptions {
  readonly config: SupervisorConfig;
  readonly task: string;
  readonly runType: string;
  readonly runDir: string;
  readonly log: EventLog;
  readonly startedAt: number;
  /** Asks the supervisor model (mode claude); the signal, once aborted, ends the call. */
  readonly ask?: (prompt: string, signal: AbortSignal) => Promise<ModelReply>;
  /** Where tool calls come from: `recordTool` fed by the stream, or PostToolUse hooks (default). */
  readonly history?: 'stream' | 'hooks';
  /** Attempts per decision before "no marker" ends the run. */
  readonly attempts?: number;
  readonly onEnd?: (end: SupervisorEnd) => void;
  readonly now?: () => number;
  /** The output contract and the verification, checked when the agent wants to end (rules, every mode). */
  readonly checks?: StopChecks;
}

const SUBAGENT_TOOLS = new Set(['Task', 'Agent']);
const HISTORY = 50;
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * A run's supervisor: keeps the tool history from the hooks and decides at every Stop, first by
 * rules, then (mode claude) by a fresh `claude -p`. Its answer to the Stop hook is the injection:
 * `{"decision":"block","reason":<text>}` makes Claude Code go on with exactly that text; `{}` lets
 * it stop. Every decision is written to events.jsonl with its reason, prompt and raw answer.
 */
export class Supervisor {
  private counters: Counters = { iterations: 0, stuck: 0 };
  private readonly tools: ToolRecord[] = [];
  private progress = 0;
  private subagents = 0;
  private ended: SupervisorEnd | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  /** What the agent is working on: the run's task, or in a session the person's latest message. */
  private task: string;
  private corrections = 0;
  private violations = 0;
  private lastVerify: CheckRecord['verify'] = null;
  /** The last block was a correction: the agent's answer to it is a text, not "no progress". */
  private corrected = false;
  /** Aborted when the run ends: what a Stop is doing (verification, model call) is ended with it. */
  private readonly closing = new AbortController();
  /** The run's log while the run lasts: nothing of a Stop cut short by the run's end is written. */
  private readonly log: Pick<EventLog, 'append'> = {
    append: (entry) => {
      if (!this.closed) this.options.log.append(entry);
    },
  };

  constructor(private readonly options: SupervisorOptions) {
    this.task = options.task;
  }

  private get closed(): boolean {
    return this.closing.signal.aborted;
  }

  /**
   * The run is ending (stopped, timed out, over budget, or its claude has exited): no Stop is
   * decided from now on, a decision under way is abandoned (its verification or model call is
   * ended, nothing of it is logged), and the promise resolves once it has let go. Safe twice.
   */
  close(): Promise<void> {
    this.closing.abort();
    return this.queue.then(() => {});
  }

  get end(): SupervisorEnd | null {
    return this.ended;
  }

  get iterations(): number {
    return this.counters.iterations;
  }

  get history(): readonly ToolRecord[] {
    return this.tools;
  }

  get checkRecord(): CheckRecord {
    return { violations: this.violations, corrections: this.corrections, verify: this.lastVerify };
  }

  /**
   * One finished tool call, from wherever the run learns of it: the stream in a headless run,
   * PostToolUse hooks in an interactive one.
   */
  recordTool(name: string, ok: boolean, excerpt: string): void {
    this.tools.push({ name, ok, excerpt });
    if (this.tools.length > HISTORY) this.tools.shift();
    this.progress++;
  }

  /** Feeds one hook event; returns the answer for Stop (others answer nothing here). */
  async onEvent(event: string, input: HookInput): Promise<HookAnswer | undefined> {
    switch (event) {
      case 'PreToolUse':
        if (SUBAGENT_TOOLS.has(str(input.tool_name))) this.subagents++;
        return undefined;
      case 'PostToolUse':
      case 'PostToolUseFailure': {
        // A subagent's tool call returns when it ends (a background one at once; Claude Code then
        // reports it in background_tasks): counting the return, not SubagentStop, cannot stick
        // when the call fails or is refused before the subagent starts.
        if (SUBAGENT_TOOLS.has(str(input.tool_name))) this.subagents = Math.max(0, this.subagents - 1);
        const ok = event === 'PostToolUse';
        const output = ok ? JSON.stringify(input.tool_response ?? '') : str(input.error);
        const excerpt = toolExcerpt(input.tool_input, output);
        if (this.options.history !== 'stream') this.recordTool(str(input.tool_name), ok, excerpt);
        this.log.append({ event, tool: str(input.tool_name), ok, excerpt });
        return undefined;
      }
      case 'SubagentStop':
        this.log.append({ event });
        return undefined;
      case 'UserPromptSubmit':
        this.log.append({ event, session_id: input.session_id });
        if (this.options.runType === 'interactive') this.newTurn(str(input.prompt));
        return undefined;
      case 'Stop': {
        // NOTE: claude printed its last tool results long before it asked its Stop hook; one turn
        // of the event loop lets any stream line still queued reach recordTool first.
        await new Promise((resolve) => setImmediate(resolve));
        if (this.closed) return {};
        // Decisions are taken one at a time, in the order the Stops came; none once the run has
        // ended (it may end while an earlier one is decided).
        const decided = this.queue.then(() => (this.closed ? {} : this.decide(input)));
        this.queue = decided.catch(() => {});
        return decided;
      }
      default:
        this.log.append({
          event,
          session_id: input.session_id,
          source: input.source,
          reason: input.reason,
        });
        return undefined;
    }
  }

  private async decide(input: HookInput): Promise<HookAnswer> {
    const { config } = this.options;
    const { log } = this;
    const facts: StopFacts = {
      stopHookActive: input.stop_hook_active === true,
      backgroundTasks: Array.isArray(input.background_tasks) ? input.background_tasks.length : 0,
      runningSubagents: this.subagents,
      progress: this.progress + (this.corrected ? 1 : 0),
      pending: pendingCount(this.options.runDir),
    };
    this.corrected = false;
    const iteration = this.counters.iterations + 1;
    const rule = decideByRules(config, this.counters, facts);
    this.counters = nextCounters(this.counters, facts);
    this.progress = 0;
    const base = {
      event: 'Stop',
      iteration,
      max_iterations: config.maxIterations,
      stop_hook_active: facts.stopHookActive,
    };
    switch (rule.kind) {
      case 'inject': {
        // Taken only now, when they will be delivered: a message never leaves the inbox unsent.
        const messages = takePending(this.options.runDir);
        const text = messages.map((m) => m.text).join('\n\n');
        log.append({
          ...base,
          decision: 'inject',
          source: 'inbox',
          messages: messages.map((m) => m.id),
          text,
        });
        return block(text);
      }
      case 'wait':
        log.append({
          ...base,
          decision: 'continue',
          source: 'rules',
          reason: 'background work running',
          text: rule.text,
        });
        return block(rule.text);
      case 'hard_stop':
        log.append({ ...base, decision: 'abort', source: 'rules', reason: rule.reason, warning: true });
        this.finish({ kind: 'abort', failure: rule.failure, reason: rule.reason });
        return {};
      case 'allow': {
        const checked = await this.checkStop(input, base);
        if (checked) return checked;
        log.append({ ...base, decision: 'complete', source: 'rules', reason: rule.reason });
        this.finish({ kind: 'complete', summary: rule.reason });
        return {};
      }
      case 'ask':
        return (await this.checkStop(input, base)) ?? this.askModel(input, iteration, base, rule.final);
    }
  }

  /**
   * The Stop checks (contract, verification), their findings added to the run's record. A run that
   * ended meanwhile gets `{}`: nothing more is decided for it.
   */
  private async checkStop(input: HookInput, base: Record<string, unknown>): Promise<HookAnswer | undefined> {
    const checks = this.options.checks;
    if (!checks) return undefined;
    const lastMessage = str(input.last_assistant_message);
    const found = await checkStop(checks, lastMessage, this.corrections, this.log, base, this.closing.signal);
    if (this.closed) return {};
    if (found.verify) this.lastVerify = found.verify;
    this.violations += found.violations;
    if (found.corrected) {
      this.corrections++;
      this.corrected = true;
    }
    return found.decision && this.settle(found.decision);
  }

  /** Mode claude: a fresh `claude -p` decides (see decideByModel). */
  private async askModel(
    input: HookInput,
    iteration: number,
    base: Record<string, unknown>,
    final: boolean,
  ): Promise<HookAnswer> {
    const { config } = this.options;
    const { log } = this;
    const now = this.options.now ?? Date.now;
    const prompt = supervisorPrompt({
      task: this.task,
      iteration,
      maxIterations: config.maxIterations,
      elapsedMs: now() - this.options.startedAt,
      tools: this.tools,
      lastMessage: str(input.last_assistant_message),
      runType: this.options.runType,
    });
    const { ask } = this.options;
    const decision = await decideByModel({
      log,
      ask: ask && ((text) => ask(text, this.closing.signal)),
      attempts: this.options.attempts ?? 3,
      prompt,
      base,
      iteration,
      maxIterations: config.maxIterations,
      final,
    });
    return this.closed ? {} : this.settle(decision);
  }

  /**
   * In an interactive session each message the person sends (typed, or through agentbox inject)
   * is a new task: the budget counts the Stops the supervisor drives on its own after it, and an
   * earlier "complete" does not end the session.
   */
  private newTurn(prompt: string): void {
    this.counters = { iterations: 0, stuck: 0 };
    this.ended = null;
    if (prompt.trim() !== '') this.task = prompt;
  }

  /** Applies a decision: ends the run when it says so, and gives the hook its answer. */
  private settle(decision: Decision): HookAnswer {
    if (decision.end) this.finish(decision.end);
    return decision.answer;
  }

  private finish(end: SupervisorEnd): void {
    this.ended = end;
    this.options.onEnd?.(end);
  }
}
