import os from 'node:os';
import path from 'node:path';
import { claudeConfigDir } from '../claude/transcript.js';
import type { CommandContext } from '../context.js';
import { readMeta, readRun, runIdOf, updateState } from '../ledger/index.js';
import type { RunContext } from '../run/begin/context.js';
import { renderEndReport } from '../run/end/report.js';
import { writeAtomic } from '../util/fs.js';
import { terminalText } from '../util/terminal-text.js';
import type { SessionLog } from './log.js';
import type { SessionOutcome } from './session.js';
import { copySessionTranscript } from './transcript-copy.js';

// How a session ends: its outcome recorded in the ledger and told to the person, and the question
// asked after a clean exit.

/** Records how the session ended (DONE, ABORTED or CRASHED) and says so; returns the exit code. */
export async function finish(
  ctx: CommandContext,
  rc: RunContext,
  name: string,
  outcome: SessionOutcome,
  log: SessionLog,
): Promise<number> {
  log.write('session_end', { outcome: outcome.kind });
  const end = new Date().toISOString();
  await writeSessionReport(rc, name, outcome);
  // Before the state says it ended: whoever reads the ended run finds the transcript there.
  const run = readRun(rc.ledger, name);
  copySessionTranscript(run.dir, claudeConfigDir(ctx.env, os.homedir()), run.state?.session_id ?? null);
  switch (outcome.kind) {
    case 'halted':
      await updateState(
        rc.ledger,
        name,
        {
          status: 'CRASHED',
          ended_at: end,
          claude_pid: null,
          claude_pid_start: null,
          failure: { kind: 'crashed', message: outcome.message },
        },
        { event: 'halted' },
      );
      ctx.io.err(
        `\r\nagentbox: ${terminalText(outcome.message)}; the session is halted and will not be restarted.\n  → when the cause is fixed, resume it: agentbox start --resume ${runIdOf(name)}\n`,
      );
      return 1;
    case 'aborted':
      await updateState(
        rc.ledger,
        name,
        {
          status: 'ABORTED',
          ended_at: end,
          claude_pid: null,
          claude_pid_start: null,
          failure: { kind: 'agent_abort', message: outcome.reason },
        },
        { event: 'aborted' },
      );
      ctx.io.err(
        `\r\nagentbox: the supervisor aborted the session: ${terminalText(outcome.reason)}\n  → ${resumeHint(name)}\n`,
      );
      return 1;
    default:
      await updateState(
        rc.ledger,
        name,
        { status: 'DONE', ended_at: end, claude_pid: null, claude_pid_start: null },
        { event: outcome.kind === 'stopped' ? `stopped by ${outcome.by}` : 'quit' },
      );
      // The last thing shown: agentbox's way back in, not Claude Code's own `claude --resume`.
      ctx.io.out(`\r\nsession ${name} ended.\n  → ${resumeHint(name)}\n`);
      return 0;
  }
}

/** How to take a session up again (its short id), for the end of a session. Pure. */
export const resumeHint = (name: string): string =>
  `take it up again with: agentbox start --resume ${runIdOf(name)}`;

/** What `agentbox start` says before claude takes the screen. Pure. */
export function sessionBanner(name: string, id: string): string {
  return [
    `agentbox: session ${name}`,
    `  from another terminal: agentbox state ${id} · agentbox inject ${id} "<text>" · agentbox stop ${id}`,
  ].join('\n');
}

/** The session's report.md, written before its state says it ended (as every run's is). */
export async function writeSessionReport(
  rc: RunContext,
  name: string,
  outcome: SessionOutcome,
): Promise<void> {
  const dir = path.join(rc.ledger.runsDir, name);
  const meta = readMeta(dir);
  if (!meta) return;
  const [status, detail] =
    outcome.kind === 'halted'
      ? ['CRASHED', `crashed: ${outcome.message}`]
      : outcome.kind === 'aborted'
        ? ['ABORTED', `agent_abort: ${outcome.reason}`]
        : ['DONE', outcome.kind === 'stopped' ? `stopped by ${outcome.by}` : 'the person quit'];
  const next = `Its log is \`supervisor.log\`; take it up again with \`agentbox start --resume ${meta.run_id}\`.`;
  await writeAtomic(path.join(dir, 'report.md'), renderEndReport({ meta, status, detail, next }));
}

/** Asks one question on the terminal and reads one key: "r" means yes. */
export function askOneKey(
  terminal: NonNullable<CommandContext['terminal']>,
  question: string,
): Promise<boolean> {
  terminal.output.write(question);
  terminal.setRawMode(true);
  return new Promise((resolve) => {
    const onData = (data: Buffer | string) => {
      terminal.input.off('data', onData);
      const key = (typeof data === 'string' ? data : data.toString('utf8')).toLowerCase();
      terminal.output.write('\r\n');
      resolve(key.startsWith('r'));
    };
    terminal.input.on('data', onData);
  });
}
