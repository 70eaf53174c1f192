import type { Terminal } from '../context.js';
import type { SessionLog } from './log.js';

/**
 * What a full-screen claude may leave switched on when it dies without cleaning up (kill -9):
 * the alternate screen, a hidden cursor, mouse reporting, bracketed paste, focus events, the
 * kitty keyboard protocol. Written after every session so the person's terminal is usable again.
 */
export const TERMINAL_RESET =
  '\x1b[?1049l\x1b[?25h\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?2004l\x1b[?1004l\x1b[<u\x1b[0m';

/** Where the person's keys and window size go (the claude of the moment). */
export interface TerminalSink {
  key(data: Buffer | string): void;
  resize(cols: number, rows: number): void;
}

/**
 * Puts the person's terminal in raw mode and copies its keys and window size to `sink`. Returns
 * the undo: the terminal back to cooked mode, reset, and its input paused.
 */
export function linkTerminal(terminal: Terminal, sink: TerminalSink, log: SessionLog): () => void {
  const onKey = (data: Buffer | string) => sink.key(data);
  terminal.input.on('data', onKey);
  const unsubscribe = terminal.onResize(() => {
    const { cols, rows } = terminal.size();
    sink.resize(cols, rows);
    log.write('resize', { cols, rows });
  });
  terminal.setRawMode(true);
  return () => {
    unsubscribe();
    terminal.input.off('data', onKey);
    terminal.setRawMode(false);
    terminal.output.write(TERMINAL_RESET);
    // A flowing stdin keeps Node alive after the session.
    terminal.input.pause();
  };
}
