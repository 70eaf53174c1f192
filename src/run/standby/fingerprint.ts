import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { findTranscript } from '../../claude/transcript.js';
import { git } from '../../git/exec.js';

/*
 * What a claude reads when it starts and keeps for its session: the session's transcript, the
 * instructions and settings around its folder (CLAUDE.md, .claude/, .mcp.json, the user's), and
 * the git status it is told of. A standby (src/run/standby/) started before its revision is used
 * only while all of it is as it was: taken before the standby starts, compared when it is claimed.
 */

/** The files and folders Claude Code reads by itself at its start, in a folder and its config folder. */
const READ_AT_START = [
  'CLAUDE.md',
  'CLAUDE.local.md',
  '.mcp.json',
  '.claude/CLAUDE.md',
  '.claude/settings.json',
  '.claude/settings.local.json',
  '.claude/commands',
  '.claude/agents',
  '.claude/skills',
];
const IN_CONFIG_DIR = ['CLAUDE.md', 'settings.json', 'settings.local.json', 'commands', 'agents', 'skills'];

/** Where claude starts and every folder above it, to the root. Pure. */
function foldersUp(dir: string): string[] {
  const out = [dir];
  for (let at = dir; path.dirname(at) !== at; at = path.dirname(at)) out.push(path.dirname(at));
  return out;
}

/** A file's path, identity and last change, or that it is not there. */
export function stamp(file: string): string {
  try {
    const s = fs.statSync(file);
    return `${file} ${s.ino} ${s.size} ${s.mtimeMs}`;
  } catch {
    return `${file} -`;
  }
}

/** How much of a transcript's end is read for its last turn. */
const TAIL_BYTES = 256 * 1024;

/**
 * The session's last message: its uuid, from the transcript's end. Not the file's size or time:
 * a claude resuming the session adds lines of its own when it starts (`tools-used`, measured), but
 * a message only when a turn is sent. When none is found in the end (one line longer than it), the
 * file's size and time stand in.
 */
function lastTurn(file: string): string {
  let text: string;
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      const buffer = Buffer.alloc(Math.min(size, TAIL_BYTES));
      fs.readSync(fd, buffer, 0, buffer.length, size - buffer.length);
      text = buffer.toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return `${file} unreadable`;
  }
  const lines = text.split('\n');
  for (let i = lines.length - 1; i > 0; i--) {
    try {
      const entry = JSON.parse(lines[i]!) as { type?: unknown; uuid?: unknown };
      if ((entry.type === 'user' || entry.type === 'assistant') && typeof entry.uuid === 'string')
        return `${file} ${entry.uuid}`;
    } catch {
      // Not a whole line (the first, cut by the tail; one being written).
    }
  }
  return stamp(file);
}

/**
 * The fingerprint of what a claude started in `launchDir` with `env` (its own environment: its
 * config folder, its git) reads at its start, for session `sessionId`.
 */
export async function startupFingerprint(launch: {
  readonly launchDir: string;
  readonly env: Readonly<Record<string, string>>;
  readonly configDir: string;
  readonly sessionId: string;
}): Promise<string> {
  const { launchDir, env, configDir } = launch;
  const files = [
    ...foldersUp(launchDir).flatMap((dir) => READ_AT_START.map((name) => path.join(dir, name))),
    ...IN_CONFIG_DIR.map((name) => path.join(configDir, name)),
  ];
  const transcript = findTranscript(configDir, launch.sessionId);
  const status = await git(['status', '--porcelain=v2', '--branch', '-z', '--untracked-files=all'], {
    cwd: launchDir,
    env,
  }).catch((error: unknown) => `git status failed: ${(error as Error).message}`);
  const hash = createHash('sha256');
  for (const line of [...files.map(stamp), transcript ? lastTurn(transcript) : 'no transcript', status])
    hash.update(`${line}\n`);
  return hash.digest('hex');
}
