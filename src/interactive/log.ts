import { appendNoFollow } from '../util/append.js';

/** `key=value`, quoting values that would not read back as one token. Pure. */
export function formatFields(fields: Record<string, unknown>): string {
  return Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => {
      const text = v === null ? 'null' : typeof v === 'string' ? v : JSON.stringify(v);
      return `${k}=${/^[^\s"=]+$/.test(text) ? text : JSON.stringify(text)}`;
    })
    .join(' ');
}

/** One log line: `[<epoch seconds>] [supervisor] <event> key=value …`. Pure. */
export function logLine(epochMs: number, event: string, fields: Record<string, unknown> = {}): string {
  const rest = formatFields(fields);
  return `[${Math.floor(epochMs / 1000)}] [supervisor] ${event}${rest ? ` ${rest}` : ''}\n`;
}

/** The session's log (`<run>/supervisor.log`), appended one whole line at a time. */
export class SessionLog {
  constructor(
    readonly file: string,
    private readonly now: () => number = Date.now,
  ) {}

  write(event: string, fields: Record<string, unknown> = {}): void {
    try {
      appendNoFollow(this.file, logLine(this.now(), event, fields));
    } catch {
      // The log must never take the session down.
    }
  }
}
