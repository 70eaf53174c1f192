import pc from 'picocolors';
import type { Io } from '../context.js';

/** Colours that switch off when the output is not a terminal or NO_COLOR is set. */
export function styler(io: Io) {
  const c = pc.createColors(io.color);
  return {
    ok: (s: string) => c.green(s),
    warn: (s: string) => c.yellow(s),
    bad: (s: string) => c.red(s),
    dim: (s: string) => c.dim(s),
    bold: (s: string) => c.bold(s),
    cyan: (s: string) => c.cyan(s),
  };
}

export type Styler = ReturnType<typeof styler>;
