import type { EventLog } from '../ledger/events.js';
import { block, type Decision, type LogBase } from './decision.js';
import type { ModelReply } from './model.js';
import { parseAnswer, type SupervisorAnswer } from './parse.js';

export interface ModelDecisionInput {
  readonly log: Pick<EventLog, 'append'>;
  readonly ask: ((prompt: string) => Promise<ModelReply>) | undefined;
  readonly attempts: number;
  readonly prompt: string;
  readonly base: LogBase;
  readonly iteration: number;
  readonly maxIterations: number;
  /** The iteration limit is reached: the agent may not go on. */
  readonly final: boolean;
}

const NO_MARKER_AGAIN =
  '\n\nYour previous answer had no marker. Start your answer with [COMPLETE], [ABORT] or [CONTINUE].';

/** Mode claude: up to `attempts` answers; a failed call falls back to the rules (let it stop). */
export async function decideByModel(input: ModelDecisionInput): Promise<Decision> {
  const { log, base, attempts } = input;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const ask = attempt === 1 ? input.prompt : `${input.prompt}${NO_MARKER_AGAIN}`;
    const reply = input.ask
      ? await input.ask(ask)
      : ({ ok: false, error: 'no supervisor model configured', durationMs: 0 } as const);
    if (!reply.ok) {
      const reason = `supervisor call failed (${reply.error}); fell back to the rules: the agent's stop stands`;
      log.append({
        ...base,
        decision: 'complete',
        source: 'fallback',
        reason,
        prompt: ask,
        error: reply.error,
        attempt,
      });
      return { answer: {}, end: { kind: 'complete', summary: reason } };
    }
    const record = {
      ...base,
      source: 'claude',
      prompt: ask,
      raw: reply.output,
      attempt,
      duration_ms: reply.durationMs,
    };
    const decided = judgeAnswer(input, parseAnswer(reply.output), record);
    if (decided) return decided;
  }
  const reason = `the supervisor answered ${attempts} times without a decision marker`;
  log.append({ ...base, decision: 'abort', source: 'rules', reason, warning: true });
  return { answer: {}, end: { kind: 'abort', failure: 'supervisor', reason } };
}

/** One answer, logged with its record; undefined when it carried no marker (ask again). */
function judgeAnswer(
  input: ModelDecisionInput,
  answer: SupervisorAnswer,
  record: LogBase,
): Decision | undefined {
  const { log } = input;
  switch (answer.action) {
    case 'continue': {
      if (!input.final) {
        log.append({ ...record, decision: 'continue', text: answer.text });
        return { answer: block(answer.text) };
      }
      // At the iteration limit the agent may not go on: the budget is a hard stop.
      const reason = `iteration budget reached (${input.iteration}/${input.maxIterations}): the supervisor wanted more work (${answer.text})`;
      log.append({ ...record, decision: 'abort', reason, warning: true });
      return { answer: {}, end: { kind: 'abort', failure: 'budget', reason } };
    }
    case 'complete':
      log.append({ ...record, decision: 'complete', reason: answer.text });
      return { answer: {}, end: { kind: 'complete', summary: answer.text } };
    case 'abort':
      log.append({ ...record, decision: 'abort', reason: answer.text });
      return {
        answer: {},
        end: {
          kind: 'abort',
          failure: 'agent_abort',
          reason: answer.text || 'the supervisor aborted the run',
        },
      };
    case 'none':
      log.append({ ...record, decision: 'none', reason: 'no [COMPLETE], [ABORT] or [CONTINUE] marker' });
      return undefined;
  }
}
