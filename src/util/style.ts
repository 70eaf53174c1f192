import { createRequire } from 'node:module';
import type Picocolors from 'picocolors';
import type { Io } from '../context.js';

const plain = (s: string) => s;
const PLAIN = { ok: plain, warn: plain, bad: plain, dim: plain, bold: plain, cyan: plain };

/**
 * Colours that switch off when the output is not a terminal or NO_COLOR is set. NOTE: picocolors
 * is loaded only for colour: loading it reads process.stdout, which node makes on first use (for
 * a pipe ~4 ms of every `agentbox status | …`).
 */
export function styler(io: Io): typeof PLAIN {
  if (!io.color) return PLAIN;
  const pc = createRequire(import.meta.url)('picocolors') as typeof Picocolors;
  const c = pc.createColors(true);
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
