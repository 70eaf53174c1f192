import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { findTranscript, transcriptHasMessages } from '../claude/transcript.js';
import type { HookInput } from '../endpoint/server.js';

/** Which Claude Code conversation the session is on, and whether `--resume` can take it up again. */
export class Conversation {
  private current: string;
  /** Its transcript, as the hooks name it. */
  private transcriptPath: string | null = null;

  constructor(
    /** Claude Code's config folder: where transcripts live when no hook has named one. */
    private readonly claudeConfigDir: string,
    id: string | null | undefined,
  ) {
    this.current = id ?? randomUUID();
  }

  get id(): string {
    return this.current;
  }

  /** A hook about the current conversation names its transcript. */
  observe(input: HookInput): void {
    if (typeof input.transcript_path === 'string' && input.session_id === this.current)
      this.transcriptPath = input.transcript_path;
  }

  /** Claude Code moved to conversation `id` (a /clear, a compaction); false when it is the same one. */
  adopt(id: string): boolean {
    if (id === this.current) return false;
    this.current = id;
    this.transcriptPath = null;
    return true;
  }

  /** A new conversation under a new id (a fresh claude). */
  renew(): void {
    this.current = randomUUID();
    this.transcriptPath = null;
  }

  /**
   * NOTE: --resume of an id whose transcript holds no message exits 1 ("No conversation found"):
   * a claude killed before its first message reached the transcript has nothing to resume.
   */
  resumable(): boolean {
    const file =
      this.transcriptPath && fs.existsSync(this.transcriptPath)
        ? this.transcriptPath
        : findTranscript(this.claudeConfigDir, this.current);
    return file !== null && transcriptHasMessages(file);
  }
}
