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
    return text
      .split('\n')
      .filter(Boolean)
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as Record<string, unknown>];
        } catch {
          return [];
        }
      });
  }
}
