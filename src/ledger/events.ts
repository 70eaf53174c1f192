import fs from 'node:fs';
import path from 'node:path';
import { appendNoFollow } from '../util/append.js';

/**
 * The run's own log of what its supervisor saw and decided: `events.jsonl` in the run folder, one
 * JSON object per line, appended with a single write each.
 */
export class EventLog {
  readonly file: string;

  constructor(runDir: string) {
    this.file = path.join(runDir, 'events.jsonl');
  }

  append(entry: Record<string, unknown>): void {
    try {
      appendNoFollow(this.file, `${JSON.stringify({ ts: new Date().toISOString(), ...entry })}\n`);
    } catch {
      // A full or read-only disk must not take the run down with it; state.json reports the end.
    }
  }

  read(): Record<string, unknown>[] {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch {
      return [];
    }
    return eventLines(text);
  }
}

/** The events of an events.jsonl text: each line that is a JSON object; anything else is skipped. Pure. */
export function eventLines(text: string): Record<string, unknown>[] {
  return text.split('\n').flatMap((line) => {
    if (!line) return [];
    try {
      const e: unknown = JSON.parse(line);
      return e && typeof e === 'object' && !Array.isArray(e) ? [e as Record<string, unknown>] : [];
    } catch {
      return [];
    }
  });
}
