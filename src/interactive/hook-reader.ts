import type { HookInput } from '../endpoint/server.js';
import type { ClaudeSlot } from './claude-slot.js';
import type { Conversation } from './conversation.js';
import type { SessionOutcome } from './crash-loop.js';
import type { InputDesk } from './input-desk.js';
import { type StateTarget, writeState } from './state-write.js';

export interface ReaderParts {
  readonly desk: InputDesk;
  readonly conversation: Conversation;
  readonly slot: ClaudeSlot;
  readonly target: StateTarget;
  /** The session was started with a first task (claude is busy with it from the start). */
  readonly task: boolean;
  /** The session began by resuming a conversation. */
  readonly resumed: boolean;
  /** How the session ends, once something decided that it is to end. */
  readonly ending: () => SessionOutcome | null;
}

/**
 * What the hooks say besides what the supervisor makes of them: which conversation claude is on,
 * and when it is at its prompt (told to the input desk). One per session.
 */
export class HookReader {
  /** agentbox typed /clear (an abort): the new session id Claude Code starts is not adopted. */
  private ownClear = false;
  /** Claude was given work since it started (a first task, or a prompt): not idle at its prompt. */
  private busySinceStart = false;

  constructor(private readonly parts: ReaderParts) {}

  /** A new claude is starting. */
  reset(): void {
    this.ownClear = false;
    this.busySinceStart = false;
  }

  /** agentbox typed /clear itself: once it has taken, claude is asked to exit. */
  clearTyped(): void {
    this.ownClear = true;
  }

  observe(event: string, input: HookInput): void {
    const { desk, conversation } = this.parts;
    conversation.observe(input);
    if (event === 'SessionStart') this.sessionStart(input);
    else if (event === 'UserPromptSubmit' || event === 'PreToolUse' || event === 'PostToolUse')
      desk.working();
    if (event === 'UserPromptSubmit') {
      desk.busy();
      this.busySinceStart = true;
    }
  }

  private sessionStart(input: HookInput): void {
    const { desk, slot } = this.parts;
    const id = typeof input.session_id === 'string' ? input.session_id : null;
    const source = typeof input.source === 'string' ? input.source : '';
    if (source === 'compact' && !desk.isIdle) {
      // A compaction in the middle of a turn: the turn goes on, its Stop will come. Until then
      // (or until the screen shows the prompt again, for a /compact that ends with no Stop).
      if (id) this.adopt(id, source);
      desk.compactMidTurn();
      return;
    }
    if (id && !(source === 'clear' && this.ownClear)) this.adopt(id, source);
    desk.whenReady(() => {
      // The clear an abort typed has taken: now claude is asked to exit by itself.
      if (source === 'clear' && this.ownClear && this.parts.ending()?.kind === 'aborted') slot.askExit();
      else if (!this.busySinceStart) desk.becomeIdle();
    });
    this.busySinceStart = source === 'startup' && this.parts.task && !this.parts.resumed;
  }

  private adopt(id: string, source: string): void {
    const { conversation, target } = this.parts;
    if (!conversation.adopt(id)) return;
    target.log.write('session_id', { id, source });
    void writeState(target, 'session_id', { session_id: id }, { event: 'session', detail: source });
  }
}
