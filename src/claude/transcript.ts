import fs from 'node:fs';
import path from 'node:path';

/**
 * Claude Code's session transcripts: `<config dir>/projects/<project>/<session id>.jsonl`. Whether
 * one holds a conversation decides if `--resume <id>` can work (it exits 1 otherwise).
 */

/** Claude Code's config folder for an environment: CLAUDE_CONFIG_DIR, else ~/.claude. */
export function claudeConfigDir(env: Readonly<Record<string, string | undefined>>, home: string): string {
  return env.CLAUDE_CONFIG_DIR ?? path.join(env.HOME ?? home, '.claude');
}

/** Finds `<configDir>/projects/<any project>/<id>.jsonl`, Claude Code's transcript of a session. */
export function findTranscript(configDir: string, sessionId: string): string | null {
  const projects = path.join(configDir, 'projects');
  let dirs: string[];
  try {
    dirs = fs.readdirSync(projects);
  } catch {
    return null;
  }
  for (const dir of dirs) {
    const file = path.join(projects, dir, `${sessionId}.jsonl`);
    if (fs.existsSync(file)) return file;
  }
  return null;
}

/** True when a transcript holds at least one user or assistant message (not only metadata). */
export function transcriptHasMessages(file: string): boolean {
  let content: string;
  try {
    content = fs.readFileSync(file, 'utf8');
  } catch {
    return false;
  }
  return content.split('\n').some((line) => {
    if (!line.includes('"message"')) return false;
    try {
      const entry = JSON.parse(line) as { type?: unknown };
      return entry.type === 'user' || entry.type === 'assistant';
    } catch {
      // A line cut short by the crash.
      return false;
    }
  });
}
