import path from 'node:path';

/** Where a run's control socket goes: in its folder, or a short path when that one is too long for a Unix socket. */
export function socketPathFor(runDir: string, runId: string, tmpdir: string): string {
  const inRun = path.join(runDir, 'supervisor.sock');
  // NOTE: sun_path holds 108 bytes on Linux (104 on macOS), terminating NUL included.
  return Buffer.byteLength(inRun) < 100 ? inRun : path.join(tmpdir, `agentbox-${runId}.sock`);
}

/**
 * The control socket a run's state records, when it is one of the places socketPathFor puts one
 * (`<run folder>/supervisor.sock`, or `agentbox-<id>.sock` in a temp folder); else null.
 *
 * NOTE: state.json is a file of the ledger, which a cloned repository can carry (`.agents/` added
 * with `git add -f`): a planted interactive run's `socket_path` named any file, which
 * `agentbox start --resume` removed as a stale socket (and the page's session view connected to).
 */
export function recordedSocket(
  runDir: string,
  runId: string,
  recorded: string | null | undefined,
): string | null {
  if (!recorded) return null;
  if (recorded === path.join(runDir, 'supervisor.sock')) return recorded;
  return path.isAbsolute(recorded) && path.basename(recorded) === `agentbox-${runId}.sock` ? recorded : null;
}
