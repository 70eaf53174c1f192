import path from 'node:path';

/** Where a run's control socket goes: in its folder, or a short path when that one is too long for a Unix socket. */
export function socketPathFor(runDir: string, runId: string, tmpdir: string): string {
  const inRun = path.join(runDir, 'supervisor.sock');
  // NOTE: sun_path holds 108 bytes on Linux (104 on macOS), terminating NUL included.
  return Buffer.byteLength(inRun) < 100 ? inRun : path.join(tmpdir, `agentbox-${runId}.sock`);
}
