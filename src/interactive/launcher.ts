import type { PtyExit } from '../process/owned-pty.js';
import type { ClaudeSlot } from './claude-slot.js';
import type { Conversation } from './conversation.js';
import type { LaunchMode, LoopHost, SessionOutcome } from './crash-loop.js';
import type { HookReader } from './hook-reader.js';
import type { InputDesk } from './input-desk.js';
import type { SessionDeps } from './session-deps.js';
import { type StateTarget, writeState } from './state-write.js';

/** The parts of a session the crash loop works through. */
export interface LauncherParts {
  readonly deps: SessionDeps;
  readonly conversation: Conversation;
  readonly reader: HookReader;
  readonly desk: InputDesk;
  readonly slot: ClaudeSlot;
  readonly target: StateTarget;
  readonly ending: () => SessionOutcome | null;
  readonly takeRestart: () => LaunchMode | null;
}

/** How a session's crash loop starts each claude, asks the person, and records each exit. */
export function launcher(parts: LauncherParts): LoopHost {
  const { terminal } = parts.deps;
  return {
    launch: (mode, first) => launch(parts, mode, first),
    ending: parts.ending,
    takeRestart: parts.takeRestart,
    askRestart: async () => {
      terminal.setRawMode(false);
      const again = await parts.deps.askRestart();
      terminal.setRawMode(true);
      return again;
    },
    recordExit: (exit, state) =>
      writeState(
        parts.target,
        'claude_exit',
        { claude_pid: null, claude_pid_start: null },
        { event: 'claude_exit', detail: `${exit.code ?? exit.signal} → ${state}` },
      ),
  };
}

/** Starts one claude (resuming the conversation when it can) and waits for it to exit. */
async function launch(
  parts: LauncherParts,
  mode: LaunchMode,
  first: boolean,
): Promise<{ exit: PtyExit; spawnedAt: number }> {
  const { deps, conversation, desk } = parts;
  if (mode === 'fresh' && !first) conversation.renew();
  // NOTE: a conversation with nothing to resume starts afresh under a new id: --session-id of an
  // id already in use exits 1 as well.
  if (mode === 'resume' && !conversation.resumable()) {
    deps.log.write('resume_unavailable', { session: conversation.id });
    mode = 'fresh';
    conversation.renew();
  }
  parts.reader.reset();
  desk.reset();
  const sessionId = conversation.id;
  const prompt = first && mode === 'fresh' ? deps.task : undefined;
  const { args, env } = deps.launch({ sessionId, resume: mode === 'resume', prompt });
  const onData = (data: string) => {
    deps.terminal.output.write(data);
    desk.output(data);
  };
  const ended = await parts.slot.run({ mode, sessionId, args, env, ...deps.terminal.size(), onData });
  desk.reset();
  return ended;
}
